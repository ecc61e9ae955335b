// "Memory: Show Graph": the memories and their links in a webview (force-graph, bundled
// into client-vscode/dist/graph-view.js by scripts/build.mjs; no network, a strict CSP).
// The data is the server's `memory.graph` (docs/guides/language-server.md); the view asks
// again, debounced, whenever the folder's memory list reloads (a write, a file event).
import * as crypto from "node:crypto";
import * as vscode from "vscode";
import { errorText } from "./server";
import type { GraphPayload } from "../webview/graphPayload";
import type { MemoryServers, Served } from "./servers";

export type { GraphPayload };

/** The filters the view sends (memory.graph's arguments). */
export interface GraphQuery {
  folder?: string;
  tag?: string;
  name?: string;
  center?: string;
  depth?: number;
  limit?: number;
}

type FromView =
  | { type: "ready" }
  | { type: "query"; query: GraphQuery }
  | { type: "open"; node: number }
  | { type: "preview"; node: number; id: number }
  | { type: "around" }
  | { type: "painted"; nodes: number; edges: number; viewMs: number };

const REFRESH_DELAY_MS = 300;
export const DEFAULT_LIMIT = 2000;

/** The file of a graph node; undefined for a name no memory has. */
export function nodeFile(payload: GraphPayload, node: number): string | undefined {
  const row = payload.nodes[node];
  const folder = row === undefined ? undefined : payload.folders[row[1]];
  if (row === undefined || folder === undefined) {
    return undefined;
  }
  if (folder.kind === "agent") {
    return agentFile(row[0], folder.path, folder.home);
  }
  const name = folder.kind === "global" ? row[0].replace(/^global\//, "") : row[0];
  return vscode.Uri.joinPath(vscode.Uri.file(folder.path), ...`${name}.md`.split("/")).fsPath;
}

/** An agent's file's path from its node's name: relative to the root, `~/...` under the
 * home, or absolute. */
export function agentFile(name: string, root: string, home: string | undefined): string {
  if (name.startsWith("~/") && home !== undefined) {
    return vscode.Uri.joinPath(vscode.Uri.file(home), ...name.slice(2).split("/")).fsPath;
  }
  if (name.startsWith("/") || /^[A-Za-z]:[\\/]/.test(name)) {
    return vscode.Uri.file(name).fsPath;
  }
  return vscode.Uri.joinPath(vscode.Uri.file(root), ...name.split("/")).fsPath;
}

/** Whether a node is another agent's file (older servers send no such flag). */
function isAgent(payload: GraphPayload, node: number): boolean {
  const flag = payload.flags.agent ?? 0;
  return ((payload.nodes[node]?.[4] ?? 0) & flag) !== 0;
}

export function registerGraph(context: vscode.ExtensionContext, servers: MemoryServers): void {
  let current: GraphPanel | undefined;
  context.subscriptions.push(
    vscode.commands.registerCommand("memoryLs.showGraph", async () => {
      const started = Date.now();
      const served = await servers.choose();
      if (served === undefined) {
        return;
      }
      if (current !== undefined && !current.disposed && current.served === served) {
        current.reveal();
        return;
      }
      current?.dispose();
      current = new GraphPanel(context, served, started);
    }),
    { dispose: () => current?.dispose() },
  );
}

class GraphPanel implements vscode.Disposable {
  private readonly panel: vscode.WebviewPanel;
  private readonly subscriptions: vscode.Disposable[] = [];
  private query: GraphQuery = { limit: DEFAULT_LIMIT };
  private payload: GraphPayload | undefined;
  private timer: NodeJS.Timeout | undefined;
  private serial = 0;
  private painted = false;
  disposed = false;

  constructor(
    context: vscode.ExtensionContext,
    readonly served: Served,
    private readonly started: number,
  ) {
    const dist = vscode.Uri.joinPath(context.extensionUri, "client-vscode", "dist");
    const title = served.folder === undefined ? "Memory Graph" : `Memory Graph: ${served.folder.name}`;
    this.panel = vscode.window.createWebviewPanel("memoryLs.graph", title, vscode.ViewColumn.Active, {
      enableScripts: true,
      localResourceRoots: [dist],
      retainContextWhenHidden: true,
    });
    this.panel.webview.html = page(this.panel.webview, dist);
    this.subscriptions.push(
      this.panel.onDidDispose(() => this.dispose()),
      this.panel.webview.onDidReceiveMessage((message: FromView) => void this.receive(message)),
      served.catalog.onDidChange(() => this.refreshSoon()),
    );
  }

  reveal(): void {
    this.panel.reveal();
  }

  private refreshSoon(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.load(), REFRESH_DELAY_MS);
  }

  private async load(): Promise<void> {
    const serial = ++this.serial;
    try {
      const payload = (await this.served.server.execute("memory.graph", [this.query])) as GraphPayload;
      if (serial !== this.serial || this.disposed) {
        return; // a newer request is under way
      }
      this.payload = payload;
      await this.panel.webview.postMessage({ type: "graph", payload, query: this.query });
    } catch (error) {
      if (serial === this.serial && !this.disposed) {
        await this.panel.webview.postMessage({ type: "error", message: errorText(error) });
      }
    }
  }

  private async receive(message: FromView): Promise<void> {
    switch (message.type) {
      case "ready":
        await this.load();
        return;
      case "query":
        this.query = { limit: DEFAULT_LIMIT, ...message.query };
        await this.load();
        return;
      case "around": {
        const name = this.activeMemory();
        if (name === undefined) {
          void vscode.window.showInformationMessage("Open a memory or an agent's file to see the memories around it.");
          return;
        }
        await this.panel.webview.postMessage({ type: "center", name });
        return;
      }
      case "open":
        await this.open(message.node);
        return;
      case "preview":
        await this.preview(message.node, message.id);
        return;
      case "painted":
        if (!this.painted) {
          this.painted = true;
          // From the command to the first frame drawn with the nodes (the editor test reads it).
          this.served.server.output.info(
            `graph: first paint ${Date.now() - this.started} ms after Show Graph ` +
              `(${message.nodes} nodes, ${message.edges} links; ${message.viewMs} ms in the view)`,
          );
        }
        return;
    }
  }

  /** The name of the memory (or agent's file) in the active editor, if this graph shows it. */
  private activeMemory(): string | undefined {
    const uri = vscode.window.activeTextEditor?.document.uri;
    if (uri === undefined || uri.scheme !== "file") {
      return undefined;
    }
    const memory = this.served.catalog.memories.find((found) => found.path === uri.fsPath)?.name;
    if (memory !== undefined || this.payload === undefined) {
      return memory;
    }
    const payload = this.payload;
    const node = payload.nodes.findIndex((_row, at) => isAgent(payload, at) && nodeFile(payload, at) === uri.fsPath);
    return node >= 0 ? payload.nodes[node]?.[0] : undefined;
  }

  private async open(node: number): Promise<void> {
    const payload = this.payload;
    const file = payload === undefined ? undefined : nodeFile(payload, node);
    if (file === undefined) {
      const name = payload?.nodes[node]?.[0] ?? "";
      void vscode.window.showInformationMessage(`No memory is named ${name}: the links to it are broken.`);
      return;
    }
    await vscode.window.showTextDocument(vscode.Uri.file(file), { viewColumn: vscode.ViewColumn.Beside });
  }

  private async preview(node: number, id: number): Promise<void> {
    const row = this.payload?.nodes[node];
    if (row === undefined || row[1] < 0 || isAgent(this.payload as GraphPayload, node)) {
      return; // memory.preview knows memories only
    }
    try {
      const found = (await this.served.server.execute("memory.preview", [{ name: row[0] }])) as { preview: string };
      await this.panel.webview.postMessage({ type: "preview", id, text: found.preview });
    } catch {
      // Gone meanwhile: the next refresh drops the node.
    }
  }

  dispose(): void {
    if (this.disposed) {
      return;
    }
    this.disposed = true;
    clearTimeout(this.timer);
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
    this.panel.dispose();
  }
}

