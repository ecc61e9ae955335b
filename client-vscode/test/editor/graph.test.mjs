// The memory graph in a real VS Code (code-server in headless Chromium): on the example
// workspace it shows the memories and links `memory-ls graph` counts (and a CLAUDE.md, an
// agent's file, drawn apart), a click on a node opens the memory or the agent's file, a
// memory written from outside appears; and its first paint at 10,000
// memories (a store from bench/run.py's generator) is timed and printed (written to
// bench/results/ as JSON too).
//   node --test client-vscode/test/editor/graph.test.mjs   (see client-vscode/scripts/test-all.sh)
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { describe } from "node:test";
import {
  activeTab,
  editorSuite,
  evidence,
  extensionLog,
  pythonForServer,
  repo,
  retry,
  runCommand,
  screenshot,
} from "./harness.mjs";

const TEST_TIMEOUT = 240_000;
const PAINT_SIZE = 10_000;
// The example's folders as its .vscode/settings.json configures them (for the CLI).
const EXAMPLE_FLAGS = [
  "--additional-folders",
  "shared/feature,shared/feature_builder,shared/spec,shared/vendor:ro",
  "--global-folder",
  "../global-memories",
  "--max-memory-bytes",
  "4096",
];

const { artifacts, scratch, start, step, stopAll } = editorSuite("graph", { timeout: TEST_TIMEOUT });

/** What `memory-ls graph --json` (this checkout's server code) says of a store, with a
 * HOME of its own (no agent's files of the user's). */
function cliGraph(cwd, flags) {
  const home = join(scratch, "cli-home");
  mkdirSync(home, { recursive: true });
  const output = execFileSync(
    pythonForServer(),
    ["-c", "import sys; from memory_ls.cli import main; main(sys.argv[1:])", "graph", "--json", "--limit", "1000000", ...flags],
    { cwd, env: { ...process.env, HOME: home, PYTHONPATH: join(repo, "server") }, maxBuffer: 1 << 28 },
  );
  const graph = JSON.parse(output.toString());
  const agent = graph.flags.agent ?? 0;
  return {
    nodes: graph.nodes.length,
    memories: graph.nodes.filter((row) => row[1] >= 0 && (row[4] & agent) === 0).length,
    agents: graph.nodes.filter((row) => (row[4] & agent) !== 0).length,
    edges: graph.edges.length / 2,
  };
}

/** The graph webview's frame: the one whose document has the graph's container. */
async function graphFrame(page) {
  return retry(
    async () => {
      for (const frame of page.frames()) {
        const found = await frame.evaluate(() => Boolean(document.getElementById("graph") && window.memoryGraph)).catch(() => false);
        if (found) {
          return frame;
        }
      }
      throw new Error(`no graph webview among ${page.frames().length} frames`);
    },
    { timeout: 60_000, what: "the graph webview" },
  );
}

/** Wait until the layout has stopped moving and was fitted to the view. */
async function settled(frame, timeout = 60_000) {
  await retry(
    async () => assert.ok(await frame.evaluate(() => document.body.dataset.settled !== undefined), "still laying out"),
    { timeout, what: "the layout to settle" },
  );
}

/** The counts the webview shows once it painted. */
async function shown(frame) {
  return frame.evaluate(() => ({
    painted: document.body.dataset.painted !== undefined,
    nodes: Number(document.body.dataset.nodes),
    memories: Number(document.body.dataset.memories),
    agents: Number(document.body.dataset.agents),
    edges: Number(document.body.dataset.edges),
    status: document.getElementById("status").textContent,
  }));
}

/** The first paints the extension logged: (ms, nodes, links, ms in the view) each. */
function paints(userData) {
  const pattern = /graph: first paint (\d+) ms after Show Graph \((\d+) nodes, (\d+) links; (\d+) ms in the view\)/g;
  return [...extensionLog(userData).matchAll(pattern)].map((found) => ({
    ms: Number(found[1]),
    nodes: Number(found[2]),
    edges: Number(found[3]),
    viewMs: Number(found[4]),
  }));
}

