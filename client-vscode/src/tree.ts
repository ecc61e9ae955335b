// The "Memories" view in the Explorer: scopes, then folders, then memories.
import * as os from "node:os";
import * as vscode from "vscode";
import type { MemoryCatalog } from "./catalog";
import { displayPath, groupMemories, type FolderGroup, type Places, type ScopeGroup } from "./format";
import { workspaceRoot } from "./interpreter";
import type { MemoryInfo } from "./protocol";

export type MemoryNode =
  | { kind: "scope"; group: ScopeGroup }
  | { kind: "folder"; group: FolderGroup; scope: ScopeGroup }
  | { kind: "memory"; memory: MemoryInfo };

export function places(): Places {
  const folder = workspaceRoot();
  return { root: folder?.uri.scheme === "file" ? folder.uri.fsPath : undefined, home: os.homedir() };
}

export class MemoriesTree implements vscode.TreeDataProvider<MemoryNode>, vscode.Disposable {
  private readonly changeEmitter = new vscode.EventEmitter<MemoryNode | undefined>();
  readonly onDidChangeTreeData = this.changeEmitter.event;
  private readonly subscription: vscode.Disposable;
  private groups: ScopeGroup[] = [];

  constructor(catalog: MemoryCatalog) {
    this.subscription = catalog.onDidChange(() => {
      this.groups = groupMemories(catalog.memories, places());
      this.changeEmitter.fire(undefined);
    });
  }

  getChildren(node?: MemoryNode): MemoryNode[] {
    if (node === undefined) {
      return this.groups.map((group) => ({ kind: "scope", group }));
    }
    if (node.kind === "scope") {
      return node.group.folders.map((group) => ({ kind: "folder", group, scope: node.group }));
    }
    if (node.kind === "folder") {
      return node.group.memories.map((memory) => ({ kind: "memory", memory }));
    }
    return [];
  }

  getTreeItem(node: MemoryNode): vscode.TreeItem {
    if (node.kind === "scope") {
      const count = node.group.folders.reduce((sum, folder) => sum + folder.memories.length, 0);
      const item = new vscode.TreeItem(node.group.label, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `scope:${node.group.scope}`;
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
      item.id = `folder:${node.group.folder}`;
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
    item.id = `memory:${memory.path}`;
    item.resourceUri = vscode.Uri.file(memory.path);
    item.iconPath = new vscode.ThemeIcon(memory.readOnly ? "lock" : "note");
    item.description = memory.tags.map((tag) => `#${tag}`).join(" ");
    item.contextValue = memory.readOnly ? "memory.readonly" : "memory";
    const tooltip = new vscode.MarkdownString();
    tooltip.appendMarkdown(`**${memory.name}**\n\n`);
    tooltip.appendText(displayPath(memory.path, places()));
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
    this.subscription.dispose();
    this.changeEmitter.dispose();
  }
}
