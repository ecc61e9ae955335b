// The editor's agents and terminal use memory-ls, in a real VS Code (code-server in
// headless Chromium): VS Code lists the extension's `memory-ls mcp` server, a tool call
// through VS Code's language model tools API (vscode.lm.invokeTool, made by the test's
// probe extension as an agent would) writes a memory routed as the command line routes
// it, and `memory-ls` runs in a new integrated terminal.
//   node --test client-vscode/test/editor/agents.test.mjs   (see client-vscode/scripts/test-all.sh)
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  closeQuickInput,
  evidence,
  notification,
  openBrowser,
  quickPickRow,
  repo,
  retry,
  runCommand,
  screenshot,
  startCodeServer,
  updateSettings,
} from "./harness.mjs";

const artifacts =
  process.env.MEMORY_LS_ARTIFACTS || join(repo, "client-vscode", "test-results", `agents-${Date.now()}`);
const TEST_TIMEOUT = 180_000;
// The fixture's folders, as the harness configures them for the editor.
const FLAGS = ["--additional-folders", "shared/feature,shared/feature_builder,shared/spec"];

let session;
let home;
let browser;
let page;
let failed = false;

/** A test whose failure keeps a screenshot of the editor. */
function step(name, body) {
  it(name, { timeout: TEST_TIMEOUT }, async () => {
    try {
      await body();
    } catch (error) {
      failed = true;
      if (page) {
        await screenshot(page, artifacts, name).catch(() => undefined);
      }
      throw error;
    }
  });
}

/** The command line of the package under test (the same code the VSIX carries). */
function cli(...args) {
  return execFileSync(session.python, ["-m", "memory_ls.cli", ...args], {
    cwd: session.workspace,
    encoding: "utf8",
    env: { ...process.env, PYTHONPATH: join(repo, "server") },
  }).trim();
}

/** Run a probe command and return what it wrote. */
async function probe(title, request) {
  const result = join(session.workspace, "probe-result.json");
  rmSync(result, { force: true });
  if (request !== undefined) {
    writeFileSync(join(session.workspace, "probe-request.json"), JSON.stringify(request));
  }
  await runCommand(page, `Probe: ${title}`);
  return retry(() => JSON.parse(readFileSync(result, "utf8")), { timeout: 30_000, what: `the probe's answer to ${title}` });
}

