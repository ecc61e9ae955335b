"""The syntax of other agents' files as functions of text: imports, index links, globs, cuts.

Claude Code's `@path` imports and MEMORY.md's links, the glob patterns that scope Claude
Code's, Cursor's and Copilot's rules, the frontmatter Cursor writes (not always YAML), and
where an agent that loads only part of a file stops reading. Each rule cites the agent's
documentation; the layouts (`memory_ls.core.layouts`) say which files they apply to.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from memory_ls.core.rules.references import iter_lines_outside_code

# Code spans of any backtick run (CommonMark): what is inside one is not an import.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
# Claude Code: "CLAUDE.md files can import additional files using @path/to/import syntax";
# "imports are not evaluated inside Markdown code spans and code blocks"
# (https://code.claude.com/docs/en/memory#import-additional-files). An import starts a
# line or follows white space (so `me@example.com` is none) and runs to white space.
_IMPORT = re.compile(r"(?:(?<=\s)|^)@([^\s@`]+)")
# Punctuation that ends a sentence rather than a path: `see @docs/a.md.` imports docs/a.md.
_TRAILING = ".,;:!?)]}>\"'"
# An inline Markdown link: [label](target "title"); images (`![`) are not index entries.
_LINK = re.compile(r"(?<!!)\[([^\]\n]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True)
class Span:
    """Text at a place: 0-based line and code-point columns of what was written."""

    line: int
    start: int
    end: int
    written: str


def _outside_spans(line: str) -> Iterator[tuple[int, int]]:
    """The (start, end) stretches of a line that are not inline code."""
    position = 0
    if "`" in line:
        for match in _CODE_SPAN.finditer(line):
            yield position, match.start()
            position = match.end()
    yield position, len(line)


def find_imports(text: str) -> list[Span]:
    """Claude Code's `@path` imports in a text, outside code blocks and code spans."""
    found: list[Span] = []
    if "@" not in text:
        return found
    for number, line in iter_lines_outside_code(text):
        if "@" not in line:
            continue
        for start, end in _outside_spans(line):
            for match in _IMPORT.finditer(line, start, end):
                written = match.group(1).rstrip(_TRAILING)
                if written:
                    found.append(
                        Span(number, match.start(1), match.start(1) + len(written), written)
                    )
    return found


def looks_like_path(written: str) -> bool:
    """Whether an `@word` is meant as a file: it has a folder, an extension or `~`.

    Claude Code tries every `@word` as a file and skips what does not exist, so `@alice`
    in a sentence is a mention; a missing `@docs/setup.md` is a lost instruction.
    """
    return "/" in written or written.startswith("~") or bool(re.search(r"\.\w+$", written))


def index_links(text: str) -> list[Span]:
    """The local files a Markdown text links to (MEMORY.md's index entries), outside code.

    Web links, anchors in the same file and images are left out; a `#fragment` is cut off.
    """
    found: list[Span] = []
    if "](" not in text:
        return found
    for number, line in iter_lines_outside_code(text):
        if "](" not in line:
            continue
        for start, end in _outside_spans(line):
            for match in _LINK.finditer(line, start, end):
                target = match.group(2)
                if _URL.match(target) or target.startswith("#"):
                    continue
                path = target.split("#", 1)[0]
                if path:
                    found.append(Span(number, match.start(2), match.start(2) + len(path), path))
    return found


def _brace_alternatives(pattern: str) -> list[str]:
    """`{a,b}` expanded (nested braces too), as the glob libraries the agents use do."""
    match = re.search(r"\{([^{}]*)\}", pattern)
    if match is None:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    options = match.group(1).split(",")
    return [
        expanded for option in options for expanded in _brace_alternatives(head + option + tail)
    ]


