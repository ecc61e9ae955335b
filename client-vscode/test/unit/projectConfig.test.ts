import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  describeConfiguration,
  displaySource,
  displayValue,
  dueNotice,
  overrideKeys,
  overrideMessage,
  resolvedStoreSettings,
  type NoticeState,
} from "../../src/projectConfig";
import type { ConfigurationResult } from "../../src/protocol";

const FILE = "/work/repo/memory-ls.toml";
const WORKSPACE = "workspace configuration (memoryLs)";

/** A `memory.configuration` answer: a project file setting two keys, the editor overriding one. */
function answer(changes: Partial<ConfigurationResult> = {}): ConfigurationResult {
  return {
    projectFile: FILE,
    root: "/work/repo",
    problem: null,
    settings: {
      layout: { value: "serena", source: "default" },
      "primary-folder": { value: null, source: "default" },
      "additional-folders": {
        value: [
          { path: "/work/repo/shared/feature", readOnly: false },
          { path: "/work/repo/shared/vendor", readOnly: true },
        ],
        source: WORKSPACE,
      },
      "global-folder": { value: "/home/ada/mem", source: FILE },
      global: { value: true, source: "default" },
      "max-memory-bytes": { value: 524288, source: "default" },
      secrets: { value: "refuse", source: "default" },
      "diagnostics-scope": { value: "workspace", source: "default" },
      "diagnostics.unknown-prefix": { value: "off", source: FILE },
    },
    editorKeys: ["additionalFolders"],
    overrides: [
      { key: "additionalFolders", source: "initializationOptions", value: ["shared/feature", "shared/vendor:ro"] },
      { key: "additionalFolders", source: WORKSPACE, value: ["shared/feature", "shared/vendor:ro"] },
    ],
    ...changes,
  };
}

const fresh: NoticeState = { shownOverrides: undefined, offered: false, overridesDismissed: false, offerDismissed: false };

describe("the override notice", () => {
  it("names each overriding key once and the file", () => {
    assert.deepEqual(overrideKeys(answer()), ["additionalFolders"]);
    assert.match(overrideMessage(answer()), /^memory-ls: your settings override memory-ls\.toml for additionalFolders\./);
    assert.match(overrideMessage(answer(), "alpha"), /^memory-ls \(alpha\): your settings override/);
    const two = answer({
      overrides: [
        { key: "additionalFolders", source: WORKSPACE, value: [] },
        { key: "maxMemoryBytes", source: WORKSPACE, value: 10 },
      ],
    });
    assert.match(overrideMessage(two), /for additionalFolders, maxMemoryBytes\./);
    // The file's `global = false` against the editor's global folder: globalFolder, once.
    const global = answer({
      overrides: [
        { key: "globalFolder", source: WORKSPACE, value: "/g" },
        { key: "globalEnabled", source: WORKSPACE, value: true },
      ],
    });
    assert.deepEqual(overrideKeys(global), ["globalFolder"]);
  });

  it("is shown once per change of the overrides, and never after Don't Show Again", () => {
    const first = dueNotice(answer(), ["additionalFolders"], fresh);
    assert.equal(first.kind, "overrides");
    const key = first.kind === "overrides" ? first.key : "";
    assert.deepEqual(dueNotice(answer(), ["additionalFolders"], { ...fresh, shownOverrides: key }), { kind: "none" });
    const changed = answer({ overrides: [{ key: "additionalFolders", source: WORKSPACE, value: ["other"] }] });
    assert.equal(dueNotice(changed, [], { ...fresh, shownOverrides: key }).kind, "overrides");
    assert.deepEqual(dueNotice(answer(), [], { ...fresh, overridesDismissed: true }), { kind: "none" });
  });

  it("is not shown when the settings agree with the file", () => {
    assert.deepEqual(dueNotice(answer({ overrides: [] }), ["additionalFolders"], fresh), { kind: "none" });
  });
});

