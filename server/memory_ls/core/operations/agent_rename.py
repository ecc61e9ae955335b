"""Renaming or moving files that other agents' files name: Claude Code's `@path` imports
and MEMORY.md's links rewritten to follow them.

Given the agents' files (the CLAUDE.md files, the files they import, the MEMORY.md
indexes), their texts (a reader: the editor's open texts first) and the (old, new) paths
of the files and folders being renamed, `rename_changes` says what to put where in each
file, as the texts are before the rename: an import that names a renamed file (or one
under a renamed folder) is written again in its own style (relative to the importing
file's folder, `~/...` or absolute), a MEMORY.md link again relative to the index's
folder (its `#fragment` kept, since only the path is replaced); and a renamed importing
file (or index) gets its own relative imports (links) rewritten from its new folder, so
that they still name the same files. Imports and links that name nothing on disk stay as
written: there is no file for them to keep pointing to.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from memory_ls.core.operations.agent_files import (
    KnownAgentFiles,
    Pointer,
    Reader,
    import_pointers,
    index_pointers,
)
from memory_ls.core.operations.navigation import Replacement


def moved_path(path: str, renamed: Sequence[tuple[str, str]]) -> str | None:
    """Where a path goes when these files and folders are renamed (None: it stays)."""
    for old, new in renamed:
        if path == old:
            return new
        prefix = old.rstrip(os.sep) + os.sep
        if path.startswith(prefix):
            return os.path.join(new, path[len(prefix) :])
    return None


def _posix(path: str) -> str:
    return path.replace(os.sep, "/")


def import_text(written: str, target: str, importing: str, home: str) -> str:
    """How an import written as `written` names `target` from the file `importing`, in the
    same style: `~/...` (while the target is under the home), absolute, or relative to the
    importing file's folder (`./` kept where it was written)."""
    if written == "~" or written.startswith("~/"):
        home = home.rstrip(os.sep)
        if target == home:
            return "~"
        if target.startswith(home + os.sep):
            return "~/" + _posix(target[len(home) + 1 :])
        return _posix(target)
    if os.path.isabs(written):
        return _posix(target)
    relative = _posix(os.path.relpath(target, os.path.dirname(importing)))
    if written.startswith("./") and not relative.startswith("../"):
        return "./" + relative
    return relative


def link_text(written: str, target: str, index: str) -> str:
    """How a MEMORY.md link written as `written` names `target` from the index `index`."""
    relative = _posix(os.path.relpath(target, os.path.dirname(index)))
    if written.startswith("./") and not relative.startswith("../"):
        return "./" + relative
    return relative


def _rewrite(pointer: Pointer, home: str, renamed: Sequence[tuple[str, str]]) -> str | None:
    """The pointer's new text, or None when it stays as written."""
    new_target = moved_path(pointer.target, renamed)
    new_source = moved_path(pointer.source, renamed)
    if new_target is None and new_source is None:
        return None
    if not os.path.lexists(pointer.target):
        return None  # names nothing: nothing to keep pointing to
    written = pointer.span.written
    target = new_target or pointer.target
    source = new_source or pointer.source
    if pointer.kind == "import":
        if new_target is None and (os.path.isabs(written) or written.startswith("~")):
            return None  # the importing file moved; `~/` and absolute paths still hold
        text = import_text(written, target, source, home)
    else:
        if new_target is None and os.path.isabs(written):
            return None
        text = link_text(written, target, source)
    return text if text != written else None


def rename_changes(
    known: KnownAgentFiles, renamed: Sequence[tuple[str, str]], read: Reader
) -> dict[str, list[Replacement]]:
    """The changes, by file (as named before the rename), that keep every import of the
    CLAUDE.md files and the files they import, and every MEMORY.md link, naming the same
    files once `renamed` (old path, new path; absolute and normalised) are renamed."""
    pairs = [(os.path.normpath(old), os.path.normpath(new)) for old, new in renamed if old != new]
    if not pairs:
        return {}
    home = known.repository.home
    changes: dict[str, dict[tuple[int, int, int], Replacement]] = {}
    for pointer in [*import_pointers(known, read), *index_pointers(known, read)]:
        text = _rewrite(pointer, home, pairs)
        if text is None:
            continue
        span = pointer.span
        key = (span.line, span.start, span.end)
        changes.setdefault(pointer.source, {}).setdefault(
            key, Replacement(span.line, span.start, span.end, text)
        )
    return {
        path: sorted(found.values(), key=lambda c: (c.line, c.start))
        for path, found in sorted(changes.items())
    }


def apply_changes(text: str, changes: Sequence[Replacement]) -> str:
    """A text with the changes made (for callers that write files, and for tests)."""
    lines = text.split("\n")
    for change in sorted(changes, key=lambda c: (c.line, c.start), reverse=True):
        line = lines[change.line]
        lines[change.line] = line[: change.start] + change.text + line[change.end :]
    return "\n".join(lines)
