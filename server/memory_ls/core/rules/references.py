"""References between memories: `[[NAME]]`, `[[NAME#Heading|label]]` and `mem:NAME` (SPEC 2.7)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from memory_ls.core.rules.document import split_frontmatter
from memory_ls.core.rules.names import (
    GLOBAL_PREFIX,
    MEM_PREFIX,
    name_problem,
    normalize_input,
    split_qualified,
)

_WIKI = re.compile(r"\[\[([^\[\]|\n]*)(?:\|([^\[\]\n]*))?\]\]")
_MEM = re.compile(r"`mem:([^`\n]*)`")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")


@dataclass(frozen=True)
class Reference:
    """One reference in a text; columns are 0-based code-point offsets in its line."""

    name: str  # normalised name, without `global/`
    is_global: bool
    form: str  # "wiki" or "mem"
    line: int
    start: int  # start of the name as written (after `[[` or `mem:`, spaces trimmed)
    end: int
    full_start: int  # the whole reference, brackets or backticks included
    full_end: int
    label: str | None = None
    # `[[name#Heading]]`: the text after the first `#` (spaces trimmed) and its columns;
    # the name's own span stops before the `#`, so a rename leaves the fragment as written.
    fragment: str | None = None
    fragment_start: int = 0
    fragment_end: int = 0

    @property
    def valid(self) -> bool:
        """Whether the referenced name follows the naming rules."""
        return name_problem(self.name) is None

    @property
    def target(self) -> str:
        """The name as it would be looked up (`global/` kept)."""
        return (GLOBAL_PREFIX if self.is_global else "") + self.name


def iter_lines_outside_code(text: str, first_line: int = 0) -> Iterator[tuple[int, str]]:
    """Lines of Markdown text with their numbers, skipping fenced code blocks."""
    fence: str | None = None
    for number, line in enumerate(text.split("\n"), start=first_line):
        fence, code = fence_step(fence, line)
        if not code:
            yield number, line


def in_fenced_code(lines: Sequence[str], line_no: int) -> bool:
    """Whether a line is inside a fenced code block (or is one of its fences)."""
    fence: str | None = None
    code = False
    for line in lines[: line_no + 1]:
        fence, code = fence_step(fence, line)
    return code


def fence_step(fence: str | None, line: str) -> tuple[str | None, bool]:
    """The fence still open after `line`, and whether `line` is code or a fence."""
    match = _FENCE.match(line)
    if fence is None:
        if match:
            return match.group(1)[0] * len(match.group(1)), True
        return None, False
    if match and match.group(1).startswith(fence) and not line.strip(" `~"):
        return None, True
    return fence, True


def references_in_line(line: str, number: int) -> list[Reference]:
    """References on one line of text."""
    found: list[Reference] = []
    # `[[x]]` written inside inline code is an example, not a link (as in Marksman).
    spans = [m.span() for m in _CODE_SPAN.finditer(line)] if "`" in line else []
    for match in _WIKI.finditer(line):
        if any(start <= match.start() < end for start, end in spans):
            continue
        ref = _make(match.group(1), match.start(1), number, "wiki", match, match.group(2))
        if ref is not None:
            found.append(ref)
    for match in _MEM.finditer(line):
        ref = _make(match.group(1), match.start(1), number, "mem", match, None)
        if ref is not None:
            found.append(ref)
    found.sort(key=lambda r: r.start)
    return found


def _make(
    raw: str, offset: int, number: int, form: str, match: re.Match[str], label: str | None
) -> Reference | None:
    fragment: str | None = None
    fragment_start = fragment_end = 0
    if form == "wiki" and "#" in raw:
        # Obsidian's and Foam's `[[note#Heading]]`: `#` starts the heading, never a name's
        # part (see rules/headings.py); `[[#Heading]]` is a heading of the note itself.
        at = raw.index("#")
        rest = raw[at + 1 :]
        fragment = rest.strip()
        fragment_start = offset + at + 1 + len(rest) - len(rest.lstrip())
        fragment_end = fragment_start + len(fragment)
        raw = raw[:at]
    stripped = raw.strip()
    if not stripped:
        return None
    lead = len(raw) - len(raw.lstrip())
    name, is_global = normalize_input(stripped)
    return Reference(
        name=name,
        is_global=is_global,
        form=form,
        line=number,
        start=offset + lead,
        end=offset + lead + len(stripped),
        full_start=match.start(),
        full_end=match.end(),
        label=label,
        fragment=fragment,
        fragment_start=fragment_start,
        fragment_end=fragment_end,
    )


def find_references(text: str, needle: str = "") -> list[Reference]:
    """All references in a Markdown file, outside its frontmatter and fenced code; with a
    `needle`, only those on lines that hold it (a name is written whole on one line)."""
    raw, body, body_line = split_frontmatter(text)
    if raw is None:
        body, body_line = text, 0
    if "```" not in body and "~~~" not in body:
        # No fenced code: only the lines holding a reference are split out (most notes).
        if needle:
            return _references_near(body, body_line, needle)
        return _references_on_lines_holding(body, body_line)
    refs: list[Reference] = []
    for number, line in iter_lines_outside_code(body, body_line):
        if ("[[" in line or "mem:" in line) and needle in line:
            refs.extend(references_in_line(line, number))
    return refs


def reference_targets(text: str) -> list[str]:
    """The `target` of each reference `find_references(text)` finds, in the same order,
    without making the references: the link index keeps only these, of every file (a
    first indexing asks it of 100,000 files)."""
    raw, body, _body_line = split_frontmatter(text)
    if raw is None:
        body = text
    if "[[" not in body and "mem:" not in body:
        return []
    if "```" in body or "~~~" in body:
        return [ref.target for ref in find_references(text)]
    return [
        target
        for _number, line in _lines_holding_references(body)
        for target in _targets_in_line(line)
    ]


def _targets_in_line(line: str) -> list[str]:
    """`references_in_line`'s targets, in its order."""
    found: list[tuple[int, str]] = []
    spans = [m.span() for m in _CODE_SPAN.finditer(line)] if "`" in line else []
    for match in _WIKI.finditer(line):
        if any(start <= match.start() < end for start, end in spans):
            continue
        raw = match.group(1)
        if "#" in raw:
            raw = raw[: raw.index("#")]
        _add_target(found, raw, match.start(1))
    for match in _MEM.finditer(line):
        _add_target(found, match.group(1), match.start(1))
    found.sort(key=lambda pair: pair[0])
    return [target for _start, target in found]


