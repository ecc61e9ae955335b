// How a linking line is shown in one row: the words just before the link, then the rest.

/** A line's text from a few words before column `start` (UTF-16, as LSP's), with an
 * ellipsis where the start is cut and runs of spaces collapsed. */
export function lineSnippet(text: string, start: number, before = 24): string {
  const cut = Math.max(0, Math.min(start, text.length) - before);
  let from = cut;
  if (cut > 0) {
    // Start at a word: after the first space past the cut, when it is before the link.
    const space = text.indexOf(" ", cut);
    from = space >= 0 && space < start ? space + 1 : cut;
  }
  const shown = text.slice(from).replace(/\s+/g, " ").trim();
  return from > 0 ? `…${shown}` : shown;
}

/** A backlink's kind as said before its line: an agent's file imports or indexes the file. */
export function sourceVerb(kind: string | undefined): string {
  return kind === "import" ? "imports it" : kind === "index" ? "indexes it" : "";
}

/** Whether an outgoing link names a file (an `@path` import, a MEMORY.md link), not a memory. */
export function namesFile(form: string): boolean {
  return form === "import" || form === "index";
}
