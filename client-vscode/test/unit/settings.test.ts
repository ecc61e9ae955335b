import assert from "node:assert/strict";
import * as path from "node:path";
import { describe, it } from "node:test";
import {
  cliFlags,
  effectiveLayout,
  folderEntries,
  memoryFolders,
  resolveFolder,
  SERVER_KEYS,
  toServerSettings,
  type Environment,
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
