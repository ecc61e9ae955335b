// The memory graph's webview (bundled with force-graph into client-vscode/dist/graph-view.js).
// It draws what the extension posts (the server's `memory.graph` payload) and posts back
// filters, clicks, hovers and its first paint. No network: everything is in the bundle.
import ForceGraph from "force-graph";
import type { GraphPayload } from "./graphPayload";

type Payload = GraphPayload;

interface GraphNode {
  index: number;
  name: string;
  folder: number;
  linksIn: number;
  linksOut: number;
  flags: number;
  problems: number;
  tags: string[];
  x?: number;
  y?: number;
  vx?: number;
  vy?: number;
}

interface GraphLink {
  source: number | GraphNode;
  target: number | GraphNode;
  broken: boolean;
}

interface Query {
  folder?: string;
  tag?: string;
  name?: string;
  center?: string;
  depth?: number;
}

declare function acquireVsCodeApi(): { postMessage(message: unknown): void };

const vscode = acquireVsCodeApi();
// Tableau 10: distinct at a glance, readable on dark and light themes.
const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948", "#76b7b2", "#ff9da7", "#9c755f", "#e15759", "#bab0ac"];
const PROBLEM = "#e5484d";
const STALE = "#f5a524";
const RELATIVE_SIZE = 3;
// Level of detail: arrows and labels only where they can be read and drawn quickly.
const ARROWS_UP_TO = 800;
const LABELS_UP_TO = 400;
// Beyond that many nodes, names show once zoomed in this far (or on hover).
const LABELS_FROM_SCALE = 2.5;
const FIT_MS = 300;

const element = (id: string): HTMLElement => document.getElementById(id) as HTMLElement;
const filterBox = element("filter") as HTMLInputElement;
const folderBox = element("folder") as HTMLSelectElement;
const depthBox = element("depth") as HTMLInputElement;
const status = element("status");
const tip = element("tip");
const message = element("message");
const legend = element("legend");
const container = element("graph");

let flags: Record<string, number> = {};
let folders: Payload["folders"] = [];
let nodes: GraphNode[] = [];
let receivedAt = 0;
let paintPending = false;
let fitPending = false;
let hovered: GraphNode | null = null;
let previewId = 0;
let mouse = { x: 0, y: 0 };
let queryTimer: ReturnType<typeof setTimeout> | undefined;
const foreground = getComputedStyle(document.body).getPropertyValue("--vscode-foreground").trim() || "#cccccc";

const has = (node: GraphNode, flag: string): boolean => (node.flags & (flags[flag] ?? 0)) !== 0;
// Another agent's file (CLAUDE.md, AGENTS.md, MEMORY.md...): drawn as a square.
const isAgent = (node: GraphNode): boolean => has(node, "agent");
const isMemory = (node: GraphNode): boolean => node.folder >= 0 && !isAgent(node);
const degree = (node: GraphNode): number => node.linksIn + node.linksOut;
const colour = (node: GraphNode): string => (node.folder < 0 ? "#888888" : (PALETTE[node.folder % PALETTE.length] ?? "#888888"));

const graph = new ForceGraph<GraphNode, GraphLink>(container)
  .backgroundColor("rgba(0,0,0,0)")
  .nodeId("index")
  .nodeRelSize(RELATIVE_SIZE)
  .nodeVal((node) => 1 + degree(node))
  .nodeLabel(() => "")
  .nodeCanvasObject((node, context, scale) => drawNode(node, context, scale))
  .linkColor((link) => (link.broken ? PROBLEM : foreground))
  .linkWidth(0.6)
  .linkLineDash((link) => (link.broken ? [2, 2] : null))
  .linkDirectionalArrowRelPos(1)
  .d3AlphaDecay(0.04)
  .warmupTicks(0)
  .cooldownTicks(150)
  .onNodeClick((node) => vscode.postMessage({ type: "open", node: node.index }))
  .onNodeHover((node) => hover(node))
  .onEngineStop(() => {
    // "settled": the layout stopped moving and was fitted to the view (what tests wait for).
    const settled = (): void => {
      document.body.dataset.settled = String(Date.now());
    };
    if (fitPending) {
      fitPending = false;
      graph.zoomToFit(FIT_MS, 40);
      setTimeout(settled, FIT_MS + 50);
    } else {
      settled();
    }
  })
  .onRenderFramePost(() => {
    if (paintPending && nodes.length > 0) {
      paintPending = false;
      document.body.dataset.painted = String(Date.now());
      vscode.postMessage({
        type: "painted",
        nodes: nodes.length,
        edges: Number(document.body.dataset.edges),
        viewMs: Math.round(performance.now() - receivedAt),
      });
    }
  });

