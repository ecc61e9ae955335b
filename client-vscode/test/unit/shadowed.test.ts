import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MemoryInfo } from "../../src/protocol";
import { folderOf, isShadowed, withShadowed } from "../../src/shadowed";

function memory(name: string, folder: string, shadows: string[] = []): MemoryInfo {
  return {
    name,
    path: `${folder}/${name}.md`,
    scope: "project",
    folder,
    tags: ["t"],
    updatedAt: "2026-01-01",
    readOnly: false,
    validName: true,
    shadows,
  };
}

describe("withShadowed", () => {
  it("lists each shadowed file after the memories, in its own folder, marked", () => {
    const primary = "/repo/.serena/memories";
    const team = "/team/memories";
    const winner = memory("style", primary, [`${team}/style.md`]);
    const other = memory("other", primary);
    const all = withShadowed([winner, other], [primary, team, "/team"]);
    assert.equal(all.length, 3);
    const hidden = all[2];
    assert.ok(hidden !== undefined && isShadowed(hidden));
    assert.equal(hidden.name, "style");
    assert.equal(hidden.path, `${team}/style.md`);
    // The deepest configured folder above it.
    assert.equal(hidden.folder, team);
    assert.equal(hidden.shadowedBy, winner.path);
    assert.deepEqual(hidden.tags, []);
    assert.equal(isShadowed(winner), false);
  });

  it("changes nothing without shadows, and finds a folder from the listed memories or the path", () => {
    const list = [memory("a", "/p")];
    assert.deepEqual(withShadowed(list), list);
    assert.equal(folderOf("/x/y/a.md", ["/p", "/x"]), "/x");
    assert.equal(folderOf("/q/r/a.md", ["/p"]), "/q/r");
  });
});