describe("the editor's agents and terminal use memory-ls", { timeout: 15 * 60_000 }, () => {
  before(async () => {
    // Its own HOME: Install the memory-ls Command… links into ~/.local/bin.
    home = mkdtempSync(join(tmpdir(), "memory-ls-agents-home-"));
    session = await startCodeServer({
      probe: true,
      home,
      // Tool calls made outside a chat are not held for a confirmation in the test.
      userSettings: { "chat.tools.autoApprove": true, "terminal.integrated.gpuAcceleration": "off" },
    });
    ({ browser, page } = await openBrowser(session.url));
  });

  after(async () => {
    await browser?.close().catch(() => undefined);
    await session?.stop({ keep: failed || process.env.MEMORY_LS_KEEP === "1" });
    if (!failed && home) {
      rmSync(home, { recursive: true, force: true });
    }
    if (failed) {
      console.log(`Agent tests failed: screenshots in ${artifacts}; kept ${session?.temp}`);
    }
  });

  step("VS Code lists the extension's memory-ls MCP server and starts it", async () => {
    await retry(
      async () => {
        await runCommand(page, "MCP: List Servers", { timeout: 10_000 });
        await quickPickRow(page, "memory-ls").first().waitFor({ state: "visible", timeout: 3000 });
      },
      { timeout: 90_000, what: "memory-ls among VS Code's MCP servers" },
    );
    await evidence(page, artifacts, "mcp-list-servers");
    await quickPickRow(page, "memory-ls").first().click();
    const start = quickPickRow(page, "Start Server");
    if (await start.first().isVisible({ timeout: 5000 }).catch(() => false)) {
      await start.first().click();
    }
    await closeQuickInput(page);
  });

  step("a tool call through VS Code's tools API writes a memory routed like the command line", async () => {
    let tool;
    await retry(
      async () => {
        const { tools } = await probe("List Language Model Tools");
        tool = tools.find((candidate) => /write_memory$/.test(candidate.name));
        assert.ok(tool, `no write_memory tool among ${tools.map((candidate) => candidate.name).join(", ")}`);
      },
      { timeout: 90_000, what: "the memory tools among VS Code's language model tools" },
    );
    const name = "FEATURE_agent_mode_notes";
    const expected = cli("route", name, ...FLAGS);
    assert.match(expected, /^FEATURE_agent_mode_notes -> shared\/feature\/FEATURE_agent_mode_notes\.md \(new; routed by prefix\)$/);
    const answer = await probe("Invoke Language Model Tool", {
      name: tool.name,
      input: { memory_name: name, content: "# Written in agent mode\n" },
    });
    assert.ok(answer.ok, answer.error);
    const written = join(session.workspace, "shared", "feature", `${name}.md`);
    assert.ok(existsSync(written), `${written} missing; the tool said ${answer.text.join(" ")}`);
    assert.match(readFileSync(written, "utf8"), /# Written in agent mode/);
    assert.equal(existsSync(join(session.workspace, ".serena", "memories", `${name}.md`)), false);
    assert.match(cli("route", name, ...FLAGS), /\(exists; routed by existing\)|exists/);
    console.log(`tool ${tool.name} answered: ${answer.text.join(" ").slice(0, 300)}`);
  });

  step("memoryLs.mcp.enabled off takes the server off VS Code's list", async () => {
    updateSettings(session.workspaceSettings, { "memoryLs.mcp.enabled": false });
    await retry(
      async () => {
        await runCommand(page, "MCP: List Servers", { timeout: 10_000 });
        await page.waitForTimeout(500);
        assert.equal(await quickPickRow(page, "memory-ls").count(), 0);
      },
      { timeout: 30_000, what: "memory-ls to leave the MCP server list" },
    );
    await closeQuickInput(page);
    updateSettings(session.workspaceSettings, { "memoryLs.mcp.enabled": undefined });
  });

  step("memory-ls --version runs in a new integrated terminal", async () => {
    const version = cli("--version");
    const out = join(session.workspace, "terminal-version.txt");
    const which = join(session.workspace, "terminal-which.txt");
    await runCommand(page, "Terminal: Create New Terminal");
    const terminal = page.locator(".terminal-wrapper.active .xterm");
    await terminal.waitFor({ timeout: 30_000 });
    await retry(
      async () => {
        await terminal.click();
        await page.keyboard.type(`command -v memory-ls > ${which}; memory-ls --version | tee ${out}\n`);
        await retry(() => assert.equal(readFileSync(out, "utf8").trim(), version), { timeout: 5000, what: "the version" });
      },
      { timeout: 60_000, what: "memory-ls --version in the terminal" },
    );
    // The extension's launcher, not a memory-ls installed elsewhere.
    const found = readFileSync(which, "utf8").trim();
    assert.match(found, /\/User\/globalStorage\/[^/]+\/bin\/memory-ls$/);
    assert.ok(found.startsWith(session.userData), found);
    await retry(async () => assert.match(await terminal.innerText(), new RegExp(version.replace(/\./g, "\\."))), {
      timeout: 10_000,
      what: "the version on the terminal's screen",
    });
    await evidence(page, artifacts, "terminal-memory-ls-version");
  });

  step("Memory: Install the memory-ls Command… shows how to have it outside the editor", async () => {
    await runCommand(page, "Memory: Install the memory-ls Command…");
    const dialog = page.locator(".monaco-dialog-box");
    await dialog.filter({ hasText: "Install the memory-ls command" }).waitFor({ timeout: 15_000 });
    assert.match(await dialog.innerText(), /ln -sf '.*\/bin\/memory-ls' .*\.local\/bin\/memory-ls/);
    await evidence(page, artifacts, "install-command");
    await dialog.locator(".monaco-button", { hasText: "Link into ~/.local/bin" }).click();
    const link = join(home, ".local", "bin", "memory-ls");
    await retry(() => assert.ok(lstatSync(link).isSymbolicLink()), { timeout: 15_000, what: `${link}` });
    assert.match(readlinkSync(link), /\/User\/globalStorage\/[^/]+\/bin\/memory-ls$/);
    // The linked command runs outside the editor too.
    assert.equal(execFileSync(link, ["--version"], { encoding: "utf8" }).trim(), cli("--version"));
    await notification(page, `Linked ${link}`).first().waitFor({ timeout: 10_000 });
  });
});
