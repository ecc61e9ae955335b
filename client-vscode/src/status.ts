// The status bar item: how many memories there are, and whether the server runs.
import * as vscode from "vscode";
import type { MemoryCatalog } from "./catalog";
import { countLabel } from "./format";
import type { MemoryServer } from "./server";

export class MemoryStatus implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscriptions: vscode.Disposable[];

  constructor(
    private readonly server: MemoryServer,
    private readonly catalog: MemoryCatalog,
  ) {
    this.item = vscode.window.createStatusBarItem("memoryLs.status", vscode.StatusBarAlignment.Right, 100);
    this.item.name = "Memory LS";
    this.subscriptions = [server.onDidChangeState(() => this.update()), catalog.onDidChange(() => this.update())];
    this.update();
    this.item.show();
  }

  private update(): void {
    const state = this.server.state;
    const item = this.item;
    item.backgroundColor = undefined;
    switch (state.kind) {
      case "starting":
        item.text = "$(sync~spin) Memories";
        item.tooltip = "Memory LS: the language server is starting";
        item.command = "memoryLs.showOutput";
        break;
      case "running": {
        const count = this.catalog.memories.length;
        item.text = `$(book) ${countLabel(count)}`;
        item.tooltip = `Memory LS: the language server is running (${state.python}); ${countLabel(count)}. Click to open one.`;
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
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
    this.item.dispose();
  }
}
