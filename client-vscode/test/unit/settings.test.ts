import assert from "node:assert/strict";
import * as path from "node:path";
import { describe, it } from "node:test";
import {
  cliFlags,
  effectiveLayout,
  explicitSection,
  folderEntries,
  memoryFolders,
  resolveFolder,
  SERVER_KEYS,
  toServerSettings,
  workspaceKeys,
  type Environment,
  type Inspection,
  type ServerKey,
} from "../../src/settings";

function environment(directories: string[] = [], env: Record<string, string> = {}): Environment {
  const root = "/work/repo";
  return {
    root,
    home: "/home/ada",
    env,
    isDirectory: (candidate) => directories.map((d) => path.join(root, d)).includes(candidate),
  };
}

describe("toServerSettings", () => {
  it("passes exactly the server's keys of a full VS Code section", () => {
    const section = {
      layout: "aicoder",
      primaryFolder: "notes",
      additionalFolders: ["shared/feature", { path: "shared/vendor", readOnly: true }],
      globalFolder: "~/mem",
      maxMemoryBytes: 4096,
      diagnostics: { "unknown-prefix": "off" },
      server: { pythonPath: "/usr/bin/python3" },
      trace: { server: "verbose" },
    };
    assert.deepEqual(toServerSettings(section), {
      layout: "aicoder",
      primaryFolder: "notes",
      additionalFolders: ["shared/feature", { path: "shared/vendor", readOnly: true }],
      globalFolder: "~/mem",
      maxMemoryBytes: 4096,
      diagnostics: { "unknown-prefix": "off" },
    });
  });

  it("drops values that mean 'not set' so the server keeps its lower source", () => {
    const result = toServerSettings({
      layout: null,
      primaryFolder: "   ",
      globalFolder: null,
      additionalFolders: ["", "  ", { path: "" }, "shared/spec:ro"],
      diagnostics: { "broken-link": null, shadowed: "hint" },
    });
    assert.deepEqual(result, { additionalFolders: ["shared/spec:ro"], diagnostics: { shadowed: "hint" } });
    assert.equal("layout" in result, false);
    assert.equal("primaryFolder" in result, false);
  });

  it("leaves out a diagnostics object that sets no severity (it would hide the project file's)", () => {
    assert.deepEqual(toServerSettings({ diagnostics: {} }), {});
    assert.deepEqual(toServerSettings({ diagnostics: { "broken-link": null } }), {});
  });

  it("trims strings and keeps wrong types for the server to report", () => {
    assert.deepEqual(toServerSettings({ primaryFolder: "  notes/ ", maxMemoryBytes: "big", layout: 7 }), {
      primaryFolder: "notes/",
      maxMemoryBytes: "big",
      layout: 7,
    });
  });

  it("gives an empty object for a missing or non-object section", () => {
    assert.deepEqual(toServerSettings(null), {});
    assert.deepEqual(toServerSettings(undefined), {});
    assert.deepEqual(toServerSettings(["layout"]), {});
  });

  it("knows every SPEC 3.6 key, and diagnosticsScope", () => {
    assert.deepEqual([...SERVER_KEYS].sort(), [
      "additionalFolders",
      "diagnostics",
      "diagnosticsScope",
      "globalFolder",
      "layout",
      "maxMemoryBytes",
      "primaryFolder",
      "secrets",
    ]);
  });
});

/** VS Code's `inspect` over a table of levels; the manifest's defaults as package.json has them. */
function inspector(levels: Partial<Record<ServerKey, Inspection>>): (key: ServerKey) => Inspection {
  const defaults: Record<ServerKey, unknown> = {
    layout: null,
    primaryFolder: null,
    additionalFolders: null,
    globalFolder: null,
    maxMemoryBytes: null,
    diagnostics: {},
    diagnosticsScope: null,
    secrets: null,
  };
  return (key) => ({ defaultValue: defaults[key], ...levels[key] });
}

