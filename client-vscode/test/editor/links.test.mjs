// Links between memories in a real VS Code (code-server in headless Chromium), on
// examples/workspace as shipped: the Memory Links view lists every memory that links to
// the open one (the same files as Find All References) and opens the linking line; the
// Markdown preview renders [[links]] as links that open the memory, broken ones as broken.
//   node --test client-vscode/test/editor/links.test.mjs   (see client-vscode/scripts/test-all.sh)
import assert from "node:assert/strict";
import { cpSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe } from "node:test";
import {
  activeTab,
  editorSuite,
  evidence,
  openFile,
  paneRows,
  repo,
  retry,
  runCommand,
  showOnlyPane,
  sidebarPane,
  updateSettings,
} from "./harness.mjs";

const TEST_TIMEOUT = 180_000;
const TARGET = "SPEC_payments_api";

const { artifacts, scratch, start, step } = editorSuite("links", { timeout: TEST_TIMEOUT });
let entry = {};

/** The memories (names) of the example's folders whose text links to `name` with [[...]]
 * or `mem:` (read here, independently of the server: what the view must list). */
function linkingMemories(root, name) {
  const found = [];
  const walk = (folder, directory) => {
    for (const item of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, item.name);
      if (item.isDirectory()) {
        walk(folder, path);
      } else if (item.name.endsWith(".md")) {
        const text = readFileSync(path, "utf8");
        if (text.includes(`[[${name}]]`) || text.includes(`[[${name}|`) || text.includes(`\`mem:${name}\``)) {
          found.push(relative(folder, path).replace(/\.md$/, ""));
        }
      }
    }
  };
  // The example's folders (its .vscode/settings.json).
  for (const folder of [".serena/memories", "shared/feature", "shared/feature_builder", "shared/spec", "shared/vendor"]) {
    walk(join(root, folder), join(root, folder));
  }
  return found.sort();
}

/** The file rows (level 1) of the References view: [file name, count]. */
async function referenceFiles(page) {
  return sidebarPane(page, "References")
    .locator('.monaco-list-row[aria-level="1"]')
    .evaluateAll((rows) =>
      rows.map((row) => [
        row.querySelector(".label-name")?.textContent?.trim() ?? "",
        row.querySelector(".monaco-count-badge, .badge")?.textContent?.trim() ?? "",
      ]),
    );
}

/** The Markdown preview's content frame (the webview's inner iframe). */
async function previewFrame(page, text) {
  return retry(
    async () => {
      for (const frame of page.frames()) {
        const body = await frame.locator("body.vscode-body").count().catch(() => 0);
        if (body > 0 && (await frame.locator("body").innerText()).includes(text)) {
          return frame;
        }
      }
      throw new Error(`no preview frame shows ${text}`);
    },
    { timeout: 60_000, what: `the preview of ${text}` },
  );
}

