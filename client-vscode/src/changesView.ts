// The "Recent Changes" view in the Explorer: who or what changed which memory when (the
// editor, an agent over MCP, the CLI, a tool writing files, git), from the server's
// journal. A click opens a diff of the content before the change against the content
// after it (or the file now); Revert and Mark Reviewed act on one change.
import * as vscode from "vscode";
import { displayPath } from "./format";
import type { MemoryServers, Served } from "./servers";
import { errorText } from "./server";
import { places } from "./tree";

export const VIEW_ID = "memoryLs.changes";
export const SCHEME = "memory-ls-journal";
const DID_CHANGE = "memoryLs/journal/didChange";
const LIMIT = 100;

/** One journal entry as `memoryLs/journal/recent` gives it. */
export interface JournalEntry {
  id: number;
  time: number;
  name: string;
  path: string;
  uri: string;
  action: string;
  kind: "created" | "modified" | "deleted" | "moved";
  source: string;
  reviewed: boolean;
  sizeBefore: number | null;
  sizeAfter: number | null;
  versionBefore: string | null;
  versionAfter: string | null;
  withheld: boolean;
  newName?: string;
  newPath?: string;
  newUri?: string;
}

interface RecentAnswer {
  entries: JournalEntry[];
  next: number | null;
  latest: number;
  unreviewed: number;
  ready: boolean;
}

interface EntryAnswer extends JournalEntry {
  before: string | null;
  after: string | null;
  afterFrom: "journal" | "current" | "withheld";
}

export interface ChangeNode {
  entry: JournalEntry;
  served: Served;
}

const KIND_ICONS: Record<JournalEntry["kind"], string> = {
  created: "diff-added",
  modified: "diff-modified",
  deleted: "diff-removed",
  moved: "diff-renamed",
};

/** Who made a change, as a person reads it. */
export function sourceLabel(source: string): string {
  if (source.startsWith("mcp:")) {
    return `agent (${source.slice(4)})`;
  }
  const names: Record<string, string> = {
    mcp: "agent (MCP)",
    editor: "editor",
    cli: "CLI",
    external: "external",
    git: "git",
    core: "library",
  };
  return names[source] ?? source;
}

function ago(seconds: number): string {
  const elapsed = Math.max(0, Date.now() / 1000 - seconds);
  if (elapsed < 60) {
    return "just now";
  }
  const steps: [number, string][] = [
    [86400, "d"],
    [3600, "h"],
    [60, "min"],
  ];
  for (const [size, unit] of steps) {
    if (elapsed >= size) {
      return `${Math.floor(elapsed / size)} ${unit} ago`;
    }
  }
  return "just now";
}