describe("the offer to write a project file", () => {
  const none = answer({ projectFile: null, overrides: [], editorKeys: ["additionalFolders", "globalFolder"] });

  it("is made once when the workspace's settings define the store and no file does", () => {
    const notice = dueNotice(none, ["additionalFolders"], fresh);
    assert.equal(notice.kind, "offer");
    assert.match(notice.kind === "offer" ? notice.message : "", /\(additionalFolders\) are in the editor's settings only/);
    assert.deepEqual(dueNotice(none, ["additionalFolders"], { ...fresh, offered: true }), { kind: "none" });
    assert.deepEqual(dueNotice(none, ["additionalFolders"], { ...fresh, offerDismissed: true }), { kind: "none" });
  });

  it("is not made for the user's own settings only, nor without settings", () => {
    // globalFolder is set, but in the user's settings: no workspace key.
    assert.deepEqual(dueNotice(none, [], fresh), { kind: "none" });
    assert.deepEqual(dueNotice(answer({ projectFile: null, overrides: [], editorKeys: [] }), ["layout"], fresh), {
      kind: "none",
    });
  });
});

describe("Show Configuration", () => {
  it("shows values relative to the store's root and sources in the user's words", () => {
    assert.equal(
      displayValue(answer().settings["additional-folders"]?.value, "/work/repo"),
      "shared/feature, shared/vendor (read-only)",
    );
    assert.equal(displayValue(null, "/r"), "(none)");
    assert.equal(displayValue([], "/r"), "(none)");
    assert.equal(displayValue(524288, "/r"), "524288");
    assert.equal(displayValue("/elsewhere/mem", "/work/repo"), "/elsewhere/mem");
    assert.equal(displaySource(FILE, answer()), "memory-ls.toml");
    assert.equal(displaySource("/work/repo/pyproject.toml [tool.memory-ls]", answer({ projectFile: "/work/repo/pyproject.toml" })), "pyproject.toml [tool.memory-ls]");
    assert.equal(displaySource(WORKSPACE, answer()), "editor settings");
    assert.equal(displaySource("initializationOptions", answer()), "editor settings (as the server started)");
    assert.equal(displaySource("default", answer()), "default");
  });

  it("lists every setting with its value and source, the overrides and the problem", () => {
    const text = describeConfiguration(answer({ problem: "memory-ls.toml: layout: expected serena or aicoder" }), "repo");
    assert.match(text, /^memory-ls configuration of repo\n/);
    assert.match(text, /Project file: {2}\/work\/repo\/memory-ls\.toml/);
    assert.match(text, /Problem: memory-ls\.toml: layout: expected serena or aicoder/);
    assert.match(text, /^additional-folders +shared\/feature, shared\/vendor \(read-only\) +editor settings$/m);
    assert.match(text, /^global-folder +\/home\/ada\/mem +memory-ls\.toml$/m);
    assert.match(text, /^primary-folder +\(the layout's\) +default$/m);
    assert.match(text, /^diagnostics\.unknown-prefix +off +memory-ls\.toml$/m);
    assert.match(text, /Editor settings that override memory-ls\.toml:\n {2}memoryLs\.additionalFolders = shared\/feature, shared\/vendor:ro/);
  });

  it("says when there is no project file", () => {
    const text = describeConfiguration(
      answer({ projectFile: null, overrides: [], editorKeys: ["additionalFolders", "globalEnabled", "globalFolder"] }),
      "repo",
    );
    assert.match(text, /Editor settings in effect: memoryLs\.additionalFolders, memoryLs\.globalFolder\n/);
    assert.match(text, /Project file: {2}none \(Memory: Write Settings to memory-ls\.toml writes one\)/);
    assert.doesNotMatch(text, /Problem:/);
  });
});

describe("resolvedStoreSettings", () => {
  it("gives the server's folders in the settings' shape", () => {
    assert.deepEqual(resolvedStoreSettings(answer()), {
      layout: "serena",
      additionalFolders: [
        { path: "/work/repo/shared/feature", readOnly: false },
        { path: "/work/repo/shared/vendor", readOnly: true },
      ],
      globalFolder: "/home/ada/mem",
    });
  });
});
