// Renames and moves made in a real VS Code (code-server in headless Chromium), issue 34
// point 6: a memory renamed in the Explorer or with F2 is one move of the editor's in
// Recent Changes (not an external delete plus create); the Explorer's rename writes the
// rewritten links to disk, as `memory.move` does, except in a file with unsaved changes
// of the user's (left unsaved, and said); the Memories view lists a shadowed memory,
// faded, and opens it.
//   node --test client-vscode/test/editor/moves.test.mjs   (see client-vscode/scripts/test-all.sh)
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe } from "node:test";
import {
  editorSuite,
  evidence,
  fixture,
  notification,
  openFile,
  paneRows,
  retry,
  quickPickRow,
  runCommand,
  showOnlyPane,
} from "./harness.mjs";

const MEMORIES = ".serena/memories";

/** The fixture workspace with memories in the primary folder: one linked to from two
 * others, and one that shadows an additional folder's memory of the same name. */
function makeWorkspace(scratch) {
  const workspace = join(scratch, "workspace");
  const global = join(scratch, "global");
  cpSync(join(fixture, "workspace"), workspace, { recursive: true });
  cpSync(join(fixture, "global"), global, { recursive: true });
  mkdirSync(join(workspace, ".vscode"));
  writeFileSync(
    join(workspace, ".vscode", "settings.json"),
    JSON.stringify({
      "memoryLs.additionalFolders": ["shared/feature", "shared/feature_builder", "shared/spec"],
      "memoryLs.globalFolder": global,
    }),
  );
  const memories = join(workspace, MEMORIES);
  mkdirSync(memories, { recursive: true });
  writeFileSync(join(memories, "a_note.md"), "# A note\n\nThe note everyone links to.\n");
  writeFileSync(join(memories, "linker.md"), "# Linker\n\nSee [[a_note]].\n");
  writeFileSync(join(memories, "draft.md"), "# Draft\n\nAlso [[a_note]].\n");
  writeFileSync(join(memories, "FEATURE_checkout.md"), "# Checkout (primary copy)\n\nIt wins lookup.\n");
  // Serena accepts `:` in a name; memory-ls does not (no such file on Windows).
  writeFileSync(join(memories, "standup 10:30.md"), "# Stand-up\n");
  return workspace;
}

