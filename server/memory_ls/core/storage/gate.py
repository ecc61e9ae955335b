"""What a write must pass and what a read must say: versions, and content `check` would reject.

A version is a hash of a memory file's bytes, so any change by anyone (an editor, git,
another agent) gives a new one, and two readers of the same bytes agree without asking.
Writes refuse content the store's own check calls an error, and new possible secrets
in project memories unless the store is configured to only warn; reads say when a file
is not UTF-8 text instead of answering replacement characters.
"""

from __future__ import annotations

import codecs
import hashlib
from collections import Counter

from memory_ls.core.rules.conflicts import Conflicts, find_conflicts
from memory_ls.core.rules.document import decode_memory, parse_document
from memory_ls.core.rules.errors import (
    InvalidEncoding,
    InvalidFrontmatter,
    MergeConflict,
    PossibleSecret,
    VersionConflict,
)
from memory_ls.core.rules.secrets import find_secrets, with_article

# 64 bits of SHA-256: enough to tell versions of one memory apart, short enough for a prompt.
VERSION_HEX_DIGITS = 16
# Magic numbers of files that end up named `.md` by mistake, to say what they are.
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF-", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive (or an Office document)"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"\x7fELF", "an executable"),
    (b"SQLite format 3\x00", "an SQLite database"),
)


def version_of(data: bytes) -> str:
    """The version of a memory file's bytes."""
    return hashlib.sha256(data).hexdigest()[:VERSION_HEX_DIGITS]


def check_version(expected: str | None, current: bytes | None, qualified: str) -> None:
    """Refuse a write made against another version of the memory than the one on disk."""
    if expected is None:
        return
    if current is None:
        raise VersionConflict(
            f"Memory {qualified!r} no longer exists (expected version {expected}); someone "
            "deleted or renamed it since you read it. Nothing was changed.",
            None,
        )
    actual = version_of(current)
    if actual != expected.strip().lower():
        raise VersionConflict(
            f"Memory {qualified!r} changed since you read it: expected version {expected}, "
            f"it is now version {actual}. Read it again, apply your change to what is there "
            "now, and write with the new version. Nothing was changed.",
            actual,
        )


def check_content(
    before: bytes | None, after: bytes, *, qualified: str, project: bool, secrets: str
) -> None:
    """Refuse new content that `check` would call an error, or a new possible secret."""
    text, problem = decode_memory(after)
    if problem is not None:
        raise InvalidEncoding(
            f"The content of {qualified!r} is not UTF-8 text ({problem}); memories are "
            "Markdown text. Remove the control bytes; nothing was written."
        )
    old_text = decode_memory(before)[0] if before is not None else None
    _refuse_conflict_markers(old_text, text, qualified)
    new_problem = parse_document(text).problem
    if new_problem is not None:
        old_problem = parse_document(old_text).problem if old_text is not None else None
        # A memory whose frontmatter was already broken can still be edited (and fixed).
        if old_problem is None or old_problem.message != new_problem.message:
            raise InvalidFrontmatter(
                f"The frontmatter of {qualified!r} would not be valid (line "
                f"{new_problem.line + 1}: {new_problem.message}) Fix it; nothing was written."
            )
    if project and secrets == "refuse":
        _refuse_new_secrets(old_text, text, qualified)


def _refuse_conflict_markers(old_text: str | None, text: str, qualified: str) -> None:
    """Refuse content holding git conflict markers outside code, unless it resolves some.

    Writing the markers (back) stores both sides as knowledge. A write that leaves fewer
    marker lines than a conflicted memory held is a step of the fix, and allowed.
    """
    found = find_conflicts(text)
    if not found:
        return
    if old_text is not None:
        old = find_conflicts(old_text)
        if _marker_count(found) < _marker_count(old):
            return
    first = found.first_line
    assert first is not None
    what = f"{len(found.blocks)} conflict block(s)" if found.blocks else "stray marker lines"
    raise MergeConflict(
        f"Refused to write {qualified!r}: its content holds unresolved git merge conflict "
        f"markers ({what}, from line {first + 1}), two versions of the same lines. Resolve "
        "the conflict: keep one side (or both), remove the markers (`<<<<<<<`, `|||||||`, "
        "`=======`, `>>>>>>>`), then write it again. Markers meant as an example belong in "
        "a fenced code block. Nothing was written."
    )


