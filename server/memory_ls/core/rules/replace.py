"""Serena's text edits as pure functions: `edit_memory`'s replace and `rename_memory`'s rewrite.

Serena 2.1.0 (`ContentReplacer` with `regex_multiline=True`, and
`MemoryManager.rename_references_to_memory`) is the reference; where this differs, the
difference is named in the docstring.
"""

from __future__ import annotations

import bisect
import re
import time
import warnings
from collections.abc import Callable

import regex

from memory_ls.core.rules.document import line_break
from memory_ls.core.rules.errors import AmbiguousMatch, InvalidArguments, NoMatch
from memory_ls.core.rules.names import MEM_PREFIX
from memory_ls.core.rules.references import serena_mem_references

# How long one edit may search one memory: a pattern that backtracks without end would
# otherwise hold the folder's write lock for good (`re`, which Serena uses, has no limit).
REGEX_TIMEOUT_SECONDS = 2.0
_FLAGS = regex.MULTILINE | regex.DOTALL | regex.VERSION0
_BACKREF = re.compile(r"\$!(\d+)")  # Serena's pattern, `\d` Unicode digits included
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# The `regex` module reads a few things differently from `re`, which Serena uses. Its
# \w, \d, \s and \b follow newer Unicode rules; these are `re`'s (`str.isalnum()` and `_`,
# `str.isdecimal()`, `str.isspace()`), written as `regex` properties.
_RE_WORD = r"\p{L}\p{Nd}\p{Nl}\p{No}_"
_RE_SPACE = r"\s\x1c-\x1f"
_CLASSES = {
    "w": f"[{_RE_WORD}]",
    "W": f"[^{_RE_WORD}]",
    "d": r"\p{Nd}",
    "D": r"\P{Nd}",
    "s": f"[{_RE_SPACE}]",
    "S": f"[^{_RE_SPACE}]",
    "b": f"(?:(?<=[{_RE_WORD}])(?![{_RE_WORD}])|(?<![{_RE_WORD}])(?=[{_RE_WORD}]))",
    # `re` never finds \B in an empty string.
    "B": f"(?:(?<=[{_RE_WORD}])(?=[{_RE_WORD}])|(?<![{_RE_WORD}])(?![{_RE_WORD}]))(?!\\A\\Z)",
}
# Inside a set: \W and \S have no single-property form in VERSION0 and stay `regex`'s own.
_SET_CLASSES = {"w": _RE_WORD, "d": r"\p{Nd}", "D": r"\P{Nd}", "s": _RE_SPACE}
_QUANTIFIER = re.compile(r"\{(?:\d+,?\d*|,\d*)\}")
_ASCII_FLAG = re.compile(r"\(\?[aiLmsux-]*a")
_VERBOSE_FLAG = re.compile(r"\(\?[aiLmsux-]*x")


def replace_text(
    content: str, needle: str, repl: str, mode: str, allow_multiple: bool, name: str
) -> tuple[str, int]:
    """`content` with `needle` replaced as Serena's `edit_memory` does; (new content, count).

    `mode` is "literal" or "regex"; `name` names the memory in error messages. Serena
    reads files with universal newlines, so the needle is matched against the text with
    every line break as `\\n`; unlike Serena, which writes the file back with `\\n`
    everywhere, the text outside the matches keeps its bytes, and a replacement put into
    a text whose line breaks are all CRLF gets CRLF line breaks.
    """
    pattern = compile_needle(needle, mode)
    view, to_content = _universal_newlines(content)
    deadline = time.monotonic() + REGEX_TIMEOUT_SECONDS
    spans: list[tuple[int, int, str]] = []
    try:
        for match in pattern.finditer(view, timeout=REGEX_TIMEOUT_SECONDS):
            spans.append((match.start(), match.end(), _replacement(match, repl, mode, deadline)))
            if time.monotonic() > deadline:
                raise TimeoutError
    except TimeoutError as exc:
        raise InvalidArguments(
            f"The regular expression ran over {REGEX_TIMEOUT_SECONDS:g} s on memory {name!r} "
            "(it backtracks too much: repeated groups whose parts can match the same text, "
            "such as (a|aa)+, try every way to split it); nothing was changed."
        ) from exc
    except _Refused as exc:
        raise exc.error_for(name) from None
    if not spans:
        raise NoMatch(f"The needle was not found in memory {name!r}; nothing was changed.")
    if len(spans) > 1 and not allow_multiple:
        raise AmbiguousMatch(
            f"The needle matches {len(spans)} times in memory {name!r}; make it more specific "
            "or set allowMultiple."
        )
    crlf = line_break(content) == "\r\n"
    parts: list[str] = []
    position = 0
    for start, end, text in spans:
        start, end = to_content(start), to_content(end)
        if crlf:
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        parts.extend((content[position:start], text))
        position = end
    parts.append(content[position:])
    return "".join(parts), len(spans)


