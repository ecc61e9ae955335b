// Workspace-wide behaviour in a real VS Code (code-server in headless Chromium): the
// Problems panel lists every memory's problems with no file opened, New Memory says a
// target is read-only before asking anything else, and a multi-root window serves each
// folder and groups the Memories view by folder.
//   node --test client-vscode/test/editor/workspace.test.mjs   (see client-vscode/scripts/test-all.sh)
import assert from "node:assert/strict";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe } from "node:test";
import {
  activeTab,
  closeQuickInput,
  editorSuite,
  evidence,
  openFile,
  pickLabels,
  quickPickRow,
  repo,
  retry,
  runCommand,
} from "./harness.mjs";

const TEST_TIMEOUT = 180_000;
// What `memory-ls check` reports on the example (README): one problem of each of these.
const EXAMPLE_CODES = [
  "unknown-prefix",
  "misrouted",
  "too-large",
  "invalid-name",
  "broken-link",
  "invalid-frontmatter",
  "shadowed",
];

const { artifacts, scratch, start, step } = editorSuite("workspace", { timeout: TEST_TIMEOUT });

/** The rows of the Problems panel (opened with its shortcut). */
async function problemRows(page) {
  await page.keyboard.press("Control+Shift+M");
  return page.locator(".markers-panel .monaco-list-row");
}

describe("the example workspace", { timeout: 10 * 60_000 }, () => {
  // The example as it is shipped: its .vscode/settings.json configures the README's
  // folders (the global folder is ../global-memories beside it).
  const copy = join(scratch, "examples");
  cpSync(join(repo, "examples"), copy, { recursive: true });
  let page;

  step("the example as shipped: the Problems panel lists exactly the problems its README announces", async () => {
    ({ page } = await start({ workspace: join(copy, "workspace"), inPlace: true }));
    // A tall window: the Problems list only renders the rows in sight.
    await page.setViewportSize({ width: 1400, height: 1600 });
    const rows = await problemRows(page);
    let codes = [];
    await retry(
      async () => {
        const text = (await rows.allInnerTexts()).join("\n");
        // A problem's row ends "memory-ls", its code, its place.
        codes = [...text.matchAll(/^memory-ls\n([a-z-]+)$/gm)].map((match) => match[1]).sort();
        assert.deepEqual(codes, [...EXAMPLE_CODES].sort(), text);
      },
      { timeout: 90_000, what: "the example's problems in the Problems panel" },
    );
    // The shared folders are configured: their memories are no broken links.
    const text = (await rows.allInnerTexts()).join("\n");
    for (const name of ["FEATURE_checkout", "FEATURE_BUILDER_pipeline", "SPEC_payments_api"]) {
      assert.doesNotMatch(text, new RegExp(`No memory named ${name}`));
    }
    // Nothing was opened to get them.
    assert.equal(await page.locator(".tabs-container .tab").count(), 0);
    await evidence(page, artifacts, "example-problems");
    await page.setViewportSize({ width: 1400, height: 1000 });
  });

  step("New Memory says a read-only target before asking for tags", async () => {
    await closeQuickInput(page);
    await runCommand(page, "Memory: New Memory…");
    const input = page.locator(".quick-input-widget input");
    await input.waitFor({ state: "visible", timeout: 10_000 });
    await input.fill("VENDOR_x");
    const message = page.locator(".quick-input-widget .quick-input-message");
    await retry(
      async () => assert.match(await message.innerText(), /VENDOR_x → shared\/vendor\/VENDOR_x\.md is read-only/),
      { timeout: 20_000, what: "the read-only hint" },
    );
    // The error blocks the prompt: Enter does not lead to the tags prompt.
    await input.press("Enter");
    await page.waitForTimeout(500);
    assert.equal(await input.inputValue(), "VENDOR_x");
    assert.match(await message.innerText(), /read-only/);
    await input.fill("BUGFIX_crash");
    await retry(
      async () => assert.match(await message.innerText(), /Prefix BUGFIX matches no additional folder/),
      { timeout: 20_000, what: "the unknown-prefix hint" },
    );
    await closeQuickInput(page);
  });
});