describe("explicitSection", () => {
  it("sends only what the user set, never the manifest's defaults", () => {
    assert.deepEqual(toServerSettings(explicitSection(inspector({}))), {});
    // Even a manifest whose defaults are values (as it had: 524288, refuse, workspace, []).
    const old = (key: ServerKey): Inspection => ({
      defaultValue: { maxMemoryBytes: 524288, secrets: "refuse", diagnosticsScope: "workspace", additionalFolders: [] }[
        key as string
      ],
    });
    assert.deepEqual(toServerSettings(explicitSection(old)), {});
  });

  it("takes the most specific level: folder over workspace over user", () => {
    const section = explicitSection(
      inspector({
        maxMemoryBytes: { globalValue: 1000, workspaceValue: 2000 },
        additionalFolders: { workspaceValue: ["a"], workspaceFolderValue: ["b:ro"] },
        secrets: { globalValue: "warn" },
        layout: { workspaceValue: null },
      }),
    );
    assert.deepEqual(toServerSettings(section), { maxMemoryBytes: 2000, additionalFolders: ["b:ro"], secrets: "warn" });
  });

  it("merges the diagnostics objects of the levels, as VS Code does", () => {
    const section = explicitSection(
      inspector({
        diagnostics: { globalValue: { "broken-link": "off", shadowed: "hint" }, workspaceValue: { shadowed: "error" } },
      }),
    );
    assert.deepEqual(section, { diagnostics: { "broken-link": "off", shadowed: "error" } });
  });

  it("keeps an additionalFolders list the user emptied (no additional folders)", () => {
    assert.deepEqual(toServerSettings(explicitSection(inspector({ additionalFolders: { workspaceValue: [] } }))), {
      additionalFolders: [],
    });
  });
});

describe("workspaceKeys", () => {
  it("names the store settings set in the workspace or folder, not the user's own", () => {
    assert.deepEqual(
      workspaceKeys(
        inspector({
          globalFolder: { globalValue: "~/g" },
          additionalFolders: { workspaceValue: ["shared/spec"] },
          maxMemoryBytes: { workspaceFolderValue: 4096 },
          primaryFolder: { workspaceValue: "  " },
          diagnostics: { workspaceValue: {} },
        }),
      ),
      ["additionalFolders", "maxMemoryBytes"],
    );
  });
});

describe("cliFlags", () => {
  it("gives memory-ls mcp the language server's folders and limits", () => {
    assert.deepEqual(
      cliFlags({
        layout: "serena",
        additionalFolders: ["shared/feature", { path: "shared/vendor", readOnly: true }, "a,b"],
        globalFolder: "~/g",
        maxMemoryBytes: 4096,
        secrets: "warn",
        diagnostics: { "broken-link": "off" },
      }),
      [
        "--layout",
        "serena",
        "--additional-folders",
        "shared/feature,shared/vendor:ro",
        "--global-folder",
        "~/g",
        "--max-memory-bytes",
        "4096",
        "--secrets",
        "warn",
      ],
    );
    assert.deepEqual(cliFlags({}), []);
  });
});

describe("folderEntries", () => {
  it("reads the string form with :ro and the object form", () => {
    assert.deepEqual(folderEntries(["a", "b :ro", { path: "c", readOnly: true }, { path: " d " }, 5, { path: "" }]), [
      { path: "a", readOnly: false },
      { path: "b", readOnly: true },
      { path: "c", readOnly: true },
      { path: "d", readOnly: false },
    ]);
  });

  it("reads the comma-separated form", () => {
    assert.deepEqual(folderEntries("x,y:ro,"), [
      { path: "x", readOnly: false },
      { path: "y", readOnly: true },
    ]);
  });
});

describe("memoryFolders", () => {
  it("uses the serena defaults", () => {
    assert.deepEqual(memoryFolders({}, environment()), [
      { path: "/work/repo/.serena/memories", kind: "primary" },
      { path: "/home/ada/.serena/memories/global", kind: "global" },
    ]);
  });

  it("honours SERENA_HOME for the global folder", () => {
    const folders = memoryFolders({}, environment([], { SERENA_HOME: "/opt/serena" }));
    assert.equal(folders.at(-1)?.path, "/opt/serena/memories/global");
  });

  it("switches to aicoder when only .aicoder/memory exists", () => {
    assert.equal(effectiveLayout({}, environment([".aicoder/memory"])), "aicoder");
    assert.equal(effectiveLayout({}, environment([".aicoder/memory", ".serena/memories"])), "serena");
    assert.equal(effectiveLayout({ layout: "aicoder" }, environment()), "aicoder");
    assert.deepEqual(memoryFolders({}, environment([".aicoder/memory"])), [
      { path: "/work/repo/.aicoder/memory", kind: "primary" },
      { path: "/home/ada/.config/aicoder/memory", kind: "global" },
    ]);
  });

  it("resolves configured folders against the root and home, in order", () => {
    const settings = toServerSettings({
      primaryFolder: "notes",
      additionalFolders: ["shared/feature", "/abs/spec:ro", { path: "~/team", readOnly: true }],
      globalFolder: "../global",
    });
    assert.deepEqual(memoryFolders(settings, environment()), [
      { path: "/work/repo/notes", kind: "primary" },
      { path: "/work/repo/shared/feature", kind: "additional" },
      { path: "/abs/spec", kind: "additional" },
      { path: "/home/ada/team", kind: "additional" },
      { path: "/work/global", kind: "global" },
    ]);
  });

  it("expands ~ alone", () => {
    assert.equal(resolveFolder("~", environment()), "/home/ada");
  });
});
