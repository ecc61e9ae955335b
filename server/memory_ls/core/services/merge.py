"""Three-way merge of a memory, as git's merge driver: frontmatter key by key, body as text.

Two agents who edit different paragraphs of one memory both stamp `updated_at`; a plain
text merge calls that a conflict where the Markdown alone would merge. Here each
frontmatter key is merged on its own: `updated_at` takes the later time, `created_at`
the earlier, `tags` keeps what either side added and drops what either side removed, and
any other key conflicts only when both sides changed it differently. The merged block is
our side's text with only the lines of keys that changed rewritten (their lines taken as
they wrote them where their value wins), so key order, quoting and comments stay. The
body, and a whole file without frontmatter or whose frontmatter does not parse, is merged
by `git merge-file`.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from memory_ls.core.rules.document import (
    Document,
    dump_key,
    key_span,
    parse_document,
    parse_timestamp,
    render,
    set_keys,
)

ConflictStyle = Literal["merge", "diff3", "zdiff3"]
MERGE_TIMEOUT_SECONDS = 60.0
_FENCE = "---"


class MergeFailed(Exception):
    """git merge-file could not be run, or failed."""


class _Missing:
    """A key one side does not have."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class _ByText(Exception):
    """The frontmatter cannot be merged key by key: merge the whole file as text."""


@dataclass(frozen=True)
class Labels:
    """The names written after the conflict markers."""

    ours: str = "ours"
    base: str = "base"
    theirs: str = "theirs"


@dataclass(frozen=True)
class MergeResult:
    """A merged text and how many conflicts it holds (marked as git marks them)."""

    text: str
    conflicts: int
    by_key: bool  # False: merged as plain text (no frontmatter, or one that does not parse)
    conflicted_keys: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        """Whether the merge needs no one to resolve anything."""
        return self.conflicts == 0


def merge_file_bytes(
    base: bytes,
    ours: bytes,
    theirs: bytes,
    labels: Labels = Labels(),
    style: ConflictStyle = "merge",
) -> tuple[bytes, int]:
    """`git merge-file -p` of three texts: (merged bytes, number of conflicts)."""
    with tempfile.TemporaryDirectory(prefix="memory-ls-merge-") as scratch:
        paths = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = os.path.join(scratch, name)
            with open(path, "wb") as handle:
                handle.write(data)
            paths.append(path)
        flags = {"merge": [], "diff3": ["--diff3"], "zdiff3": ["--zdiff3"]}[style]
        command = [
            "git",
            # The style is ours to choose (the driver passes the repository's); a user's
            # global setting must not change what a flag-less call writes.
            "-c",
            "merge.conflictStyle=merge",
            "merge-file",
            "-p",
            *flags,
            "-L",
            labels.ours,
            "-L",
            labels.base,
            "-L",
            labels.theirs,
            *paths,
        ]
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                cwd=scratch,
                stdin=subprocess.DEVNULL,
                timeout=MERGE_TIMEOUT_SECONDS,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise MergeFailed(f"git merge-file could not run: {exc}") from exc
    # 0: clean; 1..127: that many conflicts (git caps the count); anything else failed.
    if not 0 <= done.returncode <= 127:
        error = done.stderr.decode("utf-8", "replace").strip()
        raise MergeFailed(f"git merge-file failed ({done.returncode}): {error}")
    return done.stdout, done.returncode


def merge_text(
    base: str,
    ours: str,
    theirs: str,
    labels: Labels = Labels(),
    style: ConflictStyle = "merge",
) -> tuple[str, int]:
    """Three-way merge of texts as `git merge-file` does: (merged text, conflicts)."""
    if ours == theirs:
        return ours, 0
    if base == ours:
        return theirs, 0
    if base == theirs:
        return ours, 0

    def encode(text: str) -> bytes:
        return text.encode("utf-8", "surrogateescape")

    merged, conflicts = merge_file_bytes(encode(base), encode(ours), encode(theirs), labels, style)
    return merged.decode("utf-8", "surrogateescape"), conflicts


def merge_tags(base: Sequence[str], ours: Sequence[str], theirs: Sequence[str]) -> list[str]:
    """Tags either side added, less those either side removed: ours in their order, then
    theirs' new ones in theirs' order."""
    kept = [t for t in ours if t in theirs or t not in base]
    kept += [t for t in theirs if t not in ours and t not in base]
    return list(dict.fromkeys(kept))


