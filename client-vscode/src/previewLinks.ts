// A markdown-it plugin for VS Code's Markdown preview: `[[name]]`, `[[name|label]]` and
// `mem:name` (in inline code) become links to the memory, broken ones visibly so.
// Pure: it gets markdown-it from the caller and resolves names through `lookup`.
import type MarkdownIt from "markdown-it";

/** A memory a link resolves to. */
export interface MemoryTarget {
  name: string;
  path: string;
}

/** What a name resolves to: a memory, none (broken), or not known yet (still listing). */
export type Resolution = MemoryTarget | "broken" | "pending";

export interface MemoryLinkOptions {
  /** Resolve a reference target (`name` or `global/name`, as the server looks it up). */
  lookup(target: string, env: unknown): Resolution;
  /** The href of a link to a memory, from the document being rendered. */
  href(target: MemoryTarget, env: unknown): string;
}

export const LINK_CLASS = "memory-ls-link";
export const BROKEN_CLASS = "memory-ls-broken";
export const PENDING_CLASS = "memory-ls-pending";

// The server's `[[...]]` (core/rules/references.py): no brackets or newline in the name, an
// optional `|label`.
const WIKI = /\[\[([^[\]|\n]*)(?:\|([^[\]\n]*))?\]\]/y;
const MEM_PREFIX = "mem:";
const GLOBAL_PREFIX = "global/";

/** The name a reference looks up, as the server normalises it (SPEC 2.1): spaces trimmed,
 * no `mem:` and no `.md`; `global/` kept (it names the scope). Undefined for an empty one. */
export function referenceTarget(raw: string): string | undefined {
  let text = raw.trim();
  if (text.startsWith(MEM_PREFIX)) {
    text = text.slice(MEM_PREFIX.length);
  }
  if (text.endsWith(".md")) {
    text = text.slice(0, -3);
  }
  const isGlobal = text.startsWith(GLOBAL_PREFIX);
  const name = isGlobal ? text.slice(GLOBAL_PREFIX.length) : text;
  return name === "" && !isGlobal ? undefined : (isGlobal ? GLOBAL_PREFIX : "") + name;
}

interface LinkMeta {
  target: string;
  label: string;
  code: boolean;
}

export function memoryLinksPlugin(md: MarkdownIt, options: MemoryLinkOptions): void {
  const escape = md.utils.escapeHtml;

  function wikiLink(state: MarkdownIt.StateInline, silent: boolean): boolean {
    const start = state.pos;
    // Inside a Markdown link's text a link would nest in a link (markdown-it 13+ counts
    // the levels; its types do not say so). Silent is the look-ahead for a link's text
    // (`[see [[x]]](url)`): there `[[x]]` must be plain brackets, or the text would hold a
    // nested link and be no link.
    const linkLevel = (state as { linkLevel?: number }).linkLevel ?? 0;
    if (silent || linkLevel > 0 || state.src.charCodeAt(start) !== 0x5b || state.src.charCodeAt(start + 1) !== 0x5b) {
      return false;
    }
    WIKI.lastIndex = start;
    const match = WIKI.exec(state.src);
    const target = match ? referenceTarget(match[1] ?? "") : undefined;
    if (match === null || target === undefined) {
      return false;
    }
    const token = state.push("memory_link", "", 0);
    const meta: LinkMeta = { target, label: (match[2] ?? match[1] ?? "").trim() || target, code: false };
    token.meta = meta;
    token.content = match[0];
    state.pos += match[0].length;
    return true;
  }

  function render(meta: LinkMeta, env: unknown): string {
    const inner = meta.code ? `<code>${escape(meta.label)}</code>` : escape(meta.label);
    const found = options.lookup(meta.target, env);
    if (found === "pending") {
      return `<span class="${LINK_CLASS} ${PENDING_CLASS}" title="${escape(
        `Memory ${meta.target}: the memories are still being listed`,
      )}">${inner}</span>`;
    }
    if (found === "broken") {
      return `<span class="${LINK_CLASS} ${BROKEN_CLASS}" title="${escape(
        `Memory not found: no memory named ${meta.target}`,
      )}" data-memory="${escape(meta.target)}">${inner}</span>`;
    }
    const href = escape(options.href(found, env));
    // data-href: the preview opens it as it opens any Markdown link (VS Code's own renderer
    // adds it to every link).
    return `<a class="${LINK_CLASS}" href="${href}" data-href="${href}" title="${escape(
      `Open memory ${found.name} (${found.path})`,
    )}" data-memory="${escape(found.name)}">${inner}</a>`;
  }

  // Before `link`: `[[x]]` is no Markdown link. Code spans are parsed first (`backticks`
  // comes earlier), so `[[x]]` in inline code stays text, as fenced code does.
  md.inline.ruler.before("link", "memory_wikilink", wikiLink);
  md.renderer.rules.memory_link = (tokens, index, _options, env) => render(tokens[index]?.meta as LinkMeta, env);

  // Inline code inside a link's text stays code (a link would nest in a link).
  md.core.ruler.after("inline", "memory_code_in_links", (state) => {
    for (const block of state.tokens) {
      let depth = 0;
      for (const token of block.children ?? []) {
        depth += token.type === "link_open" ? 1 : token.type === "link_close" ? -1 : 0;
        if (token.type === "code_inline" && depth > 0) {
          token.meta = { ...(token.meta as object | null), inLink: true };
        }
      }
    }
  });

  const codeInline: MarkdownIt.Renderer.RenderRule | undefined = md.renderer.rules.code_inline;
  md.renderer.rules.code_inline = (tokens, index, renderOptions, env, self) => {
    const token = tokens[index];
    const content = token?.content ?? "";
    const inLink = (token?.meta as { inLink?: boolean } | null)?.inLink === true;
    const target = content.startsWith(MEM_PREFIX) && !inLink ? referenceTarget(content) : undefined;
    if (token === undefined || target === undefined || content.includes("\n")) {
      return codeInline ? codeInline(tokens, index, renderOptions, env, self) : self.renderToken(tokens, index, renderOptions);
    }
    return render({ target, label: content, code: true }, env);
  };
}

/** A href from one file to another: relative (percent-encoded segments), as a Markdown
 * link is written, so the preview opens it like any other link. */
export function relativeHref(fromFile: string, toFile: string, separator = "/"): string {
  const split = (path: string): string[] => path.split(separator === "\\" ? /[\\/]/ : "/");
  const from = split(fromFile).slice(0, -1);
  const to = split(toFile);
  // Windows paths differ in case only where they name the same place ("c:" and "C:").
  const fold = (segment?: string): string | undefined => (separator === "\\" ? segment?.toLowerCase() : segment);
  const same = (a?: string, b?: string): boolean => fold(a) === fold(b);
  let common = 0;
  while (common < from.length && common < to.length - 1 && same(from[common], to[common])) {
    common += 1;
  }
  if (common === 0) {
    return encodeURI(`file://${toFile.startsWith("/") ? "" : "/"}${to.join("/")}`);
  }
  const up = from.slice(common).map(() => "..");
  const down = to.slice(common).map((segment) => encodeURIComponent(segment));
  return [...up, ...down].join("/") || ".";
}