function drawNode(node: GraphNode, context: CanvasRenderingContext2D, scale: number): void {
  const radius = Math.sqrt(1 + degree(node)) * RELATIVE_SIZE;
  const x = node.x ?? 0;
  const y = node.y ?? 0;
  const line = 1 / scale;
  context.save();
  context.globalAlpha = has(node, "shadowed") ? 0.35 : 1;
  context.beginPath();
  if (isAgent(node)) {
    context.rect(x - radius, y - radius, 2 * radius, 2 * radius);
  } else {
    context.arc(x, y, radius, 0, 2 * Math.PI);
  }
  if (has(node, "missing")) {
    context.setLineDash([2 * line, 2 * line]);
    context.strokeStyle = PROBLEM;
    context.lineWidth = 1.5 * line;
    context.stroke();
  } else {
    context.fillStyle = colour(node);
    context.fill();
    if (has(node, "orphan")) {
      context.strokeStyle = foreground;
      context.lineWidth = line;
      context.setLineDash([line, 2 * line]);
      context.stroke();
    }
  }
  context.setLineDash([]);
  if (node.problems > 0) {
    context.beginPath();
    context.arc(x, y, radius + 1.5 * line + 0.5, 0, 2 * Math.PI);
    context.strokeStyle = PROBLEM;
    context.lineWidth = 2 * line;
    context.stroke();
  }
  if (has(node, "stale")) {
    context.beginPath();
    context.arc(x, y, radius + 4 * line + 0.8, 0, 2 * Math.PI);
    context.strokeStyle = STALE;
    context.lineWidth = 1.5 * line;
    context.setLineDash([3 * line, 2 * line]);
    context.stroke();
    context.setLineDash([]);
  }
  if (has(node, "readOnly")) {
    // A small padlock body at the top right.
    const size = Math.max(radius * 0.7, 2.5 * line);
    context.fillStyle = foreground;
    context.fillRect(x + radius * 0.5, y - radius - size * 0.3, size, size * 0.8);
  }
  if (nodes.length <= LABELS_UP_TO || scale >= LABELS_FROM_SCALE || node === hovered) {
    const size = 11 / scale;
    context.font = `${size}px sans-serif`;
    context.textAlign = "center";
    context.textBaseline = "top";
    context.fillStyle = foreground;
    context.fillText(node.name, x, y + radius + 2 * line);
  }
  context.restore();
}

function hover(node: GraphNode | null): void {
  hovered = node;
  container.style.cursor = node ? "pointer" : "";
  if (node === null) {
    tip.style.display = "none";
    return;
  }
  const folder = folders[node.folder];
  const marks = ["readOnly", "shadowed", "orphan", "stale", "missing", "invalidName", "unread"]
    .filter((flag) => has(node, flag))
    .map((flag) => flag.replace(/[A-Z]/g, (letter) => ` ${letter.toLowerCase()}`));
  const meta = [
    folder === undefined
      ? "no such memory"
      : folder.kind === "agent"
        ? `${folder.agent ?? folder.label}'s file`
        : `${folder.label} (${folder.scope})`,
    `${node.linksIn} in, ${node.linksOut} out`,
    node.problems > 0 ? `${node.problems} problem${node.problems === 1 ? "" : "s"}` : "",
    ...marks,
    ...node.tags.map((tag) => `#${tag}`),
  ].filter((part) => part !== "");
  tip.replaceChildren();
  const name = document.createElement("div");
  name.className = "name";
  name.textContent = node.name;
  const info = document.createElement("div");
  info.className = "meta";
  info.textContent = meta.join(" · ");
  const preview = document.createElement("pre");
  tip.append(name, info, preview);
  placeTip();
  tip.style.display = "block";
  if (isMemory(node)) {
    previewId += 1;
    vscode.postMessage({ type: "preview", node: node.index, id: previewId });
  }
}