def _same(a: Any, b: Any) -> bool:
    """Equal values of one type (YAML's `1` and `true` are not the same value)."""
    return a is b or (type(a) is type(b) and a == b)


def _is_tag_list(value: Any) -> bool:
    return value is MISSING or (isinstance(value, list) and all(isinstance(t, str) for t in value))


def merge_value(key: str, base: Any, ours: Any, theirs: Any) -> tuple[Any, bool]:
    """(merged value or MISSING, whether it is a conflict) of one frontmatter key."""
    if _same(ours, theirs):
        return ours, False
    if _same(base, ours):
        return theirs, False
    if _same(base, theirs):
        return ours, False
    # Both sides changed the key, differently.
    if key in ("updated_at", "created_at"):
        ours_time, theirs_time = parse_timestamp(ours), parse_timestamp(theirs)
        if ours_time is not None and theirs_time is not None:
            later = theirs_time > ours_time
            take_theirs = later if key == "updated_at" else theirs_time < ours_time
            return (theirs if take_theirs else ours), False
    if key == "tags" and all(_is_tag_list(v) for v in (base, ours, theirs)):

        def listed(value: Any) -> list[str]:
            return [] if value is MISSING else list(value)

        return merge_tags(listed(base), listed(ours), listed(theirs)), False
    return MISSING, True


@dataclass
class _Side:
    """One side's document and its frontmatter lines."""

    doc: Document
    lines: list[str]

    @classmethod
    def of(cls, text: str) -> _Side:
        doc = parse_document(text)
        if doc.has_frontmatter and doc.problem is not None:
            raise _ByText
        return cls(doc, (doc.raw_frontmatter or "").splitlines(keepends=True))

    def value(self, key: str) -> Any:
        return self.doc.metadata.get(key, MISSING)

    def key_lines(self, key: str, eol: str) -> list[str]:
        """The lines of a key as this side wrote them, ending in `eol`."""
        span = key_span(self.lines, key)
        if span is None:
            raise _ByText  # a key written in a way the line editor does not find (quoted)
        return [line.rstrip("\r\n") + eol for line in self.lines[span[0] : span[1]]]


def merge_memory(
    base: str,
    ours: str,
    theirs: str,
    labels: Labels = Labels(),
    style: ConflictStyle = "merge",
) -> MergeResult:
    """Merge three versions of a memory (base may be "" when both sides added it)."""
    try:
        sides = [_Side.of(text) for text in (base, ours, theirs)]
        if not any(side.doc.has_frontmatter for side in sides):
            raise _ByText
        return _merge_by_key(*sides, labels=labels, style=style)
    except _ByText:
        text, conflicts = merge_text(base, ours, theirs, labels, style)
        return MergeResult(text, conflicts, by_key=False)


def _merge_by_key(
    base: _Side, ours: _Side, theirs: _Side, *, labels: Labels, style: ConflictStyle
) -> MergeResult:
    """Frontmatter key by key on our side's lines, the body by git merge-file."""
    shape = next(side.doc for side in (ours, theirs, base) if side.doc.has_frontmatter)
    eol = shape.newline
    lines = list(ours.lines)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += eol
    # Keys in our order, then keys only they have (in their order), then deleted ones.
    order = list(dict.fromkeys([*ours.doc.metadata, *theirs.doc.metadata, *base.doc.metadata]))
    expected: dict[str, Any] = {}
    conflicted: list[str] = []
    for key in order:
        value, conflict = merge_value(key, base.value(key), ours.value(key), theirs.value(key))
        if conflict:
            conflicted.append(key)
            block = _conflict_lines(key, base, ours, theirs, eol, labels, style)
            _put(lines, key, block, ours, theirs, base)
            continue
        if value is not MISSING:
            expected[key] = value
        if _same(value, ours.value(key)):
            continue
        if value is MISSING:
            span = key_span(lines, key)
            if span is None:
                raise _ByText
            del lines[span[0] : span[1]]
        elif _same(value, theirs.value(key)):
            _put(lines, key, theirs.key_lines(key, eol), ours, theirs, base)
        elif key_span(lines, key) is not None:
            lines = set_keys("".join(lines), {key: value}, newline=eol).splitlines(keepends=True)
        else:
            new = dump_key(key, value).replace("\n", eol).splitlines(True)
            _put(lines, key, new, ours, theirs, base)
    raw = "".join(lines)
    if not conflicted:
        _check_block(raw, expected)
    body, body_conflicts = merge_text(
        base.doc.body, ours.doc.body, theirs.doc.body, labels=labels, style=style
    )
    if ours.doc.has_frontmatter or expected or conflicted:
        doc = replace(
            ours.doc,
            body=body,
            raw_frontmatter=raw,
            opening=shape.opening,
            closing=shape.closing,
            bom=shape.bom,
            newline=eol,
        )
    else:  # every key is gone, and so is our block
        doc = replace(ours.doc, body=body, raw_frontmatter=None)
    return MergeResult(
        render(doc),
        len(conflicted) + body_conflicts,
        by_key=True,
        conflicted_keys=tuple(conflicted),
    )