def _add_target(found: list[tuple[int, str]], raw: str, offset: int) -> None:
    """`_make`'s start and target of a reference written `raw` at `offset`, if it is one."""
    stripped = raw.strip()
    if stripped:
        name, is_global = normalize_input(stripped)
        lead = len(raw) - len(raw.lstrip())
        found.append((offset + lead, (GLOBAL_PREFIX if is_global else "") + name))


def _references_on_lines_holding(body: str, first_line: int) -> list[Reference]:
    """References on the lines of `body` that hold `[[` or `mem:`, when it has no fenced
    code: the same as looking at each line, without splitting the text into lines."""
    return [
        ref
        for number, line in _lines_holding_references(body)
        for ref in references_in_line(line, first_line + number)
    ]


def _lines_holding_references(body: str) -> Iterator[tuple[int, str]]:
    """Each line of `body` that holds `[[` or `mem:`, with its number (0: the first)."""
    number, counted, at = 0, 0, 0
    while True:
        wiki, mem = body.find("[[", at), body.find("mem:", at)
        found = wiki if mem < 0 or 0 <= wiki < mem else mem
        if found < 0:
            return
        start = body.rfind("\n", 0, found) + 1
        end = body.find("\n", found)
        end = len(body) if end < 0 else end
        number += body.count("\n", counted, start)
        counted = start
        yield number, body[start:end]
        at = end + 1


def _references_near(body: str, first_line: int, needle: str) -> list[Reference]:
    """References on the lines of `body` that hold `needle`, when it has no fenced code (a
    long note is not split into lines to read the few that matter)."""
    refs: list[Reference] = []
    number, counted = first_line, 0
    at = body.find(needle)
    while at >= 0:
        start = body.rfind("\n", 0, at) + 1
        end = body.find("\n", at)
        end = len(body) if end < 0 else end
        number += body.count("\n", counted, start)
        counted = start
        line = body[start:end]
        if "[[" in line or "mem:" in line:
            refs.extend(references_in_line(line, number))
        at = body.find(needle, end)
    return refs


def rewrite_references(
    text: str, matches: Callable[[Reference], bool], new: str
) -> tuple[str, int]:
    """Rewrite every reference for which `matches` holds to name `new`, keeping form and label.

    Returns the new text and the number of references rewritten.
    """
    refs = [r for r in find_references(text) if matches(r)]
    if not refs:
        return text, 0
    lines = text.split("\n")
    # Right to left, so earlier columns on the same line stay valid.
    for ref in sorted(refs, key=lambda r: (r.line, r.start), reverse=True):
        line = lines[ref.line]
        lines[ref.line] = line[: ref.start] + new + line[ref.end :]
    return "\n".join(lines), len(refs)


# Serena's rename treats `mem:NAME` as a reference wherever it stands (backticks or not,
# fenced code too) unless the name runs on into more name characters.
_SERENA_NAME_CHAR = r"[A-Za-z0-9_\-/]"


def serena_mem_references(text: str, name: str) -> list[Reference]:
    """Every `mem:NAME` that Serena's rename_memory would rewrite for the memory `name`
    (Serena's name, `global/` included), as references spanning the name."""
    if MEM_PREFIX + name not in text:
        return []
    pattern = re.compile(
        rf"(?<!{_SERENA_NAME_CHAR}){re.escape(MEM_PREFIX + name)}(?!{_SERENA_NAME_CHAR})"
    )
    bare, is_global = split_qualified(name)
    found = []
    for number, line in enumerate(text.split("\n")):
        for match in pattern.finditer(line):
            start = match.start() + len(MEM_PREFIX)
            found.append(
                Reference(
                    name=bare,
                    is_global=is_global,
                    form="mem",
                    line=number,
                    start=start,
                    end=match.end(),
                    full_start=match.start(),
                    full_end=match.end(),
                )
            )
    return found


def rename_references(
    text: str, name: str, points_here: Callable[[Reference], bool]
) -> list[Reference]:
    """The references a rename of memory `name` rewrites in a text: `[[...]]` links that
    point to it (outside code) and every `mem:NAME` Serena's rename rewrites."""
    found = {(r.line, r.start): r for r in serena_mem_references(text, name) if points_here(r)}
    if "[[" in text:
        for ref in find_references(text):
            if ref.form == "wiki" and points_here(ref):
                found.setdefault((ref.line, ref.start), ref)
    return sorted(found.values(), key=lambda r: (r.line, r.start))