describe("the memory graph", { timeout: 15 * 60_000 }, () => {
  const copy = join(scratch, "examples");
  cpSync(join(repo, "examples"), copy, { recursive: true });
  const workspace = join(copy, "workspace");
  // Another agent's file: a node of its own, linking to a memory.
  writeFileSync(join(workspace, "CLAUDE.md"), "# Project\n\nRead [[project_overview]] first.\n");
  let page;
  let frame;

  step("opens on the example workspace with the memories and links memory-ls graph counts", async () => {
    ({ page } = await start({ workspace, inPlace: true }));
    const expected = cliGraph(workspace, EXAMPLE_FLAGS);
    assert.ok(expected.memories >= 10 && expected.edges >= 5 && expected.agents === 1, JSON.stringify(expected));
    await runCommand(page, "Memory: Show Graph");
    frame = await graphFrame(page);
    await retry(
      async () => {
        const now = await shown(frame);
        assert.ok(now.painted, "not painted yet");
        assert.deepEqual({ nodes: now.nodes, memories: now.memories, agents: now.agents, edges: now.edges }, expected, now.status);
      },
      { timeout: 90_000, what: "the graph's counts" },
    );
    assert.match((await shown(frame)).status, /1 agents' files/);
    const legend = await frame.evaluate(() => document.getElementById("legend").innerText);
    assert.match(legend, /Claude Code · agents' files/);
    assert.match(legend, /squares: agents' files/);
  });

  step("a click on a node opens that memory", async () => {
    // Wait until the layout has stopped and been fitted, then click where project_overview is.
    await settled(frame);
    await evidence(page, artifacts, "graph-example");
    const at = await frame.evaluate(() => window.memoryGraph.screenOf("project_overview"));
    const canvas = frame.locator("#graph canvas").first();
    // Hovering shows the memory's first lines (the node is found on the next frame drawn).
    await retry(
      async () => {
        await canvas.hover({ position: { x: at.x + 1, y: at.y } });
        await canvas.hover({ position: at });
        const tip = await frame.evaluate(() => document.getElementById("tip").innerText);
        assert.match(tip, /project_overview[\s\S]*# Project overview/);
      },
      { timeout: 20_000, what: "the hover's preview" },
    );
    console.log(`screenshot: ${await screenshot(page, artifacts, "graph-hover")}`);
    await canvas.click({ position: at });
    await activeTab(page, "project_overview.md").waitFor({ state: "visible", timeout: 15_000 });
  });

  step("a click on an agent's file opens it; its hover names the agent", async () => {
    const at = await frame.evaluate(() => window.memoryGraph.screenOf("CLAUDE.md"));
    assert.ok(at !== undefined, "no CLAUDE.md node");
    const canvas = frame.locator("#graph canvas").first();
    await retry(
      async () => {
        await canvas.hover({ position: { x: at.x + 1, y: at.y } });
        await canvas.hover({ position: at });
        const tip = await frame.evaluate(() => document.getElementById("tip").innerText);
        assert.match(tip, /CLAUDE\.md[\s\S]*Claude Code's file/);
      },
      { timeout: 20_000, what: "the agent's file's hover" },
    );
    await canvas.click({ position: at });
    await activeTab(page, "CLAUDE.md").waitFor({ state: "visible", timeout: 15_000 });
  });

  step("a memory written from outside appears in the graph with its link", async () => {
    const before = await shown(frame);
    writeFileSync(
      join(workspace, ".serena", "memories", "graph_newcomer.md"),
      "# Written by an agent\n\nBuilds on [[project_overview]] and [[style_guide]].\n",
    );
    await retry(
      async () => {
        const names = await frame.evaluate(() => window.memoryGraph.names());
        assert.ok(names.includes("graph_newcomer"), "graph_newcomer not in the graph yet");
        const now = await shown(frame);
        assert.equal(now.memories, before.memories + 1);
        assert.equal(now.edges, before.edges + 2);
      },
      { timeout: 60_000, what: "graph_newcomer in the graph" },
    );
    assert.deepEqual(
      { nodes: (await shown(frame)).nodes, edges: (await shown(frame)).edges },
      (({ nodes, edges }) => ({ nodes, edges }))(cliGraph(workspace, EXAMPLE_FLAGS)),
    );
  });

  step(`first paint at ${PAINT_SIZE} memories`, async () => {
    await stopAll();
    const root = join(scratch, "big");
    const generated = JSON.parse(
      execFileSync(
        pythonForServer(),
        [
          "-c",
          "import json, sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]);" +
            "from run import generate; s = generate(Path(sys.argv[2]), int(sys.argv[3]));" +
            "print(json.dumps(s['flags']))",
          join(repo, "bench"),
          root,
          String(PAINT_SIZE),
        ],
        { env: { ...process.env, PYTHONPATH: join(repo, "server") } },
      ).toString(),
    );
    const store = join(root, "ws");
    mkdirSync(join(store, ".vscode"), { recursive: true });
    writeFileSync(
      join(store, ".vscode", "settings.json"),
      JSON.stringify({ "memoryLs.additionalFolders": generated[1].split(","), "memoryLs.globalFolder": generated[3] }),
    );
    const entry = await start({ workspace: store, inPlace: true });
    page = entry.page;
    const expected = cliGraph(store, generated);
    // The memories are listed (the status bar counts them) before the graph is asked for.
    await retry(
      async () => {
        const text = await page.locator(".statusbar").innerText();
        const count = Number((text.match(/([\d,]+) memories/) ?? ["", "0"])[1].replace(/,/g, ""));
        assert.ok(count >= PAINT_SIZE, text);
      },
      { timeout: 120_000, what: "the store listed" },
    );
    // Timed once every file's links are known: a graph drawn while the first indexing
    // still runs says "not indexed yet", and is closed and opened again.
    let paint;
    await retry(
      async () => {
        const before = paints(entry.session.userData).length;
        await runCommand(page, "Memory: Show Graph");
        frame = await graphFrame(page);
        await retry(
          async () => assert.ok(paints(entry.session.userData).length > before, "no first paint logged yet"),
          { timeout: 120_000, what: "the first paint" },
        );
        paint = paints(entry.session.userData).at(-1);
        const now = await shown(frame);
        if (now.status.includes("not indexed yet")) {
          await runCommand(page, "View: Close Editor");
          throw new Error(`drawn while indexing: ${now.status}`);
        }
        assert.ok(now.status.includes(`of ${expected.nodes}`), now.status);
      },
      { timeout: 240_000, interval: 2000, what: "a graph of the indexed store" },
    );
    const result = {
      scenario: "graph_first_paint",
      memories: PAINT_SIZE,
      firstPaintMs: paint.ms,
      viewMs: paint.viewMs,
      nodesShown: paint.nodes,
      linksShown: paint.edges,
      storeNodes: expected.nodes,
      storeLinks: expected.edges,
      loadavg: loadavg().map((value) => Math.round(value * 100) / 100),
      cpus: cpus().length,
      date: new Date().toISOString(),
    };
    console.log(`graph first paint at ${PAINT_SIZE} memories: ${JSON.stringify(result)}`);
    const results = join(repo, "bench", "results");
    mkdirSync(results, { recursive: true });
    writeFileSync(join(results, `graph-first-paint-${Date.now()}.json`), `${JSON.stringify(result, null, 2)}\n`);
    // The picture once the layout has settled and been fitted to the view.
    await settled(frame, 180_000);
    await evidence(page, artifacts, `graph-${PAINT_SIZE}`);
  });
});
