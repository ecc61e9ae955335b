import assert from "node:assert/strict";
import { describe, it } from "node:test";
import MarkdownIt from "markdown-it";
import {
  BROKEN_CLASS,
  LINK_CLASS,
  memoryLinksPlugin,
  referenceTarget,
  relativeHref,
  type Resolution,
} from "../../src/previewLinks";

const memories: Record<string, string> = {
  alpha: "/ws/.serena/memories/alpha.md",
  "auth/login_flow": "/ws/.serena/memories/auth/login_flow.md",
  "global/tips": "/home/ada/.serena/memories/global/tips.md",
  "FEATURE_checkout": "/ws/shared/feature/FEATURE_checkout.md",
};
const documentPath = "/ws/.serena/memories/notes/today.md";

function renderer(pending = false): MarkdownIt {
  const md = new MarkdownIt();
  memoryLinksPlugin(md, {
    lookup(target): Resolution {
      if (pending) {
        return "pending";
      }
      const path = memories[target];
      return path === undefined ? "broken" : { name: target, path };
    },
    href: (target, env) => relativeHref((env as { from: string }).from, target.path),
  });
  return md;
}

function render(text: string, md = renderer()): string {
  return md.render(text, { from: documentPath });
}

/** The anchors of rendered HTML: [href, text]. */
function anchors(html: string): [string, string][] {
  return [...html.matchAll(/<a class="memory-ls-link" href="([^"]*)"[^>]*>(.*?)<\/a>/g)].map((m) => [
    m[1] ?? "",
    m[2] ?? "",
  ]);
}

describe("memory links in the preview", () => {
  it("renders [[name]], [[name|label]] and `mem:name` as links to the memory's file", () => {
    const html = render("See [[alpha]], [[auth/login_flow|the login]] and `mem:FEATURE_checkout`.\n");
    assert.deepEqual(anchors(html), [
      ["../alpha.md", "alpha"],
      ["../auth/login_flow.md", "the login"],
      ["../../../shared/feature/FEATURE_checkout.md", "<code>mem:FEATURE_checkout</code>"],
    ]);
    assert.match(html, /data-href="\.\.\/alpha\.md"/);
    assert.match(html, /title="Open memory alpha \(\/ws\/\.serena\/memories\/alpha\.md\)"/);
  });

  it("normalises names as the server does: spaces, .md, mem:, global/", () => {
    assert.equal(referenceTarget("  alpha.md "), "alpha");
    assert.equal(referenceTarget("mem:global/tips"), "global/tips");
    assert.equal(referenceTarget("   "), undefined);
    const html = render("[[ global/tips ]] [[alpha.md]]\n");
    assert.deepEqual(anchors(html), [
      ["../../../../home/ada/.serena/memories/global/tips.md", "global/tips"],
      ["../alpha.md", "alpha.md"],
    ]);
  });

  it("shows broken links as such, with a title that says the memory is not found", () => {
    const html = render("[[nowhere]] and [[Alpha]] and `mem:gone`\n");
    assert.equal(anchors(html).length, 0);
    const broken = [...html.matchAll(new RegExp(`<span class="${LINK_CLASS} ${BROKEN_CLASS}" title="([^"]*)"`, "g"))];
    assert.deepEqual(
      broken.map((m) => m[1]),
      [
        "Memory not found: no memory named nowhere",
        "Memory not found: no memory named Alpha",
        "Memory not found: no memory named gone",
      ],
    );
  });

  it("leaves code alone: fenced, indented and inline code keep [[...]] as text", () => {
    const html = render("```\n[[alpha]]\n```\n\n    [[alpha]]\n\n`[[alpha]]` and `other code`\n");
    assert.equal(anchors(html).length, 0);
    assert.match(html, /<pre><code>\[\[alpha\]\]\n<\/code><\/pre>/);
    assert.match(html, /<code>\[\[alpha\]\]<\/code> and <code>other code<\/code>/);
  });

  it("escapes what it writes and keeps ordinary Markdown links and text", () => {
    const html = render('[[a<b"|x<y]] [link](alpha.md) [[]] [[x\ny]]\n');
    assert.match(html, /title="Memory not found: no memory named a&lt;b&quot;" data-memory="a&lt;b&quot;">x&lt;y<\/span>/);
    assert.match(html, /<a href="alpha.md">link<\/a>/);
    assert.match(html, /\[\[\]\]/);
    assert.match(html, /\[\[x\ny\]\]/);
  });

  it("does not nest a link in a Markdown link's text", () => {
    const html = render("[see [[alpha]] and `mem:alpha`](https://example.com) then `mem:alpha`\n");
    assert.match(html, /<a href="https:\/\/example.com">see \[\[alpha\]\] and <code>mem:alpha<\/code><\/a>/);
    assert.deepEqual(anchors(html), [["../alpha.md", "<code>mem:alpha</code>"]]);
    // Not a link's text: a memory link, as the server reads it.
    assert.deepEqual(anchors(render("[[alpha]](https://example.com) and [open [[alpha]]\n")), [
      ["../alpha.md", "alpha"],
      ["../alpha.md", "alpha"],
    ]);
  });

  it("marks links as pending while the memories are being listed", () => {
    const html = render("[[alpha]]\n", renderer(true));
    assert.match(html, /class="memory-ls-link memory-ls-pending"/);
  });
});

describe("relativeHref", () => {
  it("is relative, percent-encoded, and a file URI only with nothing in common", () => {
    assert.equal(relativeHref("/a/b/c.md", "/a/b/d.md"), "d.md");
    assert.equal(relativeHref("/a/b/c.md", "/a/x y/d.md"), "../x%20y/d.md");
    assert.equal(relativeHref("C:\\w\\n.md", "D:\\m\\x.md", "\\"), "file:///D:/m/x.md");
    assert.equal(relativeHref("C:\\w\\n.md", "C:\\w\\m\\x.md", "\\"), "m/x.md");
    assert.equal(relativeHref("c:\\w\\n.md", "C:\\W\\m\\x.md", "\\"), "m/x.md");
  });
});
