// Workspace-wide behaviour in a real VS Code (code-server in headless Chromium): the
// Problems panel lists every memory's problems with no file opened, New Memory says a
// target is read-only before asking anything else, and a multi-root window serves each
// folder and groups the Memories view by folder.
//   node --test client-vscode/test/editor/workspace.test.mjs   (see client-vscode/scripts/test-all.sh)
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { closeQuickInput, openBrowser, repo, retry, runCommand, screenshot, startCodeServer } from "./harness.mjs";

const artifacts =
  process.env.MEMORY_LS_ARTIFACTS || join(repo, "client-vscode", "test-results", `workspace-${Date.now()}`);
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

const scratch = mkdtempSync(join(tmpdir(), "memory-ls-workspace-test-"));
const sessions = [];
let failed = false;

after(async () => {
  for (const { browser, session } of sessions) {
    await browser?.close().catch(() => undefined);
    await session?.stop({ keep: failed || process.env.MEMORY_LS_KEEP === "1" });
  }
  if (failed) {
    console.log(`Workspace tests failed: screenshots in ${artifacts}; scratch kept in ${scratch}`);
  } else {
    rmSync(scratch, { recursive: true, force: true });
  }
});

/** Start an editor on `workspace` and open it in the browser. */
async function start(options) {
  const entry = {};
  sessions.push(entry);
  entry.session = await startCodeServer(options);
  ({ browser: entry.browser, page: entry.page } = await openBrowser(entry.session.url));
  return entry;
}

/** A test whose failure keeps a screenshot. */
function step(name, body) {
  it(name, { timeout: TEST_TIMEOUT }, async () => {
    try {
      await body();
    } catch (error) {
      failed = true;
      const page = sessions.at(-1)?.page;
      if (page) {
        await screenshot(page, artifacts, name).catch(() => undefined);
      }
      throw error;
    }
  });
}

/** The rows of the Problems panel (opened with its shortcut). */
async function problemRows(page) {
  await page.keyboard.press("Control+Shift+M");
  return page.locator(".markers-panel .monaco-list-row");
}

describe("the example workspace", { timeout: 10 * 60_000 }, () => {
  // The example as its README runs it: tasks.py's flags, as workspace settings.
  const copy = join(scratch, "examples");
  cpSync(join(repo, "examples"), copy, { recursive: true });
  mkdirSync(join(copy, "workspace", ".vscode"));
  writeFileSync(
    join(copy, "workspace", ".vscode", "settings.json"),
    JSON.stringify({
      "memoryLs.additionalFolders": ["shared/feature", "shared/feature_builder", "shared/spec", "shared/vendor:ro"],
      "memoryLs.globalFolder": join(copy, "global-memories"),
      "memoryLs.maxMemoryBytes": 4096,
    }),
  );
  let page;

  step("the Problems panel lists every memory's problems without opening a file", async () => {
    ({ page } = await start({ workspace: join(copy, "workspace") }));
    const rows = await problemRows(page);
    await retry(
      async () => {
        const text = (await rows.allInnerTexts()).join("\n");
        for (const code of EXAMPLE_CODES) {
          assert.match(text, new RegExp(`\\b${code}\\b`), `${code} in the Problems panel`);
        }
      },
      { timeout: 90_000, what: "the example's problems in the Problems panel" },
    );
    // Nothing was opened to get them.
    assert.equal(await page.locator(".tabs-container .tab").count(), 0);
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
    writeFileSync(
      join(root, "multi.code-workspace"),
      JSON.stringify({
        folders: [{ path: "alpha" }, { path: "beta" }],
        settings: { "memoryLs.globalFolder": global },
      }),
    );
    const { page } = await start({ workspace: root, workspaceFile: "multi.code-workspace" });

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
    // Each memory sits under its own folder's group.
    const labels = (await pane.locator(".monaco-list-row .label-name").allInnerTexts()).map((label) => label.trim());
    const at = (text) => labels.indexOf(text);
    assert.ok(at("alpha") < at("alpha_notes") && at("alpha_notes") < at("beta"), labels.join(" | "));
    assert.ok(at("beta") < at("beta_plan"), labels.join(" | "));
  });
});
