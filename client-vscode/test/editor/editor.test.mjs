// The extension in a real VS Code (code-server in headless Chromium): the palette,
// completion, Save Selection as Memory, Open Memory, Problems and the Memories view.
//   node --test client-vscode/test/editor/editor.test.mjs   (see client-vscode/scripts/test-all.sh)
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  activeTab,
  closeQuickInput,
  escapeRegExp,
  evidence,
  expectSuggestions,
  focusEditor,
  notification,
  openBrowser,
  openFile,
  palette,
  pickLabels,
  quickPickRow,
  repo,
  retry,
  runCommand,
  screenshot,
  startCodeServer,
  updateSettings,
} from "./harness.mjs";

const artifacts =
  process.env.MEMORY_LS_ARTIFACTS || join(repo, "client-vscode", "test-results", `editor-${Date.now()}`);
const manifest = JSON.parse(readFileSync(join(repo, "package.json"), "utf8"));
const TEST_TIMEOUT = 120_000;

let session;
let browser;
let page;
const failures = [];

/** A test whose failure keeps a screenshot of the editor. */
function step(name, body) {
  it(name, { timeout: TEST_TIMEOUT }, async () => {
    try {
      await body();
    } catch (error) {
      if (page) {
        try {
          failures.push(await screenshot(page, artifacts, name));
        } catch (shotError) {
          failures.push(`(no screenshot for "${name}": ${shotError.message})`);
        }
      }
      throw error;
    }
  });
}

/** The text of the extension's status bar item ("7 memories", "Memories: server stopped"). */
async function statusText() {
  const item = page.locator(".statusbar-item", { hasText: /\bmemor(y|ies)\b|^Memories/i }).first();
  return (await item.innerText({ timeout: 1000 })).trim();
}