def _check_block(raw: str, expected: dict[str, Any]) -> None:
    """Make sure the edited block reads as the merged keys (else merge the file as text)."""
    doc = parse_document(f"{_FENCE}\n{raw}{_FENCE}\n")
    if doc.problem is not None or doc.metadata.keys() != expected.keys():
        raise _ByText
    if any(not _same(doc.metadata[key], value) for key, value in expected.items()):
        raise _ByText


def _put(
    lines: list[str], key: str, new: list[str], ours: _Side, theirs: _Side, base: _Side
) -> None:
    """Replace a key's lines, or insert them after the key that precedes it on their side."""
    span = key_span(lines, key)
    if span is not None:
        lines[span[0] : span[1]] = new
        return
    if key in ours.doc.metadata:
        raise _ByText  # ours has the key where the line editor does not find it (quoted)
    for source in (theirs, base):
        keys = list(source.doc.metadata)
        if key in keys:
            for previous in reversed(keys[: keys.index(key)]):
                before = key_span(lines, previous)
                if before is not None:
                    lines[before[1] : before[1]] = new
                    return
            lines[0:0] = new
            return
    lines.extend(new)


def _conflict_lines(
    key: str,
    base: _Side,
    ours: _Side,
    theirs: _Side,
    eol: str,
    labels: Labels,
    style: ConflictStyle,
) -> list[str]:
    """A key's conflict block, marked as git marks one."""

    def lines_of(side: _Side) -> list[str]:
        return side.key_lines(key, eol) if side.value(key) is not MISSING else []

    block = [f"<<<<<<< {labels.ours}{eol}", *lines_of(ours)]
    if style != "merge":
        block += [f"||||||| {labels.base}{eol}", *lines_of(base)]
    return [*block, f"======={eol}", *lines_of(theirs), f">>>>>>> {labels.theirs}{eol}"]


def merge_files(
    base: str,
    ours: str,
    theirs: str,
    labels: Labels = Labels(),
    style: ConflictStyle = "merge",
) -> MergeResult:
    """The merge driver's work: merge three files and write the result over `ours`."""
    data = []
    for path in (base, ours, theirs):
        with open(path, "rb") as handle:
            data.append(handle.read())
    try:
        base_text, ours_text, theirs_text = (item.decode("utf-8") for item in data)
    except UnicodeDecodeError:  # not text memory-ls can read: git's own merge of the bytes
        merged, conflicts = merge_file_bytes(data[0], data[1], data[2], labels, style)
        result = MergeResult(merged.decode("utf-8", "replace"), conflicts, by_key=False)
    else:
        result = merge_memory(base_text, ours_text, theirs_text, labels=labels, style=style)
        merged = result.text.encode("utf-8", "surrogateescape")
    _replace(ours, merged)
    return result


def _replace(path: str, data: bytes) -> None:
    """`path` holds `data` or, when writing fails, what it held before (never half of it):
    a file written beside it and renamed over it. git reads the driver's result from
    OURS, and falls back to its own merge of OURS when the driver fails."""
    fd, temporary = tempfile.mkstemp(
        prefix=".memory-ls-merge.", dir=os.path.dirname(os.path.abspath(path))
    )
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, os.stat(path).st_mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def conflict_style_of_repository(cwd: str) -> ConflictStyle:
    """git's `merge.conflictStyle` where the merge runs (git runs drivers at the top)."""
    try:
        done = subprocess.run(
            ["git", "config", "--get", "merge.conflictStyle"],
            capture_output=True,
            text=True,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            timeout=MERGE_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "merge"
    style = done.stdout.strip().lower()
    return style if style in ("diff3", "zdiff3") else "merge"  # type: ignore[return-value]
