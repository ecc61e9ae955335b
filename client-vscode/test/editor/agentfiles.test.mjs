// Other agents' files in a real VS Code (code-server in headless Chromium): opened as
// shipped, examples/agents-project shows in the Problems panel the problems its README
// plants (a broken CLAUDE.md import, a stale path in AGENTS.md, a Claude Code rule and a
// Cursor rule that never apply) with no file opened; a Cursor rule (`.mdc`, a language
// VS Code does not know) is checked as it is typed.
//   node --test client-vscode/test/editor/agentfiles.test.mjs   (see client-vscode/scripts/test-all.sh)
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { describe } from "node:test";
import { editorSuite, evidence, openFile, repo, retry } from "./harness.mjs";

const TEST_TIMEOUT = 180_000;
// examples/agents-project/README.md: one problem each.
const PLANTED = ["broken-import", "stale-path", "unmatched-glob", "unmatched-glob"];

const { artifacts, scratch, start, step } = editorSuite("agentfiles", { timeout: TEST_TIMEOUT });

/** The memory-ls problem codes in the Problems panel (opened with its shortcut). */
async function problemCodes(page) {
  await page.keyboard.press("Control+Shift+M");
  const text = (await page.locator(".markers-panel .monaco-list-row").allInnerTexts()).join("\n");
  return [[...text.matchAll(/^memory-ls\n([a-z-]+)$/gm)].map((match) => match[1]).sort(), text];
}

describe("other agents' files", { timeout: 6 * 60_000 }, () => {
  const project = join(scratch, "agents-project");
  cpSync(join(repo, "examples", "agents-project"), project, { recursive: true });
  // A repository, as the project is in real life: stale-path is on in git repositories.
  execFileSync("git", ["init", "-q"], { cwd: project });
  let page;

  step("the project as shipped: its planted problems in the Problems panel, nothing opened", async () => {
    ({ page } = await start({ workspace: project, inPlace: true }));
    await page.setViewportSize({ width: 1400, height: 1200 });
    await retry(
      async () => {
        const [codes, text] = await problemCodes(page);
        assert.deepEqual(codes, PLANTED, text);
        assert.match(text, /@docs\/deploy\.md imports docs\/deploy\.md, which does not exist/);
        assert.match(text, /can never apply on its own/);
      },
      { timeout: 90_000, what: "the planted problems in the Problems panel" },
    );
    assert.equal(await page.locator(".tabs-container .tab").count(), 0);
    await evidence(page, artifacts, "agents-project-problems");
  });

  step("a Cursor rule is checked as it is typed", async () => {
    await openFile(page, ".cursor/rules/style.mdc");
    // The rule gets a description: an agent can choose it now, so the problem goes.
    await page.keyboard.press("Control+Home");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("End");
    await page.keyboard.type(" Small functions and early returns");
    await retry(
      async () => {
        const [codes, text] = await problemCodes(page);
        assert.deepEqual(codes, ["broken-import", "stale-path", "unmatched-glob"], text);
        assert.doesNotMatch(text, /can never apply on its own/);
      },
      { timeout: 60_000, what: "the Cursor rule's problem gone as typed" },
    );
  });
});