def _glob_to_regex(pattern: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "*":
            if pattern.startswith("**", index):
                index += 2
                at_start = index == 2 or pattern[index - 3] == "/"
                if at_start and pattern.startswith("/", index):
                    index += 1
                    out.append("(?:[^/]*/)*")  # `**/`: any number of folders, none included
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            close = pattern.find("]", index + 1)
            if close == -1:
                out.append(re.escape(char))
            else:
                body = pattern[index + 1 : close]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                index = close
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


@functools.lru_cache(maxsize=512)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob as the agents read it: `*` within a folder, `**` across folders, `{a,b}`.

    Patterns are relative to the repository's root, `/`-separated, as in Claude Code's
    `paths:`, Cursor's `globs` and Copilot's `applyTo`; a leading `/` or `./` is dropped.
    """
    cleaned = pattern.strip()
    while cleaned.startswith(("./", "/")):
        cleaned = cleaned[2:] if cleaned.startswith("./") else cleaned[1:]
    alternatives = [_glob_to_regex(p) for p in _brace_alternatives(cleaned)]
    return re.compile("(?:" + "|".join(alternatives) + r")\Z", re.DOTALL)


def glob_matches_any(pattern: str, paths: Iterable[str]) -> bool:
    """Whether a glob matches at least one of the paths (relative, `/`-separated)."""
    regex = glob_regex(pattern)
    return any(regex.match(path) for path in paths)


@dataclass(frozen=True)
class LoadCut:
    """Where an agent that loads the first lines or bytes of a text stops reading it."""

    line: int  # 0-based line and column of the first character not loaded
    col: int
    loaded_lines: int  # lines loaded whole
    total_lines: int
    total_bytes: int
    by: str  # "lines" or "bytes": the limit reached first


def line_count(text: str) -> int:
    """Lines of a text as an editor numbers them (a final line break ends the last one)."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def load_cut(text: str, max_lines: int, max_bytes: int) -> LoadCut | None:
    """Where loading the first `max_lines` lines or `max_bytes` bytes (whichever is first)
    stops, or None when the whole text is loaded."""
    total_lines = line_count(text)
    data = text.encode("utf-8", "surrogatepass")
    if total_lines <= max_lines and len(data) <= max_bytes:
        return None
    lines = text.split("\n")
    # Bytes before each line: the first line not loaded whole by the byte limit.
    offset = 0
    for number, line in enumerate(lines[:max_lines]):
        size = len(line.encode("utf-8", "surrogatepass"))
        if offset + size > max_bytes:
            read = data[offset:max_bytes].decode("utf-8", "ignore")
            return LoadCut(number, len(read), number, total_lines, len(data), "bytes")
        offset += size + 1  # its line break
    return LoadCut(max_lines, 0, max_lines, total_lines, len(data), "lines")


def lenient_frontmatter(text: str) -> tuple[dict[str, str], int] | None:
    """`key: value` pairs of a frontmatter block read as Cursor reads `.mdc` files, and the
    0-based line of the body; None without a block.

    Cursor writes `globs: *.ts,src/**` unquoted, which YAML would read as an alias, so the
    values are taken as written (https://cursor.com/docs/context/rules).
    """
    lines = text.lstrip("\ufeff").split("\n")
    if not lines or lines[0].rstrip() != "---":
        return None
    values: dict[str, str] = {}
    for number, line in enumerate(lines[1:], start=1):
        if line.rstrip() == "---":
            return values, number + 1
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t", "#")):
            values[key.strip()] = _unquote(value.strip())
    return None


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def split_globs(value: object) -> list[str]:
    """Glob patterns from a frontmatter value: a list, or text separated by commas."""
    if isinstance(value, list):
        items = [str(v) for v in value if v is not None]
    elif isinstance(value, str):
        text = _unquote(value.strip())
        if text.startswith("[") and text.endswith("]"):
            text = text[1:-1]
        items = _split_outside_braces(text)
    else:
        return []
    return [_unquote(item.strip()) for item in items if item.strip()]


def _split_outside_braces(text: str) -> list[str]:
    """Split at commas that are not inside `{a,b}`."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(0, depth - 1)
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_NOT_WORD = re.compile(r"[^\w\s]+")
# A fact shorter than this is a heading's worth of words: alike by chance, not by copying.
FACT_MIN_WORDS = 6


def fact_lines(text: str) -> list[tuple[int, str]]:
    """The facts of a Markdown text, one per list item or line of prose, normalised so that
    the same fact written in two files compares equal: (0-based line, normalised text).

    Frontmatter, headings, fenced code and short lines are left out; case, Markdown marks
    and punctuation do not count.
    """
    found: list[tuple[int, str]] = []
    body_start = 0
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end != -1:
            body_start = text.count("\n", 0, end + 1) + 1
    for number, line in iter_lines_outside_code(text):
        if number < body_start or line.lstrip().startswith(("#", ">", "|", "<")):
            continue
        plain = _NOT_WORD.sub(" ", _LIST_MARKER.sub("", line)).lower()
        words = plain.split()
        if len(words) >= FACT_MIN_WORDS:
            found.append((number, " ".join(words)))
    return found


def estimate_tokens(text: str) -> int:
    """About how many tokens a text costs an agent: one per four characters, rounded up.

    A tokenizer's exact count depends on the model (and none ships offline); four
    characters a token is the usual rule of thumb for English text and code, the same for
    every file, so the counts compare files and budgets honestly, not to the token.
    """
    return (len(text) + 3) // 4
