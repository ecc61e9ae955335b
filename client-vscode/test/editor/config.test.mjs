// The project file (memory-ls.toml) in a real VS Code (code-server in headless Chromium):
// editor settings that override the file are named in a notification whose action
// writes them into the file; the store then follows the file (routing, Show
// Configuration); a setting made in the Settings UI is a new override; and a workspace
// whose store is in its settings only is offered a file.
//   node --test client-vscode/test/editor/config.test.mjs   (see client-vscode/scripts/test-all.sh)
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe } from "node:test";
import {
  closeQuickInput,
  editorSuite,
  evidence,
  fixture,
  notification,
  retry,
  runCommand,
  updateSettings,
} from "./harness.mjs";

const { artifacts, scratch, start, step, stopAll } = editorSuite("config", { timeout: 180_000 });

/** A notification (a toast, else in the Notifications center) whose message has `text`. */
async function notificationItem(page, text, { timeout = 90_000 } = {}) {
  const item = page.locator(".notification-list-item", { has: notification(page, text) }).first();
  await retry(
    async () => {
      if (!(await item.isVisible())) {
        // A toast hides after a while: the center keeps it.
        if (!(await page.locator(".notifications-center.visible").isVisible())) {
          await runCommand(page, "Notifications: Show Notifications", { timeout: 10_000 });
        }
        await item.waitFor({ state: "visible", timeout: 2000 });
      }
    },
    { timeout, what: `the notification "${text}"` },
  );
  return item;
}

/** Click a notification's action button. */
async function clickAction(page, item, label) {
  const button = item.locator(".monaco-button", { hasText: label }).first();
  // The buttons show once the toast is hovered or focused when space is short.
  await item.hover();
  await button.click();
}

/** "Where Would This Go?" for a name: waits until its route message matches `pattern`. */
async function expectRoute(page, name, pattern) {
  const message = page.locator(".quick-input-widget .quick-input-message");
  const input = page.locator(".quick-input-widget input");
  await retry(
    async () => {
      await runCommand(page, "Memory: Where Would This Go?", { timeout: 20_000 });
      await page.locator(".quick-input-title", { hasText: "Where Would This Go?" }).waitFor({ timeout: 5000 });
      await input.fill(name);
      // The route is asked as the name is typed; a store that changed since needs a new ask.
      await retry(async () => assert.match(await message.innerText(), pattern), { timeout: 5000, what: "the route" });
    },
    { timeout: 60_000, what: `the route of ${name} to match ${pattern}` },
  );
  await closeQuickInput(page);
}

/** The text of the active editor (spaces as typed, not Monaco's no-break spaces). */
async function editorText(page) {
  const text = await page.locator(".editor-instance .view-lines").first().innerText();
  return text.replace(/\u00a0/g, " ");
}