describe("memory links on the example workspace", { timeout: 10 * 60_000 }, () => {
  const copy = join(scratch, "examples");
  cpSync(join(repo, "examples"), copy, { recursive: true });
  const workspace = join(copy, "workspace");
  let page;

  step("the Memory Links view lists every memory that links to the open one, and opens the linking line", async () => {
    entry = await start({
      workspace,
      inPlace: true,
      // VS Code's own setting for Markdown links in the preview: open them in an editor.
      userSettings: { "markdown.preview.openMarkdownLinks": "inEditor" },
    });
    page = entry.page;
    await page.setViewportSize({ width: 1400, height: 1000 });
    const expected = linkingMemories(workspace, TARGET);
    assert.ok(expected.length >= 3, `the example links to ${TARGET} from ${expected}`);

    await openFile(page, `shared/spec/${TARGET}.md`);
    // The server's own references to the memory (from the start of its file).
    await page.keyboard.press("Control+Home");
    let references = [];
    await retry(
      async () => {
        await runCommand(page, "References: Find All References", { timeout: 20_000 });
        references = await retry(
          async () => {
            const files = await referenceFiles(page);
            assert.ok(files.length > 0, "no references yet");
            return files;
          },
          { timeout: 5000, what: "the References view" },
        );
        // Less the memory's own file (the declaration is one of Find All References' results).
        const linking = references.map(([file]) => file.replace(/\.md$/, "")).filter((name) => name !== TARGET);
        assert.deepEqual(linking.sort(), expected.map((name) => name.split("/").pop()).sort());
      },
      { timeout: 90_000, what: `the server's references to ${TARGET}` },
    );

    await runCommand(page, "Explorer: Focus on Memory Links View");
    await showOnlyPane(page, "Memory Links", { widen: true });
    await activeTab(page, `${TARGET}.md`).click();
    let rows = [];
    await retry(
      async () => {
        rows = await paneRows(page, "Memory Links");
        const from = rows.findIndex(([label]) => label.startsWith("Linked from"));
        const to = rows.findIndex(([label]) => label.startsWith("Links to"));
        assert.ok(from >= 0 && to > from, JSON.stringify(rows));
        assert.equal(rows[from][0], `Linked from (${expected.length})`);
        assert.deepEqual(rows.slice(from + 1, to).map(([label]) => label).sort(), expected);
        assert.deepEqual(
          rows.slice(to + 1).map(([label]) => label),
          ["FEATURE_checkout"],
        );
      },
      { timeout: 60_000, what: "the Memory Links view" },
    );
    // Each row says the line that links.
    const overview = rows.find(([label]) => label === "project_overview");
    assert.match(overview[1], /contract in \[\[SPEC_payments_api\]\]/);
    await evidence(page, artifacts, "memory-links-view");

    // A memory an agent writes on disk that links here joins the list.
    writeFileSync(join(workspace, ".serena", "memories", "checkout_faq.md"), "# FAQ\n\nRefunds: see [[SPEC_payments_api]].\n");
    const now = linkingMemories(workspace, TARGET);
    assert.ok(now.includes("checkout_faq"));
    await retry(
      async () => {
        rows = await paneRows(page, "Memory Links");
        assert.ok(rows.some(([label]) => label === `Linked from (${now.length})`), JSON.stringify(rows));
        assert.ok(rows.some(([label, text]) => label === "checkout_faq" && /Refunds: see/.test(text)), JSON.stringify(rows));
      },
      { timeout: 30_000, what: "the new linking memory in the view" },
    );

    // A click opens the linking memory at that line.
    await sidebarPane(page, "Memory Links").locator(".monaco-list-row", { hasText: "project_overview" }).click();
    await activeTab(page, "project_overview.md").waitFor({ state: "visible", timeout: 20_000 });
    await retry(
      async () => {
        const status = await page.locator(".statusbar-item", { hasText: /Ln \d+, Col \d+/ }).first().innerText();
        assert.match(status, /Ln 13, Col/);
      },
      { timeout: 10_000, what: "the cursor on the linking line" },
    );
    // The view now follows project_overview: what it links to, the broken one marked.
    await retry(
      async () => {
        rows = await paneRows(page, "Memory Links");
        const broken = rows.find(([label]) => label === "deployment_checklist");
        assert.ok(broken, JSON.stringify(rows));
        assert.match(broken[1], /^not found · /);
      },
      { timeout: 30_000, what: "project_overview's outgoing links" },
    );
  });

  step("the Markdown preview renders [[links]] that open the memory, and broken ones as broken", async () => {
    await openFile(page, ".serena/memories/project_overview.md");
    await runCommand(page, "Markdown: Open Preview to the Side");
    const frame = await previewFrame(page, "Project overview");
    const links = frame.locator("a.memory-ls-link");
    await retry(
      async () => {
        const labels = await links.allInnerTexts();
        assert.deepEqual(labels, [
          "suggested_commands",
          "house style",
          "mem:auth/login_flow",
          "FEATURE_checkout",
          "FEATURE_BUILDER_pipeline",
          "SPEC_payments_api",
        ]);
      },
      { timeout: 60_000, what: "memory links in the preview" },
    );
    const broken = frame.locator(".memory-ls-link.memory-ls-broken");
    assert.equal(await broken.innerText(), "deployment_checklist");
    assert.match(await broken.getAttribute("title"), /Memory not found: no memory named deployment_checklist/);
    // Visibly broken: the preview style sheet the extension contributes applies.
    const style = await broken.evaluate((element) => getComputedStyle(element).textDecorationStyle);
    assert.equal(style, "wavy");
    await evidence(page, artifacts, "memory-links-preview");

    // Once the memory exists, the preview draws its link as a link.
    writeFileSync(join(workspace, ".serena", "memories", "deployment_checklist.md"), "# Deployment checklist\n");
    await retry(
      async () => {
        const live = await previewFrame(page, "Project overview");
        assert.equal(await live.locator(".memory-ls-broken").count(), 0);
        assert.equal(await live.locator("a.memory-ls-link", { hasText: "deployment_checklist" }).count(), 1);
      },
      { timeout: 30_000, what: "the created memory's link in the preview" },
    );

    await (await previewFrame(page, "Project overview")).locator("a.memory-ls-link", { hasText: "FEATURE_checkout" }).click();
    // A text editor (a preview's tab is "Preview FEATURE_checkout.md").
    await page
      .locator(".tabs-container .tab.active .label-name", { hasText: /^FEATURE_checkout\.md$/ })
      .first()
      .waitFor({ state: "visible", timeout: 30_000 });
  });

  step("with VS Code's default for Markdown links, a memory link shows the memory in the preview", async () => {
    updateSettings(entry.session.userSettings, { "markdown.preview.openMarkdownLinks": undefined });
    await runCommand(page, "View: Close All Editors");
    await openFile(page, "shared/feature/FEATURE_checkout.md");
    await runCommand(page, "Markdown: Open Preview");
    const frame = await previewFrame(page, "Card payments first");
    // As for any Markdown link (code-server then also opens the file in an editor, for a
    // plain `[text](file.md)` link too).
    await frame.locator("a.memory-ls-link", { hasText: "SPEC_payments_api" }).click();
    await page
      .locator(".tabs-container .tab .label-name", { hasText: /^Preview SPEC_payments_api\.md$/ })
      .first()
      .waitFor({ state: "visible", timeout: 30_000 });
  });
});