describe("memory-ls in VS Code (code-server)", { timeout: 15 * 60_000 }, () => {
  before(async () => {
    try {
      session = await startCodeServer();
      ({ browser, page } = await openBrowser(session.url));
      // The extension is active and its server answered memory.list.
      await retry(
        async () => {
          const text = await statusText();
          assert.match(text, /\d+ memor(y|ies)/);
        },
        { timeout: 90_000, what: "the status bar to show the number of memories" },
      );
    } catch (error) {
      failures.push(page ? await screenshot(page, artifacts, "startup") : `(start-up failed: ${error.message})`);
      throw error;
    }
  });

  after(async () => {
    const failed = failures.length > 0;
    await browser?.close().catch(() => undefined);
    await session?.stop({ keep: failed || process.env.MEMORY_LS_KEEP === "1" });
    if (failed) {
      console.log(`Editor test failures: screenshots in ${artifacts}`);
      for (const file of failures) {
        console.log(`  ${file}`);
      }
      console.log(`code-server log and the temp workspace are kept in ${session?.temp}`);
    } else {
      console.log(`Editor tests: no failures, no screenshots (the folder would be ${artifacts})`);
    }
  });

  step("the Memory commands are in the palette", async () => {
    // Save Selection as Memory… is offered when there is a selection.
    await openFile(page, "notes.md");
    await page.keyboard.press("Control+A");
    const titles = manifest.contributes.commands
      .filter((command) => !manifest.contributes.menus.commandPalette.some((m) => m.command === command.command && m.when === "false"))
      .map((command) => `${command.category}: ${command.title}`);
    assert.ok(titles.length >= 10, `expected at least 10 palette commands, got ${titles.length}`);
    for (const title of titles) {
      await retry(
        async () => {
          await palette(page, `>${title}`);
          await quickPickRow(page, title).first().waitFor({ state: "visible", timeout: 2000 });
        },
        { timeout: 20_000, what: `"${title}" in the palette` },
      );
    }
    await page.keyboard.press("Escape");
  });

  step("completion after [[ lists memory names and accepting one writes the name", async () => {
    await openFile(page, "notes.md");
    await page.keyboard.press("Control+End");
    await page.keyboard.press("Enter");
    await page.keyboard.type("See [[");
    const rows = await expectSuggestions(page, ["FEATURE_checkout", "SPEC_payments_api", "project_overview"]);
    await page.keyboard.type("FEATURE_ch");
    await retry(
      async () => {
        const first = await rows.first().innerText();
        assert.match(first, /FEATURE_checkout/);
      },
      { timeout: 10_000, what: "FEATURE_checkout to be the first suggestion" },
    );
    await page.keyboard.press("Enter");
    await page.keyboard.press("Control+S");
    await retry(
      async () => {
        const text = readFileSync(join(session.workspace, "notes.md"), "utf8");
        assert.match(text, /^See \[\[FEATURE_checkout\]\]$/m);
      },
      { timeout: 10_000, what: "notes.md to hold the accepted name" },
    );
  });

  step("Save Selection as Memory with an ALL-CAPS name writes into the matching additional folder", async () => {
    await openFile(page, "notes.md");
    await page.keyboard.press("Control+A");
    await runCommand(page, "Memory: Save Selection as Memory…");
    const input = page.locator(".quick-input-widget input");
    await page.locator(".quick-input-title", { hasText: "Save Selection as Memory" }).waitFor({ timeout: 10_000 });
    await input.fill("FEATURE_editor_notes");
    // The route is shown before saving.
    await page
      .locator(".quick-input-message", { hasText: "shared/feature/FEATURE_editor_notes.md" })
      .waitFor({ timeout: 15_000 });
    await input.press("Enter");
    const target = join(session.workspace, "shared", "feature", "FEATURE_editor_notes.md");
    await retry(
      async () => {
        assert.ok(existsSync(target), `${target} was not written`);
        const text = readFileSync(target, "utf8");
        assert.match(text, /# Scratch notes/);
        assert.match(text, /See \[\[FEATURE_checkout\]\]/);
      },
      { timeout: 15_000, what: "the saved memory on disk" },
    );
    assert.equal(existsSync(join(session.workspace, ".serena", "memories", "FEATURE_editor_notes.md")), false);
    await notification(page, "Saved memory FEATURE_editor_notes").waitFor({ timeout: 10_000 });
  });

  step("Open Memory opens the right file", async () => {
    await runCommand(page, "Memory: Open Memory…");
    await page.locator(".quick-input-title", { hasText: "Open Memory" }).waitFor({ timeout: 10_000 });
    await page.locator(".quick-input-widget input").fill("payments_api");
    const row = quickPickRow(page, "SPEC_payments_api");
    await row.waitFor({ timeout: 10_000 });
    assert.match(await row.innerText(), /shared\/spec · project/);
    await row.click();
    await activeTab(page, "SPEC_payments_api.md").waitFor({ timeout: 10_000 });
    await page.locator(".quick-input-widget").waitFor({ state: "hidden", timeout: 5000 });
    await retry(
      async () => {
        const text = await page.locator(".editor-instance .view-lines").first().innerText();
        assert.match(text.replace(/\u00a0/g, " "), /Unique marker: the payments spec fixture/);
      },
      { timeout: 10_000, what: "the opened memory's text" },
    );
  });

  step("Search Memories lists matches and opens the memory at the line", async () => {
    await runCommand(page, "Memory: Search Memories…");
    await page.locator(".quick-input-title", { hasText: "Search Memories" }).waitFor({ timeout: 10_000 });
    await page.locator(".quick-input-widget input").fill("amount in cents");
    const row = quickPickRow(page, "SPEC_payments_api");
    await row.waitFor({ timeout: 10_000 });
    assert.match(await row.innerText(), /line 3/);
    assert.match(await row.innerText(), /POST \/payments takes an amount in cents/);
    await row.click();
    await activeTab(page, "SPEC_payments_api.md").waitFor({ timeout: 10_000 });
    await page.locator(".statusbar-item", { hasText: /^Ln 3, Col 1$/ }).waitFor({ timeout: 10_000 });
  });

  step("Show Memories About This File lists the memories that mention it and opens one at the line", async () => {
    await openFile(page, "src/payments/charge.py");
    await runCommand(page, "Memory: Show Memories About This File");
    await page
      .locator(".quick-input-title", { hasText: "Memories About src/payments/charge.py" })
      .waitFor({ timeout: 10_000 });
    const row = quickPickRow(page, "SPEC_payments_api");
    await row.waitFor({ timeout: 10_000 });
    const text = await row.innerText();
    assert.match(text, /Payments API specification/);
    assert.match(text, /5: Charged by \[charge\]\(\.\.\/\.\.\/src\/payments\/charge\.py\)/);
    // Only the memory that mentions it.
    assert.equal(await page.locator(".quick-input-list .monaco-list-row").count(), 1);
    await row.click();
    await activeTab(page, "SPEC_payments_api.md").waitFor({ timeout: 10_000 });
    await page.locator(".statusbar-item", { hasText: /^Ln 5, Col 1$/ }).waitFor({ timeout: 10_000 });
  });

  step("a broken link shows in the Problems panel", async () => {
    await openFile(page, ".serena/memories/project_overview.md");
    await focusEditor(page);
    await page.keyboard.press("Control+Shift+M");
    const problem = page.locator(".markers-panel .monaco-list-row", { hasText: "deployment_checklist" });
    await retry(
      async () => {
        await problem.first().waitFor({ state: "visible", timeout: 3000 });
        const text = await problem.first().innerText();
        assert.match(text, /broken-link/);
        assert.match(text, /memory-ls/);
      },
      { timeout: 30_000, what: "the broken-link problem" },
    );
    // The link that resolves is not a problem.
    assert.equal(await page.locator(".markers-panel .monaco-list-row", { hasText: "FEATURE_checkout" }).count(), 0);
  });

  step("the Memories view lists memories by folder", async () => {
    // Give the Memories view the whole side bar: its list only renders the rows in sight.
    const folders = page.locator(".pane-header", { hasText: /^\s*workspace\s*$/i }).first();
    if ((await folders.getAttribute("aria-expanded")) === "true") {
      await folders.click();
    }
    await runCommand(page, "Explorer: Focus on Memories View");
    const pane = page.locator(".pane", { has: page.locator(".pane-header", { hasText: "Memories" }) });
    const rows = pane.locator(".monaco-list-row");
    let tree = [];
    await retry(
      async () => {
        tree = await rows.evaluateAll((elements) =>
          elements.map((element) => ({
            level: Number(element.getAttribute("aria-level")),
            label: element.querySelector(".label-name")?.textContent ?? "",
          })),
        );
        const labels = tree.map((row) => `${row.level}:${row.label}`);
        const expected = [
          "1:Project",
          "2:.serena/memories",
          "3:auth/login_flow",
          "3:project_overview",
          "3:suggested_commands",
          "2:shared/feature",
          "3:FEATURE_checkout",
          "3:FEATURE_editor_notes",
          "2:shared/feature_builder",
          "3:FEATURE_BUILDER_pipeline",
          "2:shared/spec",
          "3:SPEC_payments_api",
          "1:Global",
        ];
        assert.deepEqual(labels.slice(0, expected.length), expected);
        const globalRows = labels.slice(expected.length);
        assert.equal(globalRows.length, 2, `global rows: ${globalRows.join(", ")}`);
        assert.match(globalRows[0], /^2:/);
        assert.equal(globalRows[1], "3:editor_tips");
      },
      { timeout: 30_000, what: "the Memories view's rows" },
    );
    const memories = tree.filter((row) => row.level === 3).length;
    assert.equal(await statusText(), `${memories} memories`);
    // The context menu of a memory.
    await rows.filter({ hasText: "FEATURE_checkout" }).first().click({ button: "right" });
    const menu = page.locator(".monaco-menu");
    await menu.locator(".action-label", { hasText: "Move/Rename Memory…" }).waitFor({ timeout: 10_000 });
    const entries = await menu.locator(".action-label").allInnerTexts();
    for (const entry of ["Open Memory…", "Move/Rename Memory…", "Delete Memory…", "Reveal in Explorer View"]) {
      assert.ok(entries.includes(entry), `${entry} not in the context menu: ${entries.join(", ")}`);
    }
    await page.keyboard.press("Escape");
  });
  step("a memory an agent writes on disk appears in the Memories view", async () => {
    const pane = page.locator(".pane", { has: page.locator(".pane-header", { hasText: "Memories" }) });
    const row = pane.locator(".monaco-list-row", { hasText: "SPEC_from_agent" });
    assert.equal(await row.count(), 0);
    writeFileSync(join(session.workspace, "shared", "spec", "SPEC_from_agent.md"), "# Written by an agent\n");
    await row.first().waitFor({ timeout: 15_000 });
    const before = Number((await statusText()).match(/^(\d+) memories$/)?.[1]);
    rmSync(join(session.workspace, "shared", "spec", "SPEC_from_agent.md"));
    await row.first().waitFor({ state: "detached", timeout: 15_000 });
    await retry(async () => assert.equal(await statusText(), `${before - 1} memories`), {
      timeout: 10_000,
      what: "the status bar count to drop",
    });
  });

  step("Move/Rename re-routes a memory and Delete asks before deleting", async () => {
    const feature = join(session.workspace, "shared", "feature", "FEATURE_editor_notes.md");
    const spec = join(session.workspace, "shared", "spec", "SPEC_editor_notes.md");
    assert.ok(existsSync(feature));
    await runCommand(page, "Memory: Move/Rename Memory…");
    await page.locator(".quick-input-title", { hasText: "Move/Rename Memory" }).waitFor({ timeout: 10_000 });
    await page.locator(".quick-input-widget input").fill("editor_notes");
    await quickPickRow(page, "FEATURE_editor_notes").click();
    await page.locator(".quick-input-title", { hasText: "Move/Rename Memory FEATURE_editor_notes" }).waitFor({ timeout: 10_000 });
    const input = page.locator(".quick-input-widget input");
    await input.fill("SPEC_editor_notes");
    await page.locator(".quick-input-message", { hasText: "shared/spec/SPEC_editor_notes.md" }).waitFor({ timeout: 15_000 });
    await input.press("Enter");
    await retry(async () => assert.ok(existsSync(spec) && !existsSync(feature), "not moved yet"), {
      timeout: 15_000,
      what: "the memory to move to shared/spec",
    });

    await runCommand(page, "Memory: Delete Memory…");
    await page.locator(".quick-input-title", { hasText: "Delete Memory" }).waitFor({ timeout: 10_000 });
    await page.locator(".quick-input-widget input").fill("SPEC_editor");
    await quickPickRow(page, "SPEC_editor_notes").click();
    const dialog = page.locator(".monaco-dialog-box");
    await dialog.filter({ hasText: "Delete memory SPEC_editor_notes?" }).waitFor({ timeout: 10_000 });
    // Cancel first: nothing is deleted.
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden", timeout: 5000 });
    assert.ok(existsSync(spec), "deleted without confirmation");
    await runCommand(page, "Memory: Delete Memory…");
    await page.locator(".quick-input-title", { hasText: "Delete Memory" }).waitFor({ timeout: 10_000 });
    await page.locator(".quick-input-widget input").fill("SPEC_editor");
    await quickPickRow(page, "SPEC_editor_notes").click();
    await dialog.locator(".monaco-button", { hasText: /^Delete$/ }).click();
    await retry(async () => assert.equal(existsSync(spec), false), { timeout: 15_000, what: "the memory to be deleted" });
  });

  step("settings are applied live: a severity set to off removes the problem", async () => {
    await openFile(page, ".serena/memories/project_overview.md");
    await page.keyboard.press("Control+Shift+M");
    const problem = page.locator(".markers-panel .monaco-list-row", { hasText: "deployment_checklist" });
    await problem.first().waitFor({ state: "visible", timeout: 30_000 });
    updateSettings(session.workspaceSettings, { "memoryLs.diagnostics": { "broken-link": "off" } });
    await problem.first().waitFor({ state: "detached", timeout: 30_000 });
    updateSettings(session.workspaceSettings, { "memoryLs.diagnostics": undefined });
    await problem.first().waitFor({ state: "visible", timeout: 30_000 });
  });

  step("Rename File to a Valid Name from the palette offers only invalid names, or says there are none", async () => {
    await runCommand(page, "Memory: Rename File to a Valid Name…");
    await notification(page, "Every memory has a valid name").first().waitFor({ timeout: 15_000 });
    const memories = join(session.workspace, ".serena", "memories");
    const invalid = join(memories, "draft?notes.md");
    writeFileSync(invalid, "# Draft\n");
    await runCommand(page, "Memory: Rename File to a Valid Name…");
    await page.locator(".quick-input-title", { hasText: "Rename File to a Valid Name" }).waitFor({ timeout: 10_000 });
    await retry(
      async () => assert.deepEqual(await pickLabels(page), ["draft?notes"]),
      { timeout: 10_000, what: "only the invalid name in the pick" },
    );
    await evidence(page, artifacts, "rename-invalid-pick");
    await quickPickRow(page, "draft?notes").click();
    const input = page.locator(".quick-input-widget input");
    await page.locator(".quick-input-title", { hasText: "Rename draft?notes" }).waitFor({ timeout: 10_000 });
    assert.equal(await input.inputValue(), "draft_notes");
    await input.press("Enter");
    const renamed = join(memories, "draft_notes.md");
    await retry(async () => assert.ok(existsSync(renamed) && !existsSync(invalid), "not renamed yet"), {
      timeout: 15_000,
      what: "the file to be renamed",
    });
    // No false "read-only" message anywhere.
    assert.equal(await notification(page, "read-only").count(), 0);
    rmSync(renamed);
  });

  step("the Settings UI accepts every diagnostic code the server has", async () => {
    const codes = JSON.parse(
      execFileSync(session.python, ["-c", "import json; from memory_ls.config import DIAGNOSTIC_CODES as c; print(json.dumps(c))"], {
        encoding: "utf8",
        env: { ...process.env, PYTHONPATH: join(repo, "server") },
      }),
    );
    assert.ok(codes.includes("possible-secret") && codes.includes("stale-path") && codes.includes("context-budget"));
    // Every code, plus one the server does not have: only that one is refused.
    const severities = Object.fromEntries(codes.map((code) => [code, "information"]));
    updateSettings(session.workspaceSettings, { "memoryLs.diagnostics": { ...severities, "no-such-code": "off" } });
    await openFile(page, ".vscode/settings.json");
    await page.keyboard.press("Control+Shift+M");
    const notAllowed = page.locator(".markers-panel .monaco-list-row", { hasText: /Property \S+ is not allowed/ });
    await retry(
      async () => {
        const texts = await notAllowed.allInnerTexts();
        assert.equal(texts.length, 1, texts.join("\n"));
        assert.match(texts[0], /Property no-such-code is not allowed/);
      },
      { timeout: 30_000, what: "settings.json validated against the extension's schema" },
    );
    // The server obeys every code, and says which one it ignored.
    await notification(page, "Ignored unknown settings in workspace configuration (memoryLs): diagnostics.no-such-code")
      .first()
      .waitFor({ timeout: 30_000 });
    await runCommand(page, "Notifications: Clear All Notifications");
    await runCommand(page, "View: Close All Editors");
    updateSettings(session.workspaceSettings, { "memoryLs.diagnostics": severities });
    // The Settings UI shows the object as key/value rows: every code, no complaint.
    await runCommand(page, "Preferences: Open Workspace Settings");
    const editor = page.locator(".settings-editor");
    await editor.waitFor({ timeout: 15_000 });
    // The search box is a small editor: click it and type.
    await editor.locator(".settings-header .suggest-input-container .monaco-editor").first().click();
    await page.keyboard.press("Control+A");
    await page.keyboard.type("memoryLs.diagnostics");
    const item = editor.locator(".setting-item-contents", { hasText: "Severity per diagnostic code" });
    await retry(
      async () => {
        const text = await item.first().innerText();
        for (const code of codes) {
          assert.match(text, new RegExp(`\\b${code}\\b`), `${code} in the Settings UI`);
        }
        assert.doesNotMatch(text, /not allowed/);
      },
      { timeout: 30_000, what: "every code in the Settings UI" },
    );
    await evidence(page, artifacts, "settings-every-code");
    await runCommand(page, "View: Close All Editors");
    updateSettings(session.workspaceSettings, { "memoryLs.diagnostics": undefined });
  });

  step("Search Memories: #tag filters by tag, and a typo gets the closest words' results", async () => {
    await runCommand(page, "Memory: Search Memories…");
    await page.locator(".quick-input-title", { hasText: "Search Memories" }).waitFor({ timeout: 10_000 });
    const input = page.locator(".quick-input-widget input");
    // SPEC_payments_api has the word, FEATURE_checkout the tag.
    await input.fill("#payments");
    await retry(async () => assert.deepEqual(await pickLabels(page), ["FEATURE_checkout"]), {
      timeout: 15_000,
      what: "only the memory tagged payments",
    });
    await input.fill("paymnt");
    await page.locator(".quick-input-title", { hasText: "no exact match; closest: payments" }).waitFor({ timeout: 15_000 });
    await retry(async () => assert.ok((await pickLabels(page)).includes("SPEC_payments_api")), {
      timeout: 15_000,
      what: "the closest word's results",
    });
    await evidence(page, artifacts, "search-typo-closest");
    await input.fill("zqxwvj");
    await page.locator(".quick-input-title", { hasText: "Search Memories: no match" }).waitFor({ timeout: 15_000 });
    await closeQuickInput(page);
  });

  step("the Outline lists each heading of a memory once", async () => {
    writeFileSync(
      join(session.workspace, ".serena", "memories", "outline_check.md"),
      "# Release checklist\n\n## Build the wheel\n\ntext\n\n## Tag the release\n\nmore\n",
    );
    await openFile(page, "outline_check.md");
    await runCommand(page, "Explorer: Focus on Outline View");
    const outline = page.locator(".pane", { has: page.locator(".pane-header", { hasText: /^\s*Outline/i }) });
    const labels = async () =>
      (await outline.locator(".monaco-list-row .label-name").allInnerTexts()).map((text) => text.trim());
    await retry(
      // VS Code's Markdown extension's entries (ours, without the #, would come twice).
      async () => assert.deepEqual(await labels(), ["# Release checklist", "## Build the wheel", "## Tag the release"]),
      { timeout: 30_000, what: "one Outline row per heading" },
    );
    // Still once after the server had time to answer too.
    await page.waitForTimeout(2000);
    assert.deepEqual(await labels(), ["# Release checklist", "## Build the wheel", "## Tag the release"]);
    await evidence(page, artifacts, "outline-once");
    rmSync(join(session.workspace, ".serena", "memories", "outline_check.md"));
    await runCommand(page, "View: Close All Editors");
  });

  step("stale-path appears after git init and follows a file's removal, without a restart", async () => {
    const memory = join(session.workspace, ".serena", "memories", "deploy_notes.md");
    writeFileSync(memory, "# Deploy\n\nRun `scripts/deploy.sh` after the build.\n");
    await page.keyboard.press("Control+Shift+M");
    const stale = page.locator(".markers-panel .monaco-list-row", { hasText: "scripts/deploy.sh" });
    const deployRow = page.locator(".markers-panel .monaco-list-row", { hasText: "deploy_notes.md" });
    // Not a repository: stale-path is off (the memory is known: it is in the view).
    await page.locator(".statusbar-item", { hasText: /\bmemories\b/ }).first().waitFor();
    await page.waitForTimeout(1500);
    assert.equal(await stale.count(), 0);
    execFileSync("git", ["init", "-q"], { cwd: session.workspace });
    await retry(async () => assert.match(await stale.first().innerText(), /stale-path/), {
      timeout: 60_000,
      what: "stale-path after git init",
    });
    await evidence(page, artifacts, "stale-path-after-git-init");
    mkdirSync(join(session.workspace, "scripts"));
    writeFileSync(join(session.workspace, "scripts", "deploy.sh"), "echo deploy\n");
    await stale.first().waitFor({ state: "detached", timeout: 30_000 });
    rmSync(join(session.workspace, "scripts", "deploy.sh"));
    await stale.first().waitFor({ state: "visible", timeout: 30_000 });
    rmSync(memory);
    await deployRow.first().waitFor({ state: "detached", timeout: 30_000 });
    rmSync(join(session.workspace, ".git"), { recursive: true, force: true });
  });

  step("Show Changes Since… shows the memories changed since the merge base in an output channel", async () => {
    const identity = { GIT_AUTHOR_NAME: "Test", GIT_AUTHOR_EMAIL: "test@example.invalid" };
    const env = { ...process.env, ...identity, GIT_COMMITTER_NAME: "Test", GIT_COMMITTER_EMAIL: "test@example.invalid" };
    const git = (...args) => execFileSync("git", args, { cwd: session.workspace, env, stdio: "pipe" });
    git("init", "-q", "-b", "main");
    git("add", "-A");
    git("commit", "-qm", "base");
    writeFileSync(join(session.workspace, ".serena", "memories", "changes_probe.md"), "# Probe\n\nSee [[no_such_probe]].\n");
    await runCommand(page, "Memory: Show Changes Since…");
    await page.locator(".quick-input-title", { hasText: "Memory: Show Changes Since…" }).waitFor({ timeout: 10_000 });
    await page.keyboard.press("Enter"); // empty: the merge base (here HEAD: uncommitted changes)
    const output = page.locator(".part.panel .monaco-editor .view-lines");
    await retry(
      async () => {
        const text = (await output.first().innerText({ timeout: 1000 })).replace(/\u00a0/g, " ");
        assert.match(text, /Memories changed since main \(/);
        assert.match(text, /added +changes_probe +\.serena\/memories\/changes_probe\.md/);
        assert.match(text, /warning broken-link No memory named no_such_probe/);
      },
      { timeout: 30_000, what: "the Memory Changes output" },
    );
    rmSync(join(session.workspace, ".serena", "memories", "changes_probe.md"));
    rmSync(join(session.workspace, ".git"), { recursive: true, force: true });
  });

  step("a missing Python gets one message; Choose Python… opens the setting; restoring it restarts the server", async () => {
    const missing = join(session.temp, "no-such-python", "bin", "python3");
    // A workspace setting over the user setting (the interpreter the other tests use).
    updateSettings(session.workspaceSettings, { "memoryLs.server.pythonPath": missing });
    const message = notification(page, "Memory LS needs CPython 3.10");
    await message.first().waitFor({ timeout: 30_000 });
    assert.match(await message.first().innerText(), new RegExp(`${escapeRegExp(missing)} .* was not found\\. Install CPython`));
    const toast = page.locator(".notification-list-item", { has: message });
    const buttons = await toast.locator(".monaco-button").allInnerTexts();
    assert.deepEqual(buttons.map((text) => text.trim()).filter(Boolean), ["Choose Python…"]);
    await retry(async () => assert.match(await statusText(), /server stopped/), {
      timeout: 10_000,
      what: "the status bar to say the server stopped",
    });
    // The Memories view says why it is empty, with buttons.
    const welcome = page.locator(".pane", { has: page.locator(".pane-header", { hasText: "Memories" }) }).locator(".welcome-view");
    await welcome.filter({ hasText: "language server is not running" }).waitFor({ timeout: 10_000 });
    await welcome.locator(".monaco-button", { hasText: "Restart Server" }).waitFor({ timeout: 5000 });
    // Choose Python… opens the settings editor on the setting, in a tab that shows it.
    await toast.locator(".monaco-button", { hasText: "Choose Python…" }).first().click();
    const editor = page.locator(".settings-editor");
    await editor.waitFor({ timeout: 15_000 });
    await retry(
      async () => {
        const rows = editor.locator(".setting-item-contents");
        assert.equal(await editor.locator(".no-results-message").filter({ visible: true }).count(), 0, "No Settings Found");
        const texts = await rows.allInnerTexts();
        assert.equal(texts.length, 1, `settings shown: ${texts.join(" | ")}`);
        assert.match(texts[0], /Python Path/);
        assert.match(texts[0], /CPython interpreter \(3\.10–3\.14\)/);
      },
      { timeout: 15_000, what: "the pythonPath setting in the settings editor" },
    );
    await page.keyboard.press("Control+W");
    updateSettings(session.workspaceSettings, { "memoryLs.server.pythonPath": undefined });
    await retry(async () => assert.match(await statusText(), /^\d+ memories$/), {
      timeout: 60_000,
      what: "the server to run again",
    });
  });
});