describe("renames and moves in the editor", { timeout: 15 * 60_000 }, () => {
  const suite = editorSuite("moves", { timeout: 240_000 });
  const { step } = suite;
  let page;
  let session;
  const file = (name) => join(session.workspace, MEMORIES, name);
  const changes = () => page.locator(".pane", { has: page.locator(".pane-header", { hasText: "Recent Changes" }) });

  step("the Memories view lists a shadowed memory, faded, and opens it", async () => {
    ({ page, session } = await suite.start({
      workspace: makeWorkspace(suite.scratch),
      // The journal goes to this cache, not the user's.
      env: { XDG_CACHE_HOME: join(suite.scratch, "cache") },
    }));
    await page.setViewportSize({ width: 1600, height: 1000 });
    await runCommand(page, "Explorer: Focus on Memories View");
    // The view's list only renders the rows in sight: give it the side bar.
    await showOnlyPane(page, "Memories");
    const pane = page.locator(".pane", { has: page.locator(".pane-header", { hasText: "Memories" }) });
    const shadowed = pane.locator(".monaco-list-row", { hasText: "shadowed by" });
    await retry(
      async () => {
        const rows = await paneRows(page, "Memories");
        assert.ok(
          rows.some(([label, description]) => label === "FEATURE_checkout" && description === `shadowed by ${MEMORIES}/FEATURE_checkout.md`),
          JSON.stringify(rows),
        );
      },
      { timeout: 90_000, what: "the shadowed memory in the Memories view" },
    );
    // Faded: its icon in the theme's disabled foreground colour (the others have none).
    const iconStyle = (row) => row.locator(".custom-view-tree-node-item-icon").first().getAttribute("style");
    const disabled = await page.evaluate(() =>
      getComputedStyle(document.querySelector(".monaco-workbench")).getPropertyValue("--vscode-disabledForeground").trim(),
    );
    assert.ok(disabled, "the theme has a disabled foreground colour");
    const faded = await shadowed.first().locator(".custom-view-tree-node-item-icon").first().evaluate((icon) => getComputedStyle(icon).color);
    const probe = await page.evaluate((colour) => {
      const element = document.createElement("span");
      element.style.color = colour;
      document.body.appendChild(element);
      const computed = getComputedStyle(element).color;
      element.remove();
      return computed;
    }, disabled);
    assert.equal(faded, probe);
    const winner = pane.locator(".monaco-list-row", { hasText: "a_note" }).first();
    assert.doesNotMatch((await iconStyle(winner)) ?? "", /color/);
    await evidence(page, suite.artifacts, "memories-shadowed");
    await shadowed.first().click();
    await retry(
      async () => {
        const text = await page.locator(".editor-instance .view-lines").first().innerText();
        assert.match(text.replace(/\u00a0/g, " "), /the cart is kept for 7 days/);
      },
      { timeout: 30_000, what: "the shadowed file open (the additional folder's copy)" },
    );
  });

  step("a rename in the Explorer writes the rewritten links to disk, keeps unsaved work, and is one move", async () => {
    // The journal has read every memory once: from now on a move can be told.
    await runCommand(page, "Explorer: Focus on Recent Changes View");
    await changes()
      .locator(".welcome-view-content", { hasText: "No changes yet" })
      .waitFor({ state: "visible", timeout: 120_000 });

    // Unsaved work of the user's in a file that links to the memory.
    await openFile(page, `${MEMORIES}/draft.md`);
    await page.keyboard.press("Control+End");
    await page.keyboard.type("Unsaved thought.");

    // Rename a_note.md in the Explorer (F2 on its row).
    await openFile(page, `${MEMORIES}/a_note.md`);
    await runCommand(page, "File: Reveal Active File in Explorer View");
    const row = page.locator(".explorer-folders-view .monaco-list-row", { hasText: "a_note.md" }).first();
    await row.waitFor({ state: "visible", timeout: 15_000 });
    await row.click();
    await page.keyboard.press("F2");
    const input = page.locator(".explorer-folders-view .monaco-inputbox input");
    await input.waitFor({ state: "visible", timeout: 10_000 });
    await input.fill("b_note.md");
    await page.keyboard.press("Enter");
    // VS Code asks before an extension's refactoring of a file move: the user agrees.
    const dialog = page.locator(".monaco-dialog-box", { hasText: "refactoring changes" });
    await dialog.waitFor({ state: "visible", timeout: 30_000 });
    await evidence(page, suite.artifacts, "explorer-rename-refactoring-asked");
    await dialog.locator(".monaco-button", { hasText: /^OK$/ }).click();

    await retry(
      async () => {
        assert.ok(existsSync(file("b_note.md")) && !existsSync(file("a_note.md")));
        // Written to disk, as memory.move does.
        assert.equal(readFileSync(file("linker.md"), "utf8"), "# Linker\n\nSee [[b_note]].\n");
      },
      { timeout: 60_000, what: "the link rewritten on disk" },
    );
    // The file with unsaved changes of the user's is not saved, and the user is told.
    await notification(page, "unsaved changes of yours").first().waitFor({ state: "visible", timeout: 30_000 });
    assert.equal(readFileSync(file("draft.md"), "utf8"), "# Draft\n\nAlso [[a_note]].\n");
    await evidence(page, suite.artifacts, "explorer-rename-unsaved-kept");

    // Recent Changes: one move of the editor's, no external delete or creation.
    await runCommand(page, "Explorer: Focus on Recent Changes View");
    await retry(
      async () => {
        const rows = await changes().locator(".monaco-list-row").allInnerTexts();
        const moved = rows.filter((text) => /a_note/.test(text) && /→ b_note · editor/.test(text));
        assert.equal(moved.length, 1, rows.join("\n"));
        assert.ok(!rows.some((text) => /external/.test(text)), rows.join("\n"));
        assert.ok(!rows.some((text) => /^b_note/.test(text.trim())), rows.join("\n"));
      },
      { timeout: 60_000, what: "the Explorer's rename as one move in Recent Changes" },
    );
    await evidence(page, suite.artifacts, "recent-changes-explorer-move");
  });

  step("F2 on a link renames the memory: one move of the editor's", async () => {
    await openFile(page, `${MEMORIES}/linker.md`);
    // The cursor inside [[b_note]] (line 3).
    await page.keyboard.press("Control+End");
    await page.keyboard.press("ArrowUp");
    await page.keyboard.press("Home");
    for (let i = 0; i < 8; i += 1) {
      await page.keyboard.press("ArrowRight");
    }
    await retry(
      async () => {
        await page.keyboard.press("F2");
        await page.locator(".rename-box input").waitFor({ state: "visible", timeout: 3000 });
      },
      { timeout: 60_000, what: "the rename box" },
    );
    await page.locator(".rename-box input").fill("c_note");
    await page.keyboard.press("Enter");
    await retry(async () => assert.ok(existsSync(file("c_note.md")) && !existsSync(file("b_note.md"))), {
      timeout: 60_000,
      what: "the memory renamed on disk",
    });
    await runCommand(page, "Explorer: Focus on Recent Changes View");
    await retry(
      async () => {
        const rows = await changes().locator(".monaco-list-row").allInnerTexts();
        const moved = rows.filter((text) => /b_note/.test(text) && /→ c_note · editor/.test(text));
        assert.equal(moved.length, 1, rows.join("\n"));
        assert.ok(!rows.some((text) => /external/.test(text)), rows.join("\n"));
      },
      { timeout: 60_000, what: "F2's rename as one move in Recent Changes" },
    );
    await evidence(page, suite.artifacts, "recent-changes-f2-move");
  });

  step("Rename File to a Valid Name… is one move of the editor's", async () => {
    await runCommand(page, "Memory: Rename File to a Valid Name…");
    const row = quickPickRow(page, "standup 10:30").first();
    await row.waitFor({ state: "visible", timeout: 15_000 });
    await row.click();
    const input = page.locator(".quick-input-widget input");
    await page.locator(".quick-input-widget", { hasText: "A valid memory name" }).waitFor({ state: "visible", timeout: 15_000 });
    const suggested = await input.inputValue();
    assert.ok(suggested && !suggested.includes(":"), suggested);
    await page.keyboard.press("Enter");
    await retry(async () => assert.ok(existsSync(file(`${suggested}.md`)) && !existsSync(file("standup 10:30.md"))), {
      timeout: 60_000,
      what: "the file renamed on disk",
    });
    await runCommand(page, "Explorer: Focus on Recent Changes View");
    await retry(
      async () => {
        const rows = await changes().locator(".monaco-list-row").allInnerTexts();
        const moved = rows.filter((text) => text.includes("standup 10:30") && text.includes(`→ ${suggested} · editor`));
        assert.equal(moved.length, 1, rows.join("\n"));
        assert.ok(!rows.some((text) => /external/.test(text)), rows.join("\n"));
      },
      { timeout: 60_000, what: "the rename to a valid name as one move in Recent Changes" },
    );
  });
});
