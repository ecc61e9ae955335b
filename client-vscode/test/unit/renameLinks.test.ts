import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { planRenameSaves, renamedUri } from "../../src/renameLinks";

const mem = "file:///work/repo/.serena/memories";

describe("renamedUri", () => {
  it("follows a renamed file and the files of a renamed folder", () => {
    const renames = [
      { oldUri: `${mem}/a.md`, newUri: `${mem}/b.md` },
      { oldUri: `${mem}/auth`, newUri: `${mem}/identity` },
    ];
    assert.equal(renamedUri(`${mem}/a.md`, renames), `${mem}/b.md`);
    assert.equal(renamedUri(`${mem}/auth/login.md`, renames), `${mem}/identity/login.md`);
    assert.equal(renamedUri(`${mem}/authors.md`, renames), `${mem}/authors.md`);
    assert.equal(renamedUri(`${mem}/c.md`, renames), `${mem}/c.md`);
  });
});

describe("planRenameSaves", () => {
  it("saves the files the edit made dirty and leaves the user's unsaved work alone", () => {
    const plan = planRenameSaves(
      [
        { uri: `${mem}/overview.md`, dirtyBefore: false },
        { uri: `${mem}/draft.md`, dirtyBefore: true },
        { uri: `${mem}/a.md`, dirtyBefore: false },
        { uri: `${mem}/overview.md`, dirtyBefore: false },
      ],
      [{ oldUri: `${mem}/a.md`, newUri: `${mem}/b.md` }],
    );
    // The renamed file's own links are saved where it is now; each file once.
    assert.deepEqual(plan.save, [`${mem}/overview.md`, `${mem}/b.md`]);
    assert.deepEqual(plan.keptDirty, [`${mem}/draft.md`]);
  });
});
