// The Recent Changes view in a real VS Code (code-server in headless Chromium): a memory
// written from outside the editor appears with who changed it, a click opens a diff of
// the bytes before against the file now, and Revert gives the file its previous bytes.
//   node --test client-vscode/test/editor/changes.test.mjs   (see client-vscode/scripts/test-all.sh)
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { evidence, openBrowser, repo, retry, runCommand, screenshot, startCodeServer } from "./harness.mjs";

const artifacts =
  process.env.MEMORY_LS_ARTIFACTS || join(repo, "client-vscode", "test-results", `changes-${Date.now()}`);
const TEST_TIMEOUT = 240_000;
const scratch = mkdtempSync(join(tmpdir(), "memory-ls-changes-test-"));
let session;
let browser;
let failed = false;

after(async () => {
  await browser?.close().catch(() => undefined);
  await session?.stop({ keep: failed || process.env.MEMORY_LS_KEEP === "1" });
  if (failed) {
    console.log(`Changes tests failed: screenshots in ${artifacts}; scratch kept in ${scratch}`);
  } else {
    rmSync(scratch, { recursive: true, force: true });
  }
});

/** The text a diff editor side shows (its rendered lines, top to bottom). */
async function sideText(page, side) {
  const lines = page.locator(`.monaco-diff-editor .editor.${side} .view-lines .view-line`);
  const rows = await lines.evaluateAll((elements) =>
    elements
      .map((element) => ({ top: parseFloat(element.style.top || "0"), text: element.textContent ?? "" }))
      .sort((a, b) => a.top - b.top)
      .map((row) => row.text.replace(/\u00a0/g, " ")),
  );
  return rows.join("\n");
}

describe("the Recent Changes view", { timeout: 10 * 60_000 }, () => {
  it("shows a file written from outside with a correct diff, and Revert restores its bytes", { timeout: TEST_TIMEOUT }, async () => {
    let page;
    try {
      // The journal goes to this cache, not the user's.
      session = await startCodeServer({ env: { XDG_CACHE_HOME: join(scratch, "cache") } });
      ({ browser, page } = await openBrowser(session.url));
      await page.setViewportSize({ width: 1600, height: 1000 });
      const memory = join(session.workspace, "shared", "feature", "FEATURE_checkout.md");
      const before = readFileSync(memory);

      // The view gets the side bar (the file tree folded away).
      const files = page.locator(".pane-header", { hasText: /workspace/i }).first();
      if ((await files.getAttribute("aria-expanded")) === "true") {
        await files.click();
      }
      await runCommand(page, "Explorer: Focus on Recent Changes View");
      const pane = page.locator(".pane", { has: page.locator(".pane-header", { hasText: "Recent Changes" }) });
      // The server has read every memory once: from now on a change can be compared.
      await pane
        .locator(".welcome-view-content", { hasText: "No changes yet" })
        .waitFor({ state: "visible", timeout: 120_000 });

      const written = "# Checkout\n\nRewritten by an agent that writes files directly.\n";
      writeFileSync(memory, written);
      const row = pane.locator(".monaco-list-row", { hasText: "FEATURE_checkout" }).first();
      await retry(
        async () => {
          await row.waitFor({ state: "visible", timeout: 2000 });
          assert.match(await row.innerText(), /● external · just now/);
        },
        { timeout: 60_000, what: "the external change in Recent Changes" },
      );

      await row.click();
      await page.locator(".monaco-diff-editor").first().waitFor({ state: "visible", timeout: 30_000 });
      await retry(
        async () => {
          // Each file ends with a newline: its last rendered line is empty.
          assert.equal(await sideText(page, "original"), before.toString("utf8"));
          assert.equal(await sideText(page, "modified"), written);
        },
        { timeout: 30_000, what: "the diff's two sides" },
      );
      // A wider side bar for the picture (the README's): drag its edge.
      const side = await page.locator(".part.sidebar").boundingBox();
      if (side !== null) {
        const edge = { x: side.x + side.width + 1, y: side.y + side.height / 2 };
        await page.mouse.move(edge.x, edge.y);
        await page.mouse.down();
        await page.mouse.move(edge.x + 160, edge.y, { steps: 5 });
        await page.mouse.up();
      }
      await evidence(page, artifacts, "recent-changes-diff");

      // Its context menu offers the change's actions.
      await row.click({ button: "right" });
      const menu = page.locator(".monaco-menu");
      await menu.locator(".action-label", { hasText: "Revert This Change" }).waitFor({ timeout: 10_000 });
      const offered = await menu.locator(".action-label").allInnerTexts();
      for (const action of ["Open Changes", "Mark Reviewed", "Revert This Change"]) {
        assert.ok(offered.includes(action), `${action} not in the context menu: ${offered.join(", ")}`);
      }
      await page.keyboard.press("Escape");
      // Revert from the row's own button (a menu ignores a click too soon after it opened).
      await row.hover();
      await row.locator('.action-label[aria-label="Revert This Change"]').click();
      await retry(async () => assert.deepEqual(readFileSync(memory), before), {
        timeout: 30_000,
        what: "the file's previous bytes back",
      });
      // The revert is a change of its own (the editor's), shown above the one it undid.
      const revert = pane.locator(".monaco-list-row", { hasText: "● editor · just now" }).first();
      await revert.waitFor({ state: "visible", timeout: 30_000 });
      await evidence(page, artifacts, "recent-changes-reverted");

      // Marked reviewed, no row stands out any more (the marks are the journal's).
      await runCommand(page, "Memory: Mark All Changes Reviewed");
      await retry(
        async () => {
          const texts = await pane.locator(".monaco-list-row").allInnerTexts();
          assert.equal(texts.length, 2, texts.join("\n"));
          assert.ok(texts.every((text) => !text.includes("●")), texts.join("\n"));
        },
        { timeout: 30_000, what: "every change marked reviewed" },
      );
    } catch (error) {
      failed = true;
      if (page) {
        await screenshot(page, artifacts, "changes-failure").catch(() => undefined);
      }
      throw error;
    }
  });
});
