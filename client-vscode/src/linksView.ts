// The "Memory Links" view in the Explorer: for the memory in the active editor, who links
// to it ("Linked from", each line that links) and what it links to ("Links to", broken
// links shown as such), from the server's `memory.links`; for another agent's file
// (CLAUDE.md, MEMORY.md, a topic file, a file a CLAUDE.md imports) also its imports and
// index links, and the files that import or index it. Follows the active editor, its
// edits and saves, and changes of the memories on disk.
import * as vscode from "vscode";
import { displayPath } from "./format";
import { lineSnippet, namesFile, sourceVerb } from "./linkLines";
import type { LinkLine, LinkSource, LinksResult, LinkTarget, LspRange } from "./protocol";
import { errorText, ServerCommandError } from "./server";
import type { MemoryServers, Served } from "./servers";
import { places } from "./tree";

export const LINKS_VIEW = "memoryLs.links";
// Typing: ask again once the document has been still this long.
const EDIT_DELAY_MS = 400;
const CHANGE_DELAY_MS = 150;
const NO_MEMORY = "Open a memory or an agent's file (CLAUDE.md, MEMORY.md…) to see what links to it and what it links to.";

type LinkNode =
  | { kind: "group"; group: "from" | "to"; count: number }
  | { kind: "source"; source: LinkSource }
  | { kind: "line"; source: LinkSource; line: LinkLine }
  | { kind: "target"; target: LinkTarget };

function toRange(range: LspRange): vscode.Range {
  return new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character);
}

function snippet(line: LinkLine): string {
  return lineSnippet(line.text, line.range.start.character);
}

function openAt(uri: string, range: LspRange): vscode.Command {
  return {
    command: "vscode.open",
    title: "Open",
    arguments: [vscode.Uri.parse(uri), { selection: toRange(range), preview: true } satisfies vscode.TextDocumentShowOptions],
  };
}