function placeTip(): void {
  const width = tip.offsetWidth || 300;
  const left = Math.min(mouse.x + 14, window.innerWidth - width - 8);
  tip.style.left = `${Math.max(left, 4)}px`;
  tip.style.top = `${mouse.y + 14}px`;
}

function show(payload: Payload): void {
  receivedAt = performance.now();
  flags = payload.flags;
  folders = payload.folders;
  const before = new Map(nodes.map((node) => [`${node.folder}:${node.name}`, node]));
  nodes = payload.nodes.map(([name, folder, linksIn, linksOut, nodeFlags, problems, tags], index) => {
    const node: GraphNode = {
      index,
      name,
      folder,
      linksIn,
      linksOut,
      flags: nodeFlags,
      problems,
      tags: tags.map((tag) => payload.tags[tag] ?? ""),
    };
    // A refresh keeps where the known memories were: the picture does not jump.
    const known = before.get(`${folder}:${name}`);
    if (known !== undefined) {
      node.x = known.x;
      node.y = known.y;
    }
    return node;
  });
  const links: GraphLink[] = [];
  for (let at = 0; at + 1 < payload.edges.length; at += 2) {
    const target = payload.edges[at + 1] as number;
    links.push({ source: payload.edges[at] as number, target, broken: payload.nodes[target]?.[1] === -1 });
  }
  document.body.dataset.nodes = String(nodes.length);
  document.body.dataset.edges = String(links.length);
  document.body.dataset.memories = String(nodes.filter(isMemory).length);
  document.body.dataset.agents = String(nodes.filter(isAgent).length);
  document.body.dataset.total = `${payload.total.nodes}/${payload.total.edges}`;
  fitPending = fitPending || before.size === 0 || payload.center !== null;
  delete document.body.dataset.settled;
  paintPending = true;
  graph.linkDirectionalArrowLength(links.length <= ARROWS_UP_TO ? 3 : 0);
  graph.graphData({ nodes, links });
  message.style.display = nodes.length === 0 ? "block" : "none";
  message.textContent = "No memory matches.";
  const memories = nodes.filter(isMemory).length;
  const agents = nodes.filter(isAgent).length;
  let text = `${memories} memories, ${agents > 0 ? `${agents} agents' files, ` : ""}${links.length} links`;
  if (payload.truncated) {
    text += ` · the ${nodes.length} most linked of ${payload.total.nodes}`;
  }
  if (payload.pending > 0) {
    text += ` · ${payload.pending} not indexed yet`;
  }
  status.textContent = text;
  status.title = payload.truncated
    ? `${text}. Large stores show their most linked memories: filter, or use Around current for the memories near the active one.`
    : text;
  showFolders(payload);
}

