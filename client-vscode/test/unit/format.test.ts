import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  aboutPickItems,
  countLabel,
  describeRoute,
  displayPath,
  groupMemories,
  memoryPickText,
  parseTags,
  splitTags,
  suggestName,
  suggestValidName,
  workspaceRelative,
} from "../../src/format";
import type { AboutResult, MemoryInfo } from "../../src/protocol";

const places = { root: "/work/repo", home: "/home/ada" };

function memory(name: string, folder: string, extra: Partial<MemoryInfo> = {}): MemoryInfo {
  return {
    name,
    path: `${folder}/${name}.md`,
    scope: folder.startsWith("/home") ? "global" : "project",
    folder,
    tags: [],
    updatedAt: null,
    readOnly: false,
    validName: true,
    shadows: [],
    ...extra,
  };
}

describe("displayPath", () => {
  it("is relative inside the workspace, ~ under home, else absolute", () => {
    assert.equal(displayPath("/work/repo/shared/feature/X.md", places), "shared/feature/X.md");
    assert.equal(displayPath("/work/repo", places), ".");
    assert.equal(displayPath("/home/ada/.serena/memories/global", places), "~/.serena/memories/global");
    assert.equal(displayPath("/work/repo-other/a.md", places), "/work/repo-other/a.md");
    assert.equal(displayPath("/work/x.md", { root: undefined, home: "/home/ada" }), "/work/x.md");
  });
});

describe("describeRoute", () => {
  it("names the target path and why", () => {
    const text = describeRoute(
      { name: "FEATURE_x", path: "/work/repo/shared/feature/FEATURE_x.md", folder: "/work/repo/shared/feature", routedBy: "prefix", exists: false, readOnly: false, unknownPrefix: null },
      places,
    );
    assert.equal(text, "FEATURE_x → shared/feature/FEATURE_x.md (new; routed by its ALL-CAPS prefix)");
    assert.match(
      describeRoute(
        { name: "a", path: "/work/repo/.serena/memories/a.md", folder: "", routedBy: "existing", exists: true, readOnly: false, unknownPrefix: null },
        places,
      ),
      /overwrites it in place/,
    );
  });

  it("says when the target is read-only or the prefix matches no folder", () => {
    const vendor = "/work/repo/shared/vendor";
    assert.equal(
      describeRoute(
        { name: "VENDOR_x", path: `${vendor}/VENDOR_x.md`, folder: vendor, routedBy: "prefix", exists: false, readOnly: true, unknownPrefix: null },
        places,
      ),
      "VENDOR_x → shared/vendor/VENDOR_x.md is read-only: a save there is refused. Choose another name or prefix.",
    );
    assert.equal(
      describeRoute(
        { name: "BUGFIX_crash", path: "/work/repo/.serena/memories/BUGFIX_crash.md", folder: "", routedBy: "default", exists: false, readOnly: false, unknownPrefix: "BUGFIX" },
        places,
      ),
      "BUGFIX_crash → .serena/memories/BUGFIX_crash.md (new; the primary folder). Prefix BUGFIX matches no additional folder, so it stays in the primary folder.",
    );
  });
});

describe("groupMemories", () => {
  it("groups by scope, then folder, sorted, leaving out empty scopes", () => {
    const primary = "/work/repo/.serena/memories";
    const feature = "/work/repo/shared/feature";
    const groups = groupMemories(
      [memory("zeta", primary), memory("FEATURE_b", feature), memory("alpha", primary), memory("FEATURE_a", feature)],
      places,
    );
    assert.deepEqual(
      groups.map((scope) => [scope.label, scope.folders.map((f) => [f.label, f.memories.map((m) => m.name)])]),
      [["Project", [[".serena/memories", ["alpha", "zeta"]], ["shared/feature", ["FEATURE_a", "FEATURE_b"]]]]],
    );
  });

  it("puts global memories after project ones", () => {
    const groups = groupMemories([memory("tips", "/home/ada/g"), memory("a", "/work/repo/m")], places);
    assert.deepEqual(
      groups.map((g) => g.scope),
      ["project", "global"],
    );
    assert.equal(groups[1]?.folders[0]?.label, "~/g");
  });
});