def _marker_count(found: Conflicts) -> int:
    """How many marker lines a text holds."""
    return sum(len(block.marker_lines) for block in found.blocks) + len(found.stray)


def _secret_values(text: str) -> list[tuple[str, int, str]]:
    """(kind, 0-based line, matched text) of each possible secret in a text."""
    lines = text.split("\n")
    return [
        (hit.kind, hit.line, lines[hit.line][hit.start : hit.end]) for hit in find_secrets(text)
    ]


def _refuse_new_secrets(old_text: str | None, text: str, qualified: str) -> None:
    """Refuse a write that adds a credential-like string (one already there is reported only)."""
    found = _secret_values(text)
    if not found:
        return
    known = Counter((kind, value) for kind, _line, value in _secret_values(old_text or ""))
    new = []
    for kind, line, value in found:
        if known[(kind, value)]:
            known[(kind, value)] -= 1
        else:
            new.append((kind, line))
    if not new:
        return
    where = "; ".join(f"line {line + 1}: {with_article(kind)}" for kind, line in new)
    raise PossibleSecret(
        f"Refused to write {qualified!r}: it holds what looks like a credential ({where}). "
        "Project memories are committed to git. Leave the value out (say where it is kept "
        "instead, e.g. 'in the CI secret STRIPE_KEY'), and rotate it if it was real. "
        "Nothing was written."
    )


def decode_for_read(data: bytes, qualified: str) -> tuple[str, str | None]:
    """A memory's text for a reader, and a warning when it is not UTF-8 but still text.

    Binary content is refused (`invalid-encoding`): replacement characters would be
    read as knowledge. UTF-16 and legacy 8-bit text are shown decoded, after a warning.
    """
    for bom, codec in ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if data.startswith(bom) and not data.startswith(codecs.BOM_UTF32_LE):
            decoded = _decode(data[len(bom) :], codec)
            if decoded is not None:
                return decoded, _warning(qualified, "is stored as UTF-16")
    text, problem = decode_memory(data)
    if problem is None:
        return text, None
    if b"\x00" in data[:8192]:
        bare = _utf16_without_bom(data)
        if bare is not None:
            return bare, _warning(qualified, "is stored as UTF-16")
        what = next((kind for magic, kind in _MAGIC if data.startswith(magic)), "binary data")
        raise InvalidEncoding(
            f"Memory {qualified!r} is not text: its file holds {what} ({problem}). It cannot "
            "be read as a memory; delete it or replace it with Markdown text."
        )
    return data.decode("cp1252", errors="replace"), _warning(
        qualified, f"is not UTF-8 ({problem}); shown decoded as Windows-1252, which may be wrong"
    )


def _warning(qualified: str, what: str) -> str:
    return (
        f"Warning [invalid-encoding]: memory {qualified!r} {what}. Memories are UTF-8; "
        "writing this memory again stores the text as UTF-8."
    )


def _decode(data: bytes, codec: str) -> str | None:
    try:
        text = data.decode(codec)
    except UnicodeDecodeError:
        return None
    # Text decoded from the wrong codec is full of control characters and unassigned ones.
    odd = sum(1 for ch in text if ord(ch) < 32 and ch not in "\t\n\r")
    return text if odd <= len(text) // 100 else None


def _utf16_without_bom(data: bytes) -> str | None:
    """UTF-16 text written without a byte order mark (NUL in every other byte of ASCII)."""
    if len(data) % 2:
        return None
    sample = data[:4096]
    even_nul = sample[0::2].count(0)
    odd_nul = sample[1::2].count(0)
    half = len(sample) // 2
    if odd_nul >= 0.6 * half and even_nul == 0:
        return _decode(data, "utf-16-le")
    if even_nul >= 0.6 * half and odd_nul == 0:
        return _decode(data, "utf-16-be")
    return None
