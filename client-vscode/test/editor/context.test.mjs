// What the agent loads, in a real VS Code (code-server in headless Chromium): with a
// CLAUDE.md open in a git repository, the "What the Agent Loads" view lists the files
// Claude Code loads in load order (the user's ~/.claude/CLAUDE.md from the editor's own
// HOME, CLAUDE.md, the file it imports) with the estimated tokens the core computes, and
// the total against the budget; a click opens a file, a save is counted, and the agent
// chosen from the view's title bar (Codex) changes the list.
//   node --test client-vscode/test/editor/context.test.mjs   (see client-vscode/scripts/test-all.sh)
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe } from "node:test";
import {
  activeTab,
  editorSuite,
  evidence,
  openFile,
  paneRows,
  pythonForServer,
  quickPickRow,
  repo,
  retry,
  runCommand,
  showOnlyPane,
  sidebarPane,
} from "./harness.mjs";

const TEST_TIMEOUT = 240_000;
const VIEW = "What the Agent Loads";
const CHOOSE = "Memory: Choose the Agent for What the Agent Loads…";

const { artifacts, scratch, start, step } = editorSuite("context", { timeout: TEST_TIMEOUT });

function write(path, text) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** What the core answers (this checkout's server code), with the editor's HOME: [label, description] rows. */
function expectedRows(root, home, agent, file) {
  const script = [
    "import json, sys",
    "from memory_ls.core.operations.context import agent_context",
    "found = agent_context(sys.argv[1], sys.argv[2], sys.argv[3], environ={'HOME': sys.argv[4]})",
    "print(json.dumps(found.to_json()))",
  ].join("\n");
  const output = execFileSync(pythonForServer(), ["-c", script, agent, root, file, home], {
    env: { ...process.env, PYTHONPATH: join(repo, "server") },
    encoding: "utf8",
  });
  const answer = JSON.parse(output);
  const number = (count) => count.toLocaleString("en-US");
  const percent = Math.round((100 * answer.total) / answer.budget);
  return [
    [`Total: ${number(answer.total)} of ${number(answer.budget)} tokens (${percent}%)`, ""],
    ...answer.loaded.map((item) => [item.shown, `${number(item.tokens)} token${item.tokens === 1 ? "" : "s"}`]),
  ];
}

async function expectRows(page, expected, what) {
  await retry(
    async () => {
      const rows = await paneRows(page, VIEW);
      assert.deepEqual(rows, expected);
    },
    { timeout: 60_000, what },
  );
}

describe("what the agent loads, for the active editor", { timeout: 10 * 60_000 }, () => {
  const workspace = join(scratch, "repo");
  const home = join(scratch, "home");
  write(join(workspace, "CLAUDE.md"), `# Project\n\nSee @docs/setup.md.\n${"Keep the tests green.\n".repeat(12)}`);
  write(join(workspace, "docs", "setup.md"), "# Setup\n\nRun `make`.\n");
  write(join(workspace, "AGENTS.md"), "# Agents\n\nUse ruff before every commit.\n");
  write(join(workspace, "src", "app.py"), "print('hi')\n");
  write(join(workspace, ".serena", "memories", "project_overview.md"), "# Overview\n");
  write(join(home, ".claude", "CLAUDE.md"), "# Mine\n\nBe brief.\n");
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: workspace });
  let page;

  step("the view lists what Claude Code loads for the open CLAUDE.md, and a click opens a file", async () => {
    ({ page } = await start({ workspace, inPlace: true, home }));
    await openFile(page, "CLAUDE.md");
    await runCommand(page, `Explorer: Focus on ${VIEW} View`);
    await showOnlyPane(page, VIEW);
    await activeTab(page, "CLAUDE.md").click();
    const expected = expectedRows(workspace, home, "claude", "CLAUDE.md");
    assert.deepEqual(
      expected.slice(1).map(([label]) => label),
      ["~/.claude/CLAUDE.md", "CLAUDE.md", "docs/setup.md"],
    );
    await expectRows(page, expected, "Claude Code's files in the view");
    assert.match(await sidebarPane(page, VIEW).locator(".pane-header").innerText(), /Claude Code · CLAUDE\.md/);
    await evidence(page, artifacts, "what-the-agent-loads");

    await sidebarPane(page, VIEW).locator(".monaco-list-row", { hasText: "docs/setup.md" }).click();
    await activeTab(page, "setup.md").waitFor({ state: "visible", timeout: 20_000 });
    // The view now follows docs/setup.md: the same files (it is loaded for every file).
    await expectRows(page, expectedRows(workspace, home, "claude", "docs/setup.md"), "the files for docs/setup.md");
  });

  step("a save is counted", async () => {
    const before = await paneRows(page, VIEW);
    await page.locator(".editor-instance .view-lines").first().click();
    await page.keyboard.press("Control+End");
    // No Enter: it would accept a completion item if one showed.
    await page.keyboard.type("Then run make test and read the logs of every failure.");
    await page.keyboard.press("Escape");
    await page.keyboard.press("Control+S");
    await retry(
      async () => {
        const expected = expectedRows(workspace, home, "claude", "docs/setup.md");
        assert.notDeepEqual(expected[3], before[3], "the file on disk is not saved yet");
        assert.deepEqual(await paneRows(page, VIEW), expected);
      },
      { timeout: 60_000, what: "the saved file's tokens in the view" },
    );
  });

  step("the agent chosen from the view's title bar changes the list", async () => {
    const header = sidebarPane(page, VIEW).locator(".pane-header");
    await header.hover();
    await header.locator(`.action-label[aria-label="${CHOOSE.replace("Memory: ", "")}"]`).click();
    const codex = quickPickRow(page, "Codex").first();
    await codex.waitFor({ state: "visible", timeout: 10_000 });
    await codex.click();
    await expectRows(page, expectedRows(workspace, home, "codex", "docs/setup.md"), "Codex's files in the view");
    assert.match(await header.innerText(), /Codex · docs\/setup\.md/);
    await evidence(page, artifacts, "what-codex-loads");

    // From the palette too; Claude Code again.
    await runCommand(page, CHOOSE);
    await quickPickRow(page, "Claude Code").first().click();
    await expectRows(page, expectedRows(workspace, home, "claude", "docs/setup.md"), "Claude Code's files again");
  });
});