class _Refused(Exception):
    """A match Serena refuses; turned into the store's error once the memory is known."""

    def __init__(self, kind: type[AmbiguousMatch] | type[InvalidArguments], message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message

    def error_for(self, name: str) -> AmbiguousMatch | InvalidArguments:
        """The store error naming the memory."""
        return self.kind(f"{self.message} (memory {name!r}); nothing was changed.")


def _replacement(match: regex.Match[str], repl: str, mode: str, deadline: float) -> str:
    """What one match becomes: Serena's overlap check, then `$!N` expansion in regex mode."""
    matched = match.group(0)
    # Serena: a multi-line match inside which the pattern matches again most likely ran
    # past what was meant (`<start>.*?<end>` over `<start>…<start>…<end>`).
    if "\n" in matched:
        remaining = max(deadline - time.monotonic(), 0.001)
        if match.re.search(matched[1:], timeout=remaining) is not None:
            raise _Refused(
                AmbiguousMatch,
                "The match is ambiguous: the pattern matches again inside the text it matched "
                f"({_excerpt(matched)}). Make the pattern more specific, e.g. match the text "
                "after it too, or use literal mode",
            )
    if mode != "regex":
        return repl

    def group(reference: re.Match[str]) -> str:
        number = int(reference.group(1))
        try:
            value = match.group(number)
        except (IndexError, OverflowError):
            raise _Refused(
                InvalidArguments,
                f"The replacement refers to $!{reference.group(1)}, but the pattern has only "
                f"{len(match.groups())} group(s)",
            ) from None
        return value if isinstance(value, str) else ""  # a group that did not take part

    return _BACKREF.sub(group, repl)


def _excerpt(text: str, width: int = 60) -> str:
    """A short quotable form of matched text."""
    return repr(text if len(text) <= width else text[: width - 1] + "…")


def compile_needle(needle: str, mode: str) -> regex.Pattern[str]:
    """The needle as a `regex` pattern that matches what `re` (Serena's engine) matches."""
    if mode == "literal":
        return regex.compile(re.escape(needle), _FLAGS)
    if mode != "regex":
        raise InvalidArguments(f"mode must be literal or regex, not {mode!r}.")
    try:
        # What Serena's `re` refuses is refused, whatever the `regex` module would accept.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # `re`'s FutureWarning about `[[`: not ours to print
            re.compile(needle, re.MULTILINE | re.DOTALL)
    except (re.error, OverflowError, RecursionError) as exc:
        raise InvalidArguments(f"needle is not a valid regular expression: {exc}.") from exc
    try:
        return regex.compile(_as_re_reads_it(needle), _FLAGS)
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        raise InvalidArguments(
            f"needle is a regular expression this server cannot run: {exc}."
        ) from exc


def _as_re_reads_it(pattern: str) -> str:
    """A pattern `re` accepts, rewritten so the `regex` module (VERSION0) reads it the same.

    `[[:alpha:]]` is a POSIX class to `regex` but a set and a `]` to `re`; `{e<=1}` is
    fuzzy matching to `regex` but literal text to `re`; \\w, \\d, \\s, \\b, \\B follow other
    Unicode rules (see _CLASSES). Under the ASCII flag the classes already agree.
    """
    classes = {} if _ASCII_FLAG.search(pattern) else _CLASSES
    set_classes = {} if classes is not _CLASSES else _SET_CLASSES
    verbose = _VERBOSE_FLAG.search(pattern) is not None
    out: list[str] = []
    index = 0
    in_set = False
    set_start = 0  # where the set's members begin (a `]` there is a member)
    length = len(pattern)
    while index < length:
        char = pattern[index]
        if char == "\\" and index + 1 < length:
            letter = pattern[index + 1]
            if letter == "N" and pattern.startswith("{", index + 2):
                close = pattern.find("}", index)
                end = length if close == -1 else close + 1
                out.append(pattern[index:end])
                index = end
                continue
            table = set_classes if in_set else classes
            out.append(table.get(letter, char + letter))
            index += 2
            continue
        if in_set:
            if char == "]" and index != set_start:
                in_set = False
                out.append(char)
            elif char == "[" and pattern.startswith(":", index + 1):
                out.append("[\\:")  # not a POSIX class: `re` has none
                index += 1
            elif char == "{":
                out.append("\\{")
            else:
                out.append(char)
            index += 1
            continue
        if char == "[":
            in_set = True
            index += 1
            out.append("[")
            if pattern.startswith("^", index):
                out.append("^")
                index += 1
            set_start = index
            if pattern.startswith(":", index):
                out.append("\\:")
                index += 1
            continue
        if char == "(" and pattern.startswith("?#", index + 1):
            close = pattern.find(")", index)
            end = length if close == -1 else close + 1
            out.append(pattern[index:end])
            index = end
            continue
        if char == "#" and verbose:
            close = pattern.find("\n", index)
            end = length if close == -1 else close
            out.append(pattern[index:end])
            index = end
            continue
        if char == "{" and not _QUANTIFIER.match(pattern, index):
            out.append("\\{")  # `re` reads it as a literal brace
        else:
            out.append(char)
        index += 1
    return "".join(out)


def _universal_newlines(content: str) -> tuple[str, Callable[[int], int]]:
    """The text as Serena reads it (every line break `\\n`), and a map back to `content`."""
    if "\r" not in content:
        return content, _identity
    view_starts = [0]
    content_starts = [0]
    for brk in _LINE_BREAK.finditer(content):
        view_starts.append(view_starts[-1] + (brk.start() - content_starts[-1]) + 1)
        content_starts.append(brk.end())

    def to_content(offset: int) -> int:
        line = bisect.bisect_right(view_starts, offset) - 1
        return content_starts[line] + offset - view_starts[line]

    return _LINE_BREAK.sub("\n", content), to_content


def _identity(offset: int) -> int:
    return offset


def serena_name(name: str) -> str:
    """A name as Serena's `_sanitize_name` leaves it: no `mem:` prefix, one `.md` removed."""
    name = name.removeprefix(MEM_PREFIX)
    return name[:-3] if name.endswith(".md") else name


def rewrite_mem_references(content: str, old_name: str, new_name: str) -> tuple[str, int]:
    """Every `mem:OLD` in the text made `mem:NEW`, as Serena's rename does; (text, count).

    Names are Serena names (`global/x` for a global memory). A reference is `mem:OLD`
    not inside a longer run of name characters (`[A-Za-z0-9_-/]`): `mem:foo.md` and
    `(mem:foo)` are rewritten, `mem:foobar` and `mem:foo/bar` are not. It applies to the
    whole text, frontmatter and fenced code included.
    """
    new = serena_name(new_name)
    refs = serena_mem_references(content, serena_name(old_name))
    lines = content.split("\n")
    for ref in reversed(refs):
        line = lines[ref.line]
        lines[ref.line] = line[: ref.start] + new + line[ref.end :]
    return "\n".join(lines), len(refs)