export class ChangesView
  implements vscode.TreeDataProvider<ChangeNode>, vscode.TextDocumentContentProvider, vscode.Disposable
{
  private readonly changeEmitter = new vscode.EventEmitter<ChangeNode | undefined>();
  readonly onDidChangeTreeData = this.changeEmitter.event;
  private readonly contentEmitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.contentEmitter.event;
  private readonly contents = new Map<string, string>();
  private subscriptions: vscode.Disposable[] = [];
  private readonly disposables: vscode.Disposable[] = [];
  private pendingRefresh: ReturnType<typeof setTimeout> | undefined;
  private unreviewed = 0;
  view: vscode.TreeView<ChangeNode> | undefined;

  constructor(private readonly servers: MemoryServers) {
    this.disposables.push(
      servers.onDidChange(() => this.follow()),
      this.changeEmitter,
      this.contentEmitter,
    );
    this.follow();
  }

  /** Refresh on each served folder's journal notification, and when servers start. */
  private follow(): void {
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
    this.subscriptions = this.servers.all.flatMap((served) => [
      served.server.onNotification(DID_CHANGE, () => this.refresh()),
      served.server.onDidChangeState(() => this.refresh()),
    ]);
    this.refresh();
  }

  refresh(): void {
    if (this.pendingRefresh !== undefined) {
      return;
    }
    this.pendingRefresh = setTimeout(() => {
      this.pendingRefresh = undefined;
      this.changeEmitter.fire(undefined);
    }, 100);
  }

  async getChildren(node?: ChangeNode): Promise<ChangeNode[]> {
    if (node !== undefined) {
      return [];
    }
    const answers = await Promise.all(
      this.servers.all.map(async (served) => {
        if (served.server.state.kind !== "running") {
          return { nodes: [], ready: false };
        }
        try {
          const answer = await served.server.request<RecentAnswer>("memoryLs/journal/recent", { limit: LIMIT });
          return { nodes: answer.entries.map((entry) => ({ entry, served })), ready: answer.ready };
        } catch (error) {
          served.server.output.warn(`Reading the change journal failed: ${errorText(error)}`);
          return { nodes: [], ready: true };
        }
      }),
    );
    const nodes = answers.flatMap((answer) => answer.nodes).sort((a, b) => b.entry.time - a.entry.time);
    // A global memory's change is in the journal of every server that serves it: once.
    const seen = new Set<string>();
    const unique = nodes.filter((node) => {
      const key = `${node.entry.path}\n${node.entry.versionBefore}\n${node.entry.versionAfter}`;
      return !seen.has(key) && seen.add(key) !== undefined;
    });
    this.unreviewed = unique.filter((node) => !node.entry.reviewed).length;
    if (this.view !== undefined) {
      this.view.badge =
        this.unreviewed > 0 ? { value: this.unreviewed, tooltip: `${this.unreviewed} changes not reviewed` } : undefined;
      // Until the server has read every memory once, a change cannot be compared yet.
      const ready = answers.every((answer) => answer.ready);
      this.view.message = ready ? undefined : "Reading the memories' current content…";
    }
    return unique;
  }

  getTreeItem(node: ChangeNode): vscode.TreeItem {
    const entry = node.entry;
    const label: vscode.TreeItemLabel = entry.reviewed
      ? { label: entry.name }
      : { label: entry.name, highlights: [[0, entry.name.length]] };
    const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.None);
    // The kind is the icon's; a move names where the memory went.
    const moved = entry.newName !== undefined ? `→ ${entry.newName} · ` : "";
    item.description = `${entry.reviewed ? "" : "● "}${moved}${sourceLabel(entry.source)} · ${ago(entry.time)}`;
    item.iconPath = new vscode.ThemeIcon(
      KIND_ICONS[entry.kind],
      entry.reviewed ? undefined : new vscode.ThemeColor("list.warningForeground"),
    );
    item.contextValue = entry.reviewed ? "change.reviewed" : "change.unreviewed";
    const tooltip = new vscode.MarkdownString();
    tooltip.appendMarkdown(`**${entry.name}** ${entry.kind} by ${sourceLabel(entry.source)}\n\n`);
    tooltip.appendText(`${new Date(entry.time * 1000).toLocaleString()}\n`);
    tooltip.appendText(displayPath(entry.newPath ?? entry.path, places(node.served.folder)));
    tooltip.appendText(`\n${entry.sizeBefore ?? "no file"} → ${entry.sizeAfter ?? "no file"} bytes`);
    if (entry.withheld) {
      tooltip.appendText("\nThe content before was withheld (it looked like it held a credential).");
    }
    tooltip.appendText(entry.reviewed ? "\nreviewed" : "\nnot reviewed yet");
    item.tooltip = tooltip;
    item.command = { command: "memoryLs.changes.openDiff", title: "Open Changes", arguments: [node] };
    return item;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? "";
  }

  /** A diff of the content before the change against the content after it. */
  async openDiff(node: ChangeNode): Promise<void> {
    const entry = node.entry;
    let answer: EntryAnswer;
    try {
      answer = await node.served.server.request<EntryAnswer>("memoryLs/journal/entry", { id: entry.id });
    } catch (error) {
      void vscode.window.showErrorMessage(`Memory LS: ${errorText(error)}`);
      return;
    }
    const base = entry.name.split("/").pop() ?? entry.name;
    const virtual = (side: string, text: string | null): vscode.Uri => {
      const uri = vscode.Uri.from({
        scheme: SCHEME,
        path: `/${entry.id}/${side}/${base}.md`,
        query: `entry=${entry.id}&side=${side}`,
      });
      this.contents.set(uri.toString(), text ?? "");
      this.contentEmitter.fire(uri);
      return uri;
    };
    const left = virtual("before", answer.before);
    const currentFile = answer.afterFrom === "current" && answer.after !== null;
    const right = currentFile ? vscode.Uri.parse(entry.newUri ?? entry.uri) : virtual("after", answer.after);
    const after = currentFile ? "now" : "after";
    const title = `${entry.name} (${sourceLabel(entry.source)}, ${ago(entry.time)}): before ↔ ${after}`;
    await vscode.commands.executeCommand("vscode.diff", left, right, title, { preview: true });
  }

  async revert(node: ChangeNode): Promise<void> {
    const entry = node.entry;
    try {
      await node.served.server.request("memoryLs/journal/revert", { id: entry.id });
      void vscode.window.showInformationMessage(
        `Memory LS: ${entry.name} has its content from before this change again (an undoable change itself).`,
      );
    } catch (error) {
      void vscode.window.showErrorMessage(`Memory LS: ${errorText(error)}`);
    }
    this.refresh();
  }

  async markReviewed(node: ChangeNode, reviewed = true): Promise<void> {
    await this.mark(node.served, { ids: [node.entry.id], reviewed });
  }

  async markAllReviewed(): Promise<void> {
    await Promise.all(this.servers.all.map((served) => this.mark(served, { all: true })));
  }

  private async mark(served: Served, params: Record<string, unknown>): Promise<void> {
    try {
      await served.server.request("memoryLs/journal/markReviewed", params);
    } catch (error) {
      void vscode.window.showErrorMessage(`Memory LS: ${errorText(error)}`);
    }
    this.refresh();
  }

  dispose(): void {
    clearTimeout(this.pendingRefresh);
    for (const disposable of [...this.subscriptions, ...this.disposables]) {
      disposable.dispose();
    }
  }
}

