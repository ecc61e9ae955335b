// The "Memories" view in the Explorer: scopes, then folders, then memories; in a
// multi-root window, each served workspace folder first.
import * as os from "node:os";
import * as vscode from "vscode";
import { displayPath, groupMemories, type FolderGroup, type Places, type ScopeGroup } from "./format";
import { workspaceRoot } from "./interpreter";
import type { MemoryInfo } from "./protocol";
import type { MemoryServers, Served } from "./servers";
import { isShadowed, withShadowed } from "./shadowed";

export type MemoryNode =
  | { kind: "root"; served: Served }
  | { kind: "scope"; group: ScopeGroup; served: Served }
  | { kind: "folder"; group: FolderGroup; scope: ScopeGroup; served: Served }
  | { kind: "memory"; memory: MemoryInfo; served: Served };

/** Where paths are shown from: a workspace folder (the first by default) and home. */
export function places(folder: vscode.WorkspaceFolder | undefined = workspaceRoot()): Places {
  return { root: folder?.uri.scheme === "file" ? folder.uri.fsPath : undefined, home: os.homedir() };
}

export class MemoriesTree implements vscode.TreeDataProvider<MemoryNode>, vscode.Disposable {
  private readonly changeEmitter = new vscode.EventEmitter<MemoryNode | undefined>();
  readonly onDidChangeTreeData = this.changeEmitter.event;
  private readonly subscription: vscode.Disposable;
  private catalogSubscriptions: vscode.Disposable[] = [];
  private pendingRefresh: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly servers: MemoryServers) {
    this.subscription = servers.onDidChange(() => this.follow());
    this.follow();
  }

  /** Listen to the catalogs of the folders served now. */
  private follow(): void {
    for (const subscription of this.catalogSubscriptions) {
      subscription.dispose();
    }
    this.catalogSubscriptions = this.servers.all.map((served) => served.catalog.onDidChange(() => this.refresh()));
    this.refresh();
  }

  /** Redraw once for a burst of changes (servers starting, several catalogs at once). */
  private refresh(): void {
    if (this.pendingRefresh !== undefined) {
      return;
    }
    this.pendingRefresh = setTimeout(() => {
      this.pendingRefresh = undefined;
      this.changeEmitter.fire(undefined);
    }, 50);
  }

  /** A folder's memories and those they shadow (faded), less those an earlier folder's
   * server lists (the global ones). */
  private own(served: Served): readonly MemoryInfo[] {
    const earlier = new Set<string>();
    for (const entry of this.servers.all) {
      if (entry === served) {
        break;
      }
      for (const memory of entry.catalog.memories) {
        earlier.add(memory.path);
      }
    }
    const memories = withShadowed(served.catalog.memories, served.catalog.folders);
    return earlier.size === 0 ? memories : memories.filter((memory) => !earlier.has(memory.path));
  }

  private scopes(served: Served): MemoryNode[] {
    return groupMemories(this.own(served), places(served.folder)).map((group) => ({
      kind: "scope",
      group,
      served,
    }));
  }

  getChildren(node?: MemoryNode): MemoryNode[] {
    if (node === undefined) {
      const all = this.servers.all;
      if (all.length === 1 && all[0] !== undefined) {
        return this.scopes(all[0]);
      }
      return all.map((served) => ({ kind: "root", served }));
    }
    if (node.kind === "root") {
      return this.scopes(node.served);
    }
    if (node.kind === "scope") {
      return node.group.folders.map((group) => ({ kind: "folder", group, scope: node.group, served: node.served }));
    }
    if (node.kind === "folder") {
      return node.group.memories.map((memory) => ({ kind: "memory", memory, served: node.served }));
    }
    return [];
  }

  // No TreeItem ids: VS Code then derives each row's handle from its label and place,
  // which cannot collide. With ids, a refresh that arrives while the previous one is
  // still fetching children registers an id twice ("Element with id ... is already
  // registered") and the view shows a mix of both (seen with two folders starting).
  getTreeItem(node: MemoryNode): vscode.TreeItem {
    if (node.kind === "root") {
      const folder = node.served.folder;
      const item = new vscode.TreeItem(folder?.name ?? "(no folder)", vscode.TreeItemCollapsibleState.Expanded);
      item.description = String(this.own(node.served).length);
      item.iconPath = new vscode.ThemeIcon("root-folder");
      item.contextValue = "root";
      item.tooltip = folder?.uri.fsPath;
      return item;
    }
    if (node.kind === "scope") {
      const count = node.group.folders.reduce((sum, folder) => sum + folder.memories.length, 0);
      const item = new vscode.TreeItem(node.group.label, vscode.TreeItemCollapsibleState.Expanded);
      item.description = String(count);
      item.contextValue = "scope";
      item.iconPath = new vscode.ThemeIcon(node.group.scope === "global" ? "globe" : "repo");
      item.tooltip =
        node.group.scope === "global"
          ? "Global memories: personal, outside the repository"
          : "Project memories: the primary folder and the additional folders";
      return item;
    }
    if (node.kind === "folder") {
      const item = new vscode.TreeItem(node.group.label, vscode.TreeItemCollapsibleState.Expanded);
      item.description = String(node.group.memories.length);
      item.resourceUri = vscode.Uri.file(node.group.folder);
      item.iconPath = vscode.ThemeIcon.Folder;
      item.contextValue = "folder";
      item.tooltip = node.group.folder;
      return item;
    }
    const memory = node.memory;
    // Under the Global heading the `global/` of a global memory's name says nothing new.
    const shown = memory.scope === "global" ? memory.name.replace(/^global\//, "") : memory.name;
    const item = new vscode.TreeItem(shown, vscode.TreeItemCollapsibleState.None);
    item.resourceUri = vscode.Uri.file(memory.path);
    if (isShadowed(memory)) {
      // Faded: lookup finds the other file, so a change by name would change that one;
      // it opens, and shows where it is.
      const by = displayPath(memory.shadowedBy, places(node.served.folder));
      item.iconPath = new vscode.ThemeIcon("note", new vscode.ThemeColor("disabledForeground"));
      item.description = `shadowed by ${by}`;
      item.contextValue = "memory.shadowed";
      const tooltip = new vscode.MarkdownString();
      tooltip.appendMarkdown(`**${memory.name}** (shadowed)\n\n`);
      tooltip.appendText(`${displayPath(memory.path, places(node.served.folder))}\nhidden by ${by}: lookup finds that one first`);
      item.tooltip = tooltip;
      item.command = { command: "memoryLs.openMemory", title: "Open Memory", arguments: [node] };
      return item;
    }
    item.iconPath = new vscode.ThemeIcon(memory.readOnly ? "lock" : "note");
    item.description = memory.tags.map((tag) => `#${tag}`).join(" ");
    // A name memory-ls would not create is otherwise an ordinary memory, offered a rename.
    item.contextValue = memory.readOnly ? "memory.readonly" : memory.validName ? "memory" : "memory.invalidname";
    const tooltip = new vscode.MarkdownString();
    tooltip.appendMarkdown(`**${memory.name}**\n\n`);
    tooltip.appendText(displayPath(memory.path, places(node.served.folder)));
    if (memory.tags.length > 0) {
      tooltip.appendText(`\ntags: ${memory.tags.join(", ")}`);
    }
    if (memory.updatedAt) {
      tooltip.appendText(`\nupdated: ${memory.updatedAt}`);
    }
    if (memory.readOnly) {
      tooltip.appendText("\nread-only");
    }
    item.tooltip = tooltip;
    item.command = { command: "memoryLs.openMemory", title: "Open Memory", arguments: [node] };
    return item;
  }

  dispose(): void {
    clearTimeout(this.pendingRefresh);
    this.subscription.dispose();
    for (const subscription of this.catalogSubscriptions) {
      subscription.dispose();
    }
    this.changeEmitter.dispose();
  }
}
