// The status bar item: how many memories there are, and whether the server runs.
import * as vscode from "vscode";
import { countLabel } from "./format";
import type { MemoryServers } from "./servers";

export class MemoryStatus implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscription: vscode.Disposable;
  private subscriptions: vscode.Disposable[] = [];

  constructor(private readonly servers: MemoryServers) {
    this.item = vscode.window.createStatusBarItem("memoryLs.status", vscode.StatusBarAlignment.Right, 100);
    this.item.name = "Memory LS";
    this.subscription = servers.onDidChange(() => this.follow());
    this.follow();
    this.item.show();
  }

  /** Listen to every served folder's server and catalog. */
  private follow(): void {
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
    this.subscriptions = this.servers.all.flatMap(({ server, catalog }) => [
      server.onDidChangeState(() => this.update()),
      catalog.onDidChange(() => this.update()),
    ]);
    this.update();
  }

  private update(): void {
    const all = this.servers.all;
    if (all.length === 0) {
      return;
    }
    // A stopped server is what needs attention; else starting; else all run.
    const states = all.map(({ server }) => server.state);
    const state =
      states.find((candidate) => candidate.kind === "stopped") ??
      states.find((candidate) => candidate.kind === "starting") ??
      states[0];
    if (state === undefined) {
      return;
    }
    const item = this.item;
    item.backgroundColor = undefined;
    switch (state.kind) {
      case "starting":
        item.text = "$(sync~spin) Memories";
        item.tooltip = "Memory LS: the language server is starting";
        item.command = "memoryLs.showOutput";
        break;
      case "running": {
        // Every folder's memories, each once (each server lists the global folder too).
        const count = new Set(all.flatMap(({ catalog }) => catalog.memories.map((memory) => memory.path))).size;
        item.text = `$(book) ${countLabel(count)}`;
        const perFolder =
          all.length > 1
            ? ` (${all.map(({ folder, catalog }) => `${folder?.name ?? "(no folder)"}: ${catalog.memories.length}`).join(", ")})`
            : "";
        item.tooltip = `Memory LS: the language server is running (${state.python}); ${countLabel(count)}${perFolder}. Click to open one.`;
        item.command = "memoryLs.openMemory";
        break;
      }
      case "stopped":
        item.text = "$(error) Memories: server stopped";
        item.tooltip = `Memory LS: the language server is not running: ${state.reason}. Click to restart it.`;
        item.command = "memoryLs.restartServer";
        item.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
        break;
    }
  }

  dispose(): void {
    this.subscription.dispose();
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
    this.item.dispose();
  }
}