/** The Recent Changes view, its diff documents and its commands. */
export function registerChangesView(context: vscode.ExtensionContext, servers: MemoryServers): void {
  const view = new ChangesView(servers);
  const tree = vscode.window.createTreeView(VIEW_ID, { treeDataProvider: view });
  view.view = tree;
  const selected = (node: ChangeNode | undefined): ChangeNode | undefined => node ?? tree.selection[0];
  context.subscriptions.push(
    view,
    tree,
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, view),
    vscode.commands.registerCommand("memoryLs.changes.openDiff", async (node?: ChangeNode) => {
      const target = selected(node);
      if (target !== undefined) {
        await view.openDiff(target);
      }
    }),
    vscode.commands.registerCommand("memoryLs.changes.revert", async (node?: ChangeNode) => {
      const target = selected(node);
      if (target !== undefined) {
        await view.revert(target);
      }
    }),
    vscode.commands.registerCommand("memoryLs.changes.markReviewed", async (node?: ChangeNode) => {
      const target = selected(node);
      if (target !== undefined) {
        await view.markReviewed(target);
      }
    }),
    vscode.commands.registerCommand("memoryLs.changes.markUnreviewed", async (node?: ChangeNode) => {
      const target = selected(node);
      if (target !== undefined) {
        await view.markReviewed(target, false);
      }
    }),
    vscode.commands.registerCommand("memoryLs.changes.markAllReviewed", () => view.markAllReviewed()),
    vscode.commands.registerCommand("memoryLs.changes.refresh", () => view.refresh()),
  );
}