function showFolders(payload: Payload): void {
  const chosen = folderBox.value;
  folderBox.replaceChildren(new Option("All folders", ""));
  legend.replaceChildren();
  let anyAgent = false;
  payload.folders.forEach((folder, index) => {
    const agent = folder.kind === "agent";
    anyAgent = anyAgent || agent;
    // An agent's "folder" is asked for by its label (they all have the root as path).
    folderBox.append(new Option(agent ? `${folder.agent ?? folder.label}'s files` : `${folder.label} (${folder.scope})`, agent ? folder.label : folder.path));
    const row = document.createElement("div");
    const swatch = document.createElement("span");
    swatch.className = agent ? "swatch agent" : "swatch";
    swatch.style.background = PALETTE[index % PALETTE.length] ?? "#888888";
    const words = agent
      ? `${folder.agent ?? folder.label} · agents' files`
      : `${folder.label} · ${folder.scope}${folder.readOnly ? " · read-only" : ""}`;
    row.append(swatch, document.createTextNode(words));
    legend.append(row);
  });
  folderBox.value = chosen;
  const key = document.createElement("div");
  key.textContent =
    "red ring: problems · dashed: orphaned · faded: shadowed · orange: stale path · ■ read-only" +
    (anyAgent ? " · squares: agents' files" : "");
  legend.append(key);
}

function currentQuery(): Query {
  const query: Query = {};
  const words: string[] = [];
  for (const word of filterBox.value.trim().split(/\s+/).filter((part) => part !== "")) {
    if (word.startsWith("#") && word.length > 1) {
      query.tag = word.slice(1);
    } else if (word.startsWith("folder:")) {
      query.folder = word.slice("folder:".length);
    } else if (word.startsWith("near:")) {
      query.center = word.slice("near:".length);
    } else {
      words.push(word);
    }
  }
  if (words.length > 0) {
    query.name = words.join(" ");
  }
  if (folderBox.value !== "") {
    query.folder = folderBox.value;
  }
  if (query.center !== undefined) {
    query.depth = Math.max(0, Math.min(10, Number(depthBox.value) || 0));
  }
  return query;
}

function sendQuery(delay = 250): void {
  clearTimeout(queryTimer);
  queryTimer = setTimeout(() => vscode.postMessage({ type: "query", query: currentQuery() }), delay);
}

filterBox.addEventListener("input", () => sendQuery());
folderBox.addEventListener("change", () => sendQuery(0));
depthBox.addEventListener("input", () => sendQuery());
element("fit").addEventListener("click", () => graph.zoomToFit(FIT_MS, 40));
element("around").addEventListener("click", () => vscode.postMessage({ type: "around" }));
container.addEventListener("mousemove", (event) => {
  mouse = { x: event.clientX, y: event.clientY };
  if (hovered !== null) {
    placeTip();
  }
});
window.addEventListener("resize", () => graph.width(container.clientWidth).height(container.clientHeight));
graph.width(container.clientWidth).height(container.clientHeight);
// Repulsion only between near nodes: unlinked memories stay in sight, and each tick costs
// less at thousands of nodes.
(graph.d3Force("charge") as unknown as { distanceMax(distance: number): void } | undefined)?.distanceMax(220);

window.addEventListener("message", (event: MessageEvent) => {
  const data = event.data as { type: string; payload?: Payload; message?: string; id?: number; text?: string; name?: string };
  if (data.type === "graph" && data.payload) {
    show(data.payload);
  } else if (data.type === "error") {
    status.textContent = data.message ?? "";
    message.style.display = "block";
    message.textContent = data.message ?? "";
  } else if (data.type === "preview" && data.id === previewId && hovered !== null) {
    const pre = tip.querySelector("pre");
    if (pre) {
      pre.textContent = data.text ?? "";
      placeTip();
    }
  } else if (data.type === "center" && data.name) {
    filterBox.value = `near:${data.name}`;
    sendQuery(0);
  }
});

// For tests and for people: where a memory's node is drawn, relative to the graph's canvas.
(window as unknown as { memoryGraph: unknown }).memoryGraph = {
  screenOf(name: string): { x: number; y: number } | undefined {
    const node = nodes.find((candidate) => candidate.name === name);
    if (node === undefined || node.x === undefined || node.y === undefined) {
      return undefined;
    }
    return graph.graph2ScreenCoords(node.x, node.y);
  },
  names(): string[] {
    return nodes.map((node) => node.name);
  },
};

vscode.postMessage({ type: "ready" });