describe("memoryPickText", () => {
  it("shows folder, scope, read-only and tags", () => {
    assert.deepEqual(memoryPickText(memory("v", "/work/repo/shared/vendor", { readOnly: true, tags: ["sdk", "x"] }), places), {
      label: "v",
      description: "shared/vendor · project, read-only",
      detail: "#sdk #x",
    });
  });
});

describe("small helpers", () => {
  it("parses tags", () => {
    assert.deepEqual(parseTags(" auth, #api  auth,,"), ["auth", "api"]);
    assert.deepEqual(parseTags(""), []);
  });

  it("splits #tags from the words of a search", () => {
    assert.deepEqual(splitTags("#payments  retry #api"), { words: "retry", tags: ["payments", "api"] });
    assert.deepEqual(splitTags("# heading"), { words: "# heading", tags: [] });
    assert.deepEqual(splitTags("#payments"), { words: "", tags: ["payments"] });
  });

  it("counts", () => {
    assert.equal(countLabel(1), "1 memory");
    assert.equal(countLabel(0), "0 memories");
  });

  it("suggests a name from selected text", () => {
    assert.equal(suggestName("\n## Login flow: the steps!\nmore"), "Login_flow_the_steps");
    assert.equal(suggestName("   "), "");
  });
});

describe("suggestValidName", () => {
  it("replaces what the naming rules forbid", () => {
    assert.equal(suggestValidName("bad:draft"), "bad_draft");
    assert.equal(suggestValidName("notes\u200bdraft"), "notes_draft");
    assert.equal(suggestValidName(".."), "_");
    assert.equal(suggestValidName("fine_name"), "fine_name");
  });
});

describe("workspaceRelative", () => {
  it("gives the path from the root with /, and nothing outside it", () => {
    assert.equal(workspaceRelative("/work/repo", "/work/repo/src/shop/cart.py"), "src/shop/cart.py");
    assert.equal(workspaceRelative("/work/repo/", "/work/repo/a.md"), "a.md");
    assert.equal(workspaceRelative("/work/repo", "/work/repo"), undefined);
    assert.equal(workspaceRelative("/work/repo", "/work/other/x.py"), undefined);
    assert.equal(workspaceRelative("/work/repo", "/work/repo-2/x.py"), undefined);
  });
});

describe("aboutPickItems", () => {
  const result: AboutResult = {
    target: "src/shop/cart.py",
    targetPath: "src/shop/cart.py",
    more: 0,
    memories: [
      {
        name: "cart_rules",
        path: "/work/repo/.serena/memories/cart_rules.md",
        scope: "project",
        title: "Cart rules",
        match: "path",
        lines: [
          { line: 3, text: "Like `cart.py` elsewhere", match: "name" },
          { line: 7, text: "Totals in `src/shop/cart.py`", match: "path" },
        ],
        moreLines: 2,
      },
      {
        name: "style",
        path: "/work/repo/.serena/memories/style.md",
        scope: "project",
        title: "",
        match: "symbol",
        lines: [{ line: 1, text: "Use `shop.cart`", match: "symbol" }],
        moreLines: 0,
      },
    ],
  };

  it("shows each memory with its best mentioning line, and opens it there", () => {
    assert.deepEqual(aboutPickItems(result), [
      {
        label: "cart_rules",
        description: "Cart rules · names this path",
        detail: "7: Totals in `src/shop/cart.py` (+3 more lines)",
        path: "/work/repo/.serena/memories/cart_rules.md",
        line: 7,
      },
      {
        label: "style",
        description: "in code",
        detail: "1: Use `shop.cart`",
        path: "/work/repo/.serena/memories/style.md",
        line: 1,
      },
    ]);
  });
});