describe("the project file and the editor's settings", { timeout: 15 * 60_000 }, () => {
  // A repository whose memory-ls.toml names one shared folder, and whose workspace
  // settings name two others: the settings win, and say so.
  const workspace = join(scratch, "repo");
  const global = join(scratch, "global");
  const projectFile = join(workspace, "memory-ls.toml");
  cpSync(join(fixture, "workspace"), workspace, { recursive: true });
  cpSync(join(fixture, "global"), global, { recursive: true });
  writeFileSync(
    projectFile,
    [
      "# The team's store (this comment goes when the file is rewritten)",
      'additional-folders = ["shared/spec"]',
      `global-folder = ${JSON.stringify(global)}`,
      "max-memory-bytes = 100000",
      "",
    ].join("\n"),
  );
  mkdirSync(join(workspace, ".vscode"));
  const settings = join(workspace, ".vscode", "settings.json");
  writeFileSync(
    settings,
    JSON.stringify({ "memoryLs.additionalFolders": ["shared/feature", "shared/feature_builder"] }, null, 2),
  );
  let page;

  step("settings that override memory-ls.toml are named, and only those the user set", async () => {
    ({ page } = await start({ workspace, inPlace: true }));
    const item = await notificationItem(page, "your settings override memory-ls.toml for");
    const text = await item.locator(".notification-list-item-message").innerText();
    // maxMemoryBytes, secrets, diagnosticsScope: unset in the editor, the file's apply.
    assert.match(text, /override memory-ls\.toml for additionalFolders\./, text);
    await evidence(page, artifacts, "override-notification");
    // The settings are in effect: FEATURE_ goes to shared/feature, SPEC_ to no folder.
    await expectRoute(page, "FEATURE_config_probe", /shared\/feature\/FEATURE_config_probe\.md/);
    await expectRoute(page, "SPEC_config_probe", /Prefix SPEC matches no additional folder/);
  });

  step("Write Settings to memory-ls.toml rewrites the file from the settings in effect, after asking", async () => {
    const item = await notificationItem(page, "your settings override memory-ls.toml for");
    await clickAction(page, item, "Write Settings to memory-ls.toml");
    const dialog = page.locator(".monaco-dialog-box").filter({ hasText: "Rewrite memory-ls.toml from the settings in effect?" });
    await dialog.waitFor({ timeout: 15_000 });
    assert.match(await dialog.innerText(), /comments .* are lost/);
    await evidence(page, artifacts, "rewrite-confirmation");
    await dialog.locator(".monaco-button", { hasText: "Rewrite memory-ls.toml" }).click();
    let text = "";
    await retry(
      () => {
        text = readFileSync(projectFile, "utf8");
        assert.match(text, /"shared\/feature",\s*"shared\/feature_builder"/);
      },
      { timeout: 30_000, what: "memory-ls.toml to hold the editor's folders" },
    );
    assert.doesNotMatch(text, /shared\/spec/);
    assert.doesNotMatch(text, /The team's store/);
    // What only the file set stays.
    assert.match(text, /^max-memory-bytes = 100000$/m);
    assert.match(text, /^global-folder = /m);
    await notificationItem(page, `rewrote ${projectFile}`, { timeout: 30_000 });
    console.log(`memory-ls.toml as written:\n${text}`);
  });

  step("without the setting, routing and Show Configuration follow the file as it changes", async () => {
    updateSettings(settings, { "memoryLs.additionalFolders": undefined });
    const written = readFileSync(projectFile, "utf8");
    writeFileSync(projectFile, written.replace("additional-folders = [", 'additional-folders = [\n  "shared/spec",'));
    await expectRoute(page, "SPEC_config_probe", /shared\/spec\/SPEC_config_probe\.md/);
    await expectRoute(page, "FEATURE_config_probe", /shared\/feature\/FEATURE_config_probe\.md/);
    await runCommand(page, "Memory: Show Configuration");
    await retry(
      async () => {
        const shown = await editorText(page);
        assert.match(shown, /Project file: +.*memory-ls\.toml/);
        assert.match(shown, /additional-folders +shared\/spec, shared\/feature, shared\/feature_builder +memory-ls\.toml/);
        assert.match(shown, /max-memory-bytes +100000 +memory-ls\.toml/);
        assert.match(shown, /secrets +refuse +default/);
      },
      { timeout: 30_000, what: "Show Configuration to show the file's values" },
    );
    await evidence(page, artifacts, "show-configuration");
    await runCommand(page, "View: Close All Editors");
  });

  step("a number set in the Settings UI is an override of the file, named at once", async () => {
    await runCommand(page, "Notifications: Clear All Notifications");
    await runCommand(page, "Preferences: Open Workspace Settings");
    const editor = page.locator(".settings-editor");
    await editor.waitFor({ timeout: 15_000 });
    await editor.locator(".settings-header .suggest-input-container .monaco-editor").first().click();
    await page.keyboard.press("Control+A");
    await page.keyboard.type("memoryLs.maxMemoryBytes");
    const item = editor.locator(".setting-item-contents", { hasText: "Largest memory file" });
    await item.waitFor({ timeout: 15_000 });
    // Unset: an empty box (the file's value applies), not the old 524288.
    const input = item.locator("input").first();
    assert.equal(await input.inputValue(), "");
    await input.fill("4096");
    await retry(
      () => assert.equal(JSON.parse(readFileSync(settings, "utf8"))["memoryLs.maxMemoryBytes"], 4096),
      { timeout: 15_000, what: "the Settings UI to write the number" },
    );
    const notice = await notificationItem(page, "your settings override memory-ls.toml for", { timeout: 30_000 });
    assert.match(await notice.innerText(), /for maxMemoryBytes\./);
    await evidence(page, artifacts, "settings-ui-override");
    await runCommand(page, "View: Close All Editors");
  });
});

describe("a store defined in the editor's settings only", { timeout: 10 * 60_000 }, () => {
  step("is offered a memory-ls.toml, written from the settings", async () => {
    await stopAll();
    // The harness's workspace: its folders are in .vscode/settings.json, no project file.
    const { page, session } = await start();
    const item = await notificationItem(page, "are in the editor's settings only");
    assert.match(await item.innerText(), /\(additionalFolders, globalFolder\)/);
    await evidence(page, artifacts, "offer-notification");
    await clickAction(page, item, "Write memory-ls.toml");
    const file = join(session.workspace, "memory-ls.toml");
    let text = "";
    await retry(
      () => {
        text = readFileSync(file, "utf8");
        assert.match(text, /"shared\/feature",\s*"shared\/feature_builder",\s*"shared\/spec"/);
      },
      { timeout: 30_000, what: `${file} to be written` },
    );
    // The global folder beside the workspace, relative to the file.
    assert.match(text, /^global-folder = "\.\.\/global"$/m);
    assert.ok(existsSync(file));
    await notificationItem(page, `wrote ${file}`, { timeout: 30_000 });
  });
});