describe("a multi-root workspace", { timeout: 10 * 60_000 }, () => {
  let page;

  step("each folder with memories is served and has its own group in the Memories view", async () => {
    const root = join(scratch, "multi");
    const global = join(scratch, "multi-global");
    mkdirSync(global, { recursive: true });
    writeFileSync(join(global, "personal_tip.md"), "# Tip\n");
    const memories = (folder) => join(root, folder, ".serena", "memories");
    mkdirSync(memories("alpha"), { recursive: true });
    mkdirSync(memories("beta"), { recursive: true });
    writeFileSync(join(memories("alpha"), "alpha_notes.md"), "# Alpha\n");
    writeFileSync(join(memories("beta"), "beta_plan.md"), "# Beta\nSee [[alpha_notes]].\n");
    writeFileSync(join(memories("beta"), "build_notes.md"), "# Build\nThe nightly build runs the zeppelin checks.\n");
    writeFileSync(
      join(root, "multi.code-workspace"),
      JSON.stringify({
        folders: [{ path: "alpha" }, { path: "beta" }],
        settings: { "memoryLs.globalFolder": global },
      }),
    );
    ({ page } = await start({ workspace: root, workspaceFile: "multi.code-workspace" }));

    // beta's server resolves links in beta only: alpha_notes is a broken link there.
    const rows = await problemRows(page);
    await retry(
      async () => {
        const text = (await rows.allInnerTexts()).join("\n");
        assert.match(text, /beta_plan\.md/);
        assert.match(text, /No memory named alpha_notes/);
      },
      { timeout: 90_000, what: "beta's broken link in the Problems panel" },
    );

    // Give the Memories view the side bar: its list only renders the rows in sight.
    const folders = page.locator(".pane-header", { hasText: /multi \(workspace\)/i }).first();
    if ((await folders.getAttribute("aria-expanded")) === "true") {
      await folders.click();
    }
    await runCommand(page, "Explorer: Focus on Memories View");
    const pane = page.locator(".pane", { has: page.locator(".pane-header", { hasText: "Memories" }) });
    const row = (label) => pane.locator(".monaco-list-row", { hasText: label }).first();
    await retry(
      async () => {
        for (const label of ["alpha", "beta", "alpha_notes", "beta_plan"]) {
          await row(label).waitFor({ state: "visible", timeout: 2000 });
        }
      },
      { timeout: 60_000, what: "both folders and their memories in the Memories view" },
    );
    // Each memory sits under its own folder's group; the global memory both servers
    // list shows once, under the first folder.
    await retry(
      async () => {
        const labels = (await pane.locator(".monaco-list-row .label-name").allInnerTexts()).map((label) => label.trim());
        const at = (text) => labels.indexOf(text);
        assert.ok(at("alpha") < at("alpha_notes") && at("alpha_notes") < at("beta"), labels.join(" | "));
        assert.ok(at("beta") < at("beta_plan"), labels.join(" | "));
        assert.equal(labels.filter((label) => label === "personal_tip").length, 1, labels.join(" | "));
        assert.ok(at("personal_tip") < at("beta"), labels.join(" | "));
      },
      { timeout: 30_000, what: "the Memories view's groups" },
    );
    // The status bar counts every folder's memories, the global one once.
    await retry(
      async () => {
        const item = page.locator(".statusbar-item", { hasText: /\bmemor(y|ies)\b/i }).first();
        assert.equal((await item.innerText()).trim(), "4 memories");
      },
      { timeout: 30_000, what: "the status bar to count both folders' memories" },
    );
    await evidence(page, artifacts, "multi-root-view");
  });

  step("with a file of the first folder active, Search and Open find a memory of the second", async () => {
    await openFile(page, "alpha_notes.md");
    await activeTab(page, "alpha_notes.md").waitFor({ timeout: 10_000 });
    await runCommand(page, "Memory: Search Memories…");
    await page.locator(".quick-input-title", { hasText: "Search Memories" }).waitFor({ timeout: 10_000 });
    await page.locator(".quick-input-widget input").fill("zeppelin");
    const hit = quickPickRow(page, "build_notes");
    await hit.waitFor({ timeout: 15_000 });
    // Labelled by its workspace folder.
    assert.match(await hit.innerText(), /beta · line 2/);
    await evidence(page, artifacts, "multi-root-search");
    await hit.click();
    await activeTab(page, "build_notes.md").waitFor({ timeout: 10_000 });
    await page.locator(".statusbar-item", { hasText: /^Ln 2, Col 1$/ }).waitFor({ timeout: 10_000 });

    await openFile(page, "alpha_notes.md");
    await runCommand(page, "Memory: Open Memory…");
    await page.locator(".quick-input-title", { hasText: "Open Memory" }).waitFor({ timeout: 10_000 });
    await page.locator(".quick-input-widget input").fill("build");
    const row = quickPickRow(page, "build_notes");
    await row.waitFor({ timeout: 15_000 });
    assert.match(await row.innerText(), /beta · \.serena\/memories · project/);
    // Every folder's memories are offered, the global one once.
    await page.locator(".quick-input-widget input").fill("");
    await retry(
      async () => {
        const labels = await pickLabels(page);
        assert.deepEqual(labels.sort(), ["alpha_notes", "beta_plan", "build_notes", "global/personal_tip"]);
      },
      { timeout: 10_000, what: "every folder's memories in Open Memory" },
    );
    await evidence(page, artifacts, "multi-root-open");
    await page.locator(".quick-input-widget input").fill("build");
    await row.click();
    await activeTab(page, "build_notes.md").waitFor({ timeout: 10_000 });
  });

  step("New Memory still asks which folder when no editor says", async () => {
    await runCommand(page, "View: Close All Editors");
    await runCommand(page, "Memory: New Memory…");
    await page.locator(".quick-input-title", { hasText: "Which workspace folder's memories?" }).waitFor({ timeout: 10_000 });
    await quickPickRow(page, "alpha").waitFor({ timeout: 5000 });
    await quickPickRow(page, "beta").waitFor({ timeout: 5000 });
    await closeQuickInput(page);
  });
});