export class MemoryLinksView implements vscode.TreeDataProvider<LinkNode>, vscode.Disposable {
  private readonly changeEmitter = new vscode.EventEmitter<LinkNode | undefined>();
  readonly onDidChangeTreeData = this.changeEmitter.event;
  private readonly view: vscode.TreeView<LinkNode>;
  private readonly disposables: vscode.Disposable[] = [];
  private catalogSubscriptions: vscode.Disposable[] = [];
  private result: LinksResult | undefined;
  private served: Served | undefined;
  private asked = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly servers: MemoryServers) {
    this.view = vscode.window.createTreeView(LINKS_VIEW, { treeDataProvider: this, showCollapseAll: true });
    this.disposables.push(
      this.view,
      this.changeEmitter,
      vscode.window.onDidChangeActiveTextEditor(() => this.soon(0)),
      vscode.workspace.onDidSaveTextDocument(() => this.soon(CHANGE_DELAY_MS)),
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (event.document === vscode.window.activeTextEditor?.document && event.contentChanges.length > 0) {
          this.soon(EDIT_DELAY_MS);
        }
      }),
      this.view.onDidChangeVisibility(() => this.soon(0)),
      servers.onDidChange(() => this.follow()),
    );
    this.follow();
  }

  /** Follow the lists of memories of the folders served now: they reload on every change. */
  private follow(): void {
    for (const subscription of this.catalogSubscriptions) {
      subscription.dispose();
    }
    this.catalogSubscriptions = this.servers.all.map((served) =>
      served.catalog.onDidChange(() => this.soon(CHANGE_DELAY_MS)),
    );
    this.soon(0);
  }

  private soon(delay: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.load(), delay);
  }

  /** Ask the server for the active document's links (answers to older asks are dropped). */
  private async load(): Promise<void> {
    if (!this.view.visible) {
      return;
    }
    const document = vscode.window.activeTextEditor?.document;
    if (document === undefined || document.languageId !== "markdown" || document.uri.scheme !== "file") {
      // Keep showing the last memory while another kind of editor (or none) is active.
      if (this.result === undefined) {
        this.show(undefined, undefined, NO_MEMORY);
      }
      return;
    }
    if (this.servers.all.length === 0) {
      return;
    }
    const served = this.servers.forUri(document.uri);
    const state = served.server.state.kind;
    if (state !== "running") {
      // Asked again when it runs: its list of memories reloads then.
      const message =
        state === "starting" ? "Starting the memory-ls language server…" : "The memory-ls language server is not running.";
      this.show(undefined, undefined, message);
      return;
    }
    const ask = ++this.asked;
    try {
      const result = await served.server.call("memory.links", { uri: document.uri.toString() });
      if (ask === this.asked) {
        this.show(result, served, undefined);
      }
    } catch (error) {
      if (ask === this.asked) {
        // A Markdown file outside the workspace and the memory folders has no links to show.
        const outside = error instanceof ServerCommandError && error.code === "outside-store";
        this.show(undefined, undefined, outside ? NO_MEMORY : `Links could not be listed: ${errorText(error)}`);
      }
    }
  }

  private show(result: LinksResult | undefined, served: Served | undefined, message: string | undefined): void {
    this.result = result;
    this.served = served;
    this.view.message = message;
    this.view.description =
      result === undefined ? undefined : (result.name ?? result.agent?.shown ?? this.shown(result.path ?? result.uri));
    this.changeEmitter.fire(undefined);
  }

  private shown(pathOrUri: string): string {
    return displayPath(pathOrUri, places(this.served?.folder));
  }

  getChildren(node?: LinkNode): LinkNode[] {
    const result = this.result;
    if (result === undefined) {
      return [];
    }
    if (node === undefined) {
      const groups: LinkNode[] = [];
      if (result.name !== null || (result.agent ?? null) !== null) {
        groups.push({ kind: "group", group: "from", count: result.linkedFrom.length });
      }
      groups.push({ kind: "group", group: "to", count: result.linksTo.length });
      return groups;
    }
    if (node.kind === "group") {
      return node.group === "from"
        ? result.linkedFrom.map((source) => ({ kind: "source", source }))
        : result.linksTo.map((target) => ({ kind: "target", target }));
    }
    if (node.kind === "source" && node.source.links.length > 1) {
      return node.source.links.map((line) => ({ kind: "line", source: node.source, line }));
    }
    return [];
  }

  getTreeItem(node: LinkNode): vscode.TreeItem {
    if (node.kind === "group") {
      const label = `${node.group === "from" ? "Linked from" : "Links to"} (${node.count})`;
      const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.Expanded);
      item.iconPath = new vscode.ThemeIcon(node.group === "from" ? "references" : "link");
      item.contextValue = `links.${node.group}`;
      item.tooltip =
        node.group === "from"
          ? "Memories, agents' files and open notes whose [[links]] or `mem:` references name this file; the CLAUDE.md files that import it, the MEMORY.md that indexes it"
          : "The [[links]] and `mem:` references in this file, and its @imports or MEMORY.md links";
      return item;
    }
    if (node.kind === "source") {
      const source = node.source;
      const single = source.links.length === 1 ? source.links[0] : undefined;
      const item = new vscode.TreeItem(
        source.name ?? this.shown(source.path),
        single !== undefined ? vscode.TreeItemCollapsibleState.None : vscode.TreeItemCollapsibleState.Expanded,
      );
      item.resourceUri = vscode.Uri.parse(source.uri);
      const verb = sourceVerb(source.kind);
      item.iconPath = new vscode.ThemeIcon(verb === "" ? "note" : "file-symlink-file");
      const lines = single !== undefined ? snippet(single) : `${source.links.length} links`;
      item.description = verb === "" ? lines : `${verb} · ${lines}`;
      item.tooltip = `${this.shown(source.path)}${single !== undefined ? `:${single.line + 1}\n${single.text}` : ""}`;
      item.contextValue = "links.source";
      if (single !== undefined) {
        item.command = openAt(source.uri, single.range);
      }
      return item;
    }
    if (node.kind === "line") {
      const item = new vscode.TreeItem(snippet(node.line), vscode.TreeItemCollapsibleState.None);
      item.description = `line ${node.line.line + 1}`;
      item.tooltip = `${this.shown(node.source.path)}:${node.line.line + 1}\n${node.line.text}`;
      item.contextValue = "links.line";
      item.command = openAt(node.source.uri, node.line.range);
      return item;
    }
    const target = node.target;
    const file = namesFile(target.form);
    const item = new vscode.TreeItem(target.name ?? target.target, vscode.TreeItemCollapsibleState.None);
    item.contextValue = target.broken ? "links.broken" : "links.target";
    if (target.broken || target.uri === null) {
      item.iconPath = new vscode.ThemeIcon("warning", new vscode.ThemeColor("list.warningForeground"));
      item.description = `not found · ${snippet(target)}`;
      item.tooltip = file
        ? `No file ${target.path ?? target.target} (line ${target.line + 1}).\n${target.text}`
        : `No memory named ${target.target} (line ${target.line + 1}).\n${target.text}`;
      // A broken link opens where it is written.
      if (this.result !== undefined) {
        item.command = openAt(this.result.uri, target.range);
      }
      return item;
    }
    item.resourceUri = vscode.Uri.parse(target.uri);
    item.iconPath = new vscode.ThemeIcon(file ? "file-symlink-file" : "note");
    item.description = snippet(target);
    item.tooltip = `${this.shown(target.path ?? target.uri)}\nline ${target.line + 1}: ${target.text}`;
    item.command = { command: "vscode.open", title: "Open", arguments: [vscode.Uri.parse(target.uri)] };
    return item;
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const subscription of this.catalogSubscriptions) {
      subscription.dispose();
    }
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }
}
