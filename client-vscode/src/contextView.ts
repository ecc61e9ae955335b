// The "What the Agent Loads" view in the Explorer: for the file in the active editor, the
// files the chosen agent (Claude Code by default; Memory: Choose the Agent… in the view's
// title bar, remembered per workspace) loads into its context, in load order, with their
// estimated tokens and cuts, and the total against the budget, from the server's
// `memory.context`. Follows the active editor and saves.
import * as vscode from "vscode";
import { agentName, CONTEXT_AGENTS, type ContextRow, contextRows, DEFAULT_CONTEXT_AGENT, isContextAgent } from "./contextRows";
import type { ContextAgent, ContextResult } from "./protocol";
import { errorText, ServerCommandError } from "./server";
import type { MemoryServers } from "./servers";

export const CONTEXT_VIEW = "memoryLs.context";
export const CHOOSE_CONTEXT_AGENT = "memoryLs.chooseContextAgent";
// The workspace state key of the chosen agent.
const AGENT_KEY = "memoryLs.contextAgent";
const CHANGE_DELAY_MS = 150;
const NO_FILE = "Open a file to see what the agent loads when it works on it.";

function openCommand(row: ContextRow): vscode.Command | undefined {
  const open = row.open;
  if (open === undefined) {
    return undefined;
  }
  const options: vscode.TextDocumentShowOptions = { preview: true };
  if (open.line !== undefined) {
    const at = new vscode.Position(open.line, open.column ?? 0);
    options.selection = new vscode.Range(at, at);
  }
  return { command: "vscode.open", title: "Open", arguments: [vscode.Uri.file(open.path), options] };
}

export class AgentContextView implements vscode.TreeDataProvider<ContextRow>, vscode.Disposable {
  private readonly changeEmitter = new vscode.EventEmitter<ContextRow | undefined>();
  readonly onDidChangeTreeData = this.changeEmitter.event;
  private readonly view: vscode.TreeView<ContextRow>;
  private readonly disposables: vscode.Disposable[] = [];
  private catalogSubscriptions: vscode.Disposable[] = [];
  private rows: ContextRow[] = [];
  private shown: vscode.Uri | undefined;
  private asked = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly servers: MemoryServers,
    private readonly state: vscode.Memento,
  ) {
    this.view = vscode.window.createTreeView(CONTEXT_VIEW, { treeDataProvider: this });
    this.disposables.push(
      this.view,
      this.changeEmitter,
      vscode.commands.registerCommand(CHOOSE_CONTEXT_AGENT, () => this.chooseAgent()),
      vscode.window.onDidChangeActiveTextEditor(() => this.soon(0)),
      vscode.workspace.onDidSaveTextDocument(() => this.soon(CHANGE_DELAY_MS)),
      this.view.onDidChangeVisibility(() => this.soon(0)),
      servers.onDidChange(() => this.follow()),
    );
    this.follow();
  }

  get agent(): ContextAgent {
    const chosen = this.state.get<string>(AGENT_KEY);
    return isContextAgent(chosen) ? chosen : DEFAULT_CONTEXT_AGENT;
  }

  /** Pick the agent from a list (the current one first-marked); remembered per workspace. */
  async chooseAgent(): Promise<void> {
    const current = this.agent;
    const picked = await vscode.window.showQuickPick(
      CONTEXT_AGENTS.map((agent) => ({
        label: agent.name,
        description: agent.id === current ? "current" : undefined,
        detail: agent.files,
        picked: agent.id === current,
        id: agent.id,
      })),
      { title: "What the Agent Loads", placeHolder: "Show the files this agent loads into its context" },
    );
    if (picked === undefined) {
      return;
    }
    await this.state.update(AGENT_KEY, picked.id);
    this.soon(0);
  }

  /** Follow the lists of memories of the folders served now (Serena lists their names). */
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

  /** Ask the server what the agent loads for the active file (answers to older asks are dropped). */
  private async load(): Promise<void> {
    if (!this.view.visible) {
      return;
    }
    const agent = this.agent;
    const active = vscode.window.activeTextEditor?.document.uri;
    // Keep showing the last file while another kind of editor (or none) is active.
    const uri = active?.scheme === "file" ? active : this.shown;
    if (uri === undefined) {
      this.show(undefined, undefined, NO_FILE);
      return;
    }
    if (this.servers.all.length === 0) {
      return;
    }
    const served = this.servers.forUri(uri);
    const state = served.server.state.kind;
    if (state !== "running") {
      const message =
        state === "starting" ? "Starting the memory-ls language server…" : "The memory-ls language server is not running.";
      this.show(undefined, undefined, message);
      return;
    }
    const ask = ++this.asked;
    try {
      const result = await served.server.call("memory.context", { uri: uri.toString(), agent });
      if (ask === this.asked) {
        this.show(result, uri, undefined);
      }
    } catch (error) {
      if (ask === this.asked) {
        const outside = error instanceof ServerCommandError && /not a file of the repository/.test(error.message);
        const message = outside
          ? `${vscode.workspace.asRelativePath(uri)} is outside the workspace: open a file of the workspace to see what ${agentName(agent)} loads.`
          : `What ${agentName(agent)} loads could not be listed: ${errorText(error)}`;
        this.show(undefined, undefined, message);
      }
    }
  }

  private show(result: ContextResult | undefined, uri: vscode.Uri | undefined, message: string | undefined): void {
    this.rows = result === undefined ? [] : contextRows(result);
    this.shown = uri;
    this.view.message = message;
    this.view.description =
      result === undefined ? agentName(this.agent) : `${result.agentName} · ${result.file ?? "no file"}`;
    this.changeEmitter.fire(undefined);
  }

  getChildren(row?: ContextRow): ContextRow[] {
    return row === undefined ? this.rows : (row.children ?? []);
  }

  getTreeItem(row: ContextRow): vscode.TreeItem {
    const item = new vscode.TreeItem(
      row.label,
      row.children === undefined ? vscode.TreeItemCollapsibleState.None : vscode.TreeItemCollapsibleState.Collapsed,
    );
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.iconPath = row.warning
      ? new vscode.ThemeIcon(row.icon, new vscode.ThemeColor("list.warningForeground"))
      : new vscode.ThemeIcon(row.icon);
    item.contextValue = `context.${row.kind}`;
    if (row.open !== undefined) {
      item.resourceUri = vscode.Uri.file(row.open.path);
    }
    item.command = openCommand(row);
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