function page(webview: vscode.Webview, dist: vscode.Uri): string {
  const nonce = crypto.randomBytes(16).toString("base64");
  const script = webview.asWebviewUri(vscode.Uri.joinPath(dist, "graph-view.js"));
  // force-graph adds one <style> element of its own: styles may be inline, scripts may not.
  const csp = [
    "default-src 'none'",
    `img-src ${webview.cspSource} data:`,
    `style-src ${webview.cspSource} 'unsafe-inline'`,
    `script-src 'nonce-${nonce}'`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Memory Graph</title>
<style>
  html, body { margin: 0; padding: 0; height: 100%; overflow: hidden; color: var(--vscode-foreground);
    background: var(--vscode-editor-background); font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); }
  #bar { position: absolute; top: 0; left: 0; right: 0; display: flex; gap: 6px; align-items: center; padding: 6px 8px;
    background: var(--vscode-editorWidget-background); border-bottom: 1px solid var(--vscode-widget-border, transparent); z-index: 2; }
  #bar input, #bar select { background: var(--vscode-input-background); color: var(--vscode-input-foreground);
    border: 1px solid var(--vscode-input-border, transparent); padding: 3px 5px; }
  #filter { flex: 1; min-width: 160px; }
  #bar button, #bar label { white-space: nowrap; }
  #depth { width: 3em; }
  #bar button { background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground);
    border: none; padding: 4px 8px; cursor: pointer; }
  #status { flex: 2; min-width: 0; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; opacity: 0.8; }
  #graph { position: absolute; top: 40px; left: 0; right: 0; bottom: 0; }
  #legend { position: absolute; right: 8px; bottom: 8px; padding: 6px 8px; font-size: 11px; line-height: 1.5;
    background: var(--vscode-editorWidget-background); border: 1px solid var(--vscode-widget-border, transparent); opacity: 0.92; z-index: 2; }
  #legend span.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 50%; margin-right: 4px; vertical-align: middle; }
  #legend span.swatch.agent { border-radius: 1px; }
  #tip { position: absolute; display: none; max-width: 420px; padding: 6px 8px; pointer-events: none; z-index: 3;
    background: var(--vscode-editorHoverWidget-background); color: var(--vscode-editorHoverWidget-foreground);
    border: 1px solid var(--vscode-editorHoverWidget-border); }
  #tip .name { font-weight: bold; }
  #tip .meta { opacity: 0.8; margin: 2px 0 4px; }
  #tip pre { margin: 0; white-space: pre-wrap; font-family: var(--vscode-editor-font-family); font-size: 11px; max-height: 240px; overflow: hidden; }
  #message { position: absolute; top: 50%; width: 100%; text-align: center; opacity: 0.8; }
</style>
</head>
<body>
<div id="bar">
  <input id="filter" type="search" placeholder="Filter: name, #tag, folder:NAME" aria-label="Filter the graph">
  <select id="folder" aria-label="Folder"><option value="">All folders</option></select>
  <button id="around" title="The memories linked to and from the active memory">Around current</button>
  <label for="depth">depth</label><input id="depth" type="number" min="0" max="10" value="1">
  <button id="fit" title="Fit the graph in the view">Fit</button>
  <span id="status" aria-live="polite"></span>
</div>
<div id="graph"></div>
<div id="legend"></div>
<div id="tip"></div>
<div id="message">Loading the memory graph…</div>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
}
