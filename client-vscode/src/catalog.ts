// The memories the server lists, kept fresh: reloaded when the server starts, after
// each command that writes, and when a file in a memory folder changes on disk.
import * as fs from "node:fs";
import * as os from "node:os";
import * as vscode from "vscode";
import { resolvedStoreSettings } from "./projectConfig";
import type { ConfigurationResult, MemoryInfo } from "./protocol";
import { currentServerSettings, errorText, type MemoryServer } from "./server";
import { memoryFolders, type Environment } from "./settings";

function isDirectory(candidate: string): boolean {
  try {
    return fs.statSync(candidate).isDirectory();
  } catch {
    return false;
  }
}

const RELOAD_DELAY_MS = 250;
// After a settings change the server re-reads its configuration first (it pulls it).
const SETTINGS_RELOAD_DELAY_MS = 1000;

export class MemoryCatalog implements vscode.Disposable {
  private current: MemoryInfo[] = [];
  private loadedOnce = false;
  private timer: NodeJS.Timeout | undefined;
  private watchers: vscode.FileSystemWatcher[] = [];
  private watched = "";
  // The store's folders as the server resolved them (the project file's too).
  private storeFolders: string[] = [];
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  private readonly disposables: vscode.Disposable[] = [];
  /** Fires after each reload (the memories may or may not differ). */
  readonly onDidChange = this.changeEmitter.event;

  constructor(private readonly server: MemoryServer) {
    this.disposables.push(
      this.changeEmitter,
      server.onDidChangeState((state) => {
        if (state.kind === "running") {
          this.reload();
        } else if (state.kind === "stopped") {
          this.current = [];
          this.changeEmitter.fire();
        }
      }),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration("memoryLs", server.folder)) {
          this.watch();
          this.reload(SETTINGS_RELOAD_DELAY_MS);
        }
      }),
    );
    this.watch();
  }

  get memories(): readonly MemoryInfo[] {
    return this.current;
  }

  /** The store's folders as the server resolved them (empty until it said). */
  get folders(): readonly string[] {
    return this.storeFolders;
  }

  /** Whether the list was loaded at least once from a running server. */
  get loaded(): boolean {
    return this.loadedOnce;
  }

  /** Reload soon (changes that come in bursts cause one reload). */
  reload(delay = RELOAD_DELAY_MS): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.reloadNow(), delay);
  }

  async reloadNow(): Promise<void> {
    clearTimeout(this.timer);
    if (this.server.state.kind !== "running") {
      return;
    }
    try {
      const result = await this.server.call("memory.list", { scope: "all" });
      this.current = result.memories;
      this.loadedOnce = true;
      this.watch();
    } catch (error) {
      this.server.output.warn(`Listing memories failed: ${errorText(error)}`);
    }
    this.changeEmitter.fire();
  }

  /** The folders of the server's configuration in effect (`memory.configuration`), to watch. */
  setStoreFolders(configuration: Pick<ConfigurationResult, "settings" | "root">): void {
    const environment: Environment = { root: configuration.root, home: os.homedir(), env: process.env, isDirectory };
    this.storeFolders = memoryFolders(resolvedStoreSettings(configuration), environment).map(
      (memoryFolder) => memoryFolder.path,
    );
    this.watch();
  }

  /** Watch the configured memory folders, the server's, and those the list shows. */
  private watch(): void {
    const folder = this.server.folder;
    const root = folder?.uri.scheme === "file" ? folder.uri.fsPath : process.cwd();
    const paths = new Set(
      memoryFolders(currentServerSettings(folder), { root, home: os.homedir(), env: process.env, isDirectory }).map(
        (memoryFolder) => memoryFolder.path,
      ),
    );
    for (const storeFolder of this.storeFolders) {
      paths.add(storeFolder);
    }
    for (const memory of this.current) {
      paths.add(memory.folder);
    }
    const key = [...paths].sort().join("\n");
    if (key === this.watched) {
      return;
    }
    this.watched = key;
    this.disposeWatchers();
    for (const path of paths) {
      const watcher = vscode.workspace.createFileSystemWatcher(
        new vscode.RelativePattern(vscode.Uri.file(path), "**/*.md"),
      );
      watcher.onDidCreate(() => this.reload());
      watcher.onDidDelete(() => this.reload());
      watcher.onDidChange(() => this.reload());
      this.watchers.push(watcher);
    }
  }

  private disposeWatchers(): void {
    for (const watcher of this.watchers) {
      watcher.dispose();
    }
    this.watchers = [];
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.disposeWatchers();
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }
}
