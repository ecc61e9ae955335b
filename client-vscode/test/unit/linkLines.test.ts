import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { lineSnippet, namesFile, sourceVerb } from "../../src/linkLines";

describe("lineSnippet", () => {
  it("keeps a short line whole, spaces collapsed", () => {
    assert.equal(lineSnippet("  See [[alpha]]   now ", 8), "See [[alpha]] now");
  });

  it("starts a few words before a link far into the line, at a word", () => {
    const line = "[[FEATURE_BUILDER_pipeline]]; the public contract in [[SPEC_payments_api]].";
    assert.equal(lineSnippet(line, line.indexOf("SPEC")), "…public contract in [[SPEC_payments_api]].");
    assert.equal(lineSnippet(line, 2), line);
  });

  it("cuts inside a word when there is no space before the link", () => {
    assert.equal(lineSnippet(`${"x".repeat(40)}[[a]]`, 42, 10), `…${"x".repeat(8)}[[a]]`);
  });
});

describe("agents' files' links", () => {
  it("says how an agent's file links to the document", () => {
    assert.equal(sourceVerb("import"), "imports it");
    assert.equal(sourceVerb("index"), "indexes it");
    assert.equal(sourceVerb("reference"), "");
    assert.equal(sourceVerb(undefined), "");
  });

  it("tells file links from memory references", () => {
    assert.deepEqual(["wiki", "mem", "import", "index"].map(namesFile), [false, false, true, true]);
  });
});
