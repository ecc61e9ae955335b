"""A memory's history from the change journal, and reverting a change.

A revert never discards later work: when the memory changed after the reverted change
(a later edit, a teammate's line brought by `git pull`), the change's inverse is merged
into the memory as it is now (base: the content just after the change; ours: the file
now; theirs: the content before it), or the revert is refused and nothing is changed.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from typing import Any

from memory_ls.core.rules.errors import (
    InvalidArguments,
    NotFound,
    OutsideStore,
    PossibleSecret,
    TooLarge,
    VersionConflict,
)
from memory_ls.core.services.journal import MAX_KEPT_FILE_BYTES, Entry, observe_paths
from memory_ls.core.services.merge import Labels, MergeFailed, merge_memory
from memory_ls.core.storage.fsio import atomic_write, ensure_folder, folder_lock
from memory_ls.core.storage.gate import check_content, version_of
from memory_ls.core.storage.memory import Change, MemoryFile
from memory_ls.core.store_parts.arguments import _check_str
from memory_ls.core.store_parts.base import _LOG, _bytes_or_none, _versions
from memory_ls.core.store_parts.moving import Moving

# The merge's sides, named in its conflict markers (parsed back to say which lines conflict).
_LABELS = Labels(ours="memory-ls-now", base="memory-ls-after", theirs="memory-ls-before")
# How many conflicting places a refusal quotes, and how much of each line.
_SHOWN_CONFLICTS = 5
_SHOWN_CHARS = 80
# What reverting writes (None: remove the file) and what its answer adds.
_Plan = tuple[bytes | None, dict[str, Any]]


class History(Moving):
    """History and revert."""

    # ----- history and undo ----------------------------------------------------------

    def history(self, raw_name: object) -> list[Entry]:
        """The journal's entries of a memory (a deleted one too), newest first."""
        return self.journal.history(_check_str(raw_name, "name").strip())

    def revert(self, raw_name: object, entry_id: object = None) -> dict[str, Any]:
        """Undo a journal entry (the latest by default) by a write of its own; later work stays."""
        if entry_id is not None and (isinstance(entry_id, bool) or not isinstance(entry_id, int)):
            raise InvalidArguments("The entry to revert to must be a whole number.")
        name = _check_str(raw_name, "name").strip()
        entries = self.journal.history(name)
        if not entries:
            raise NotFound(f"The change journal holds no change of memory {name!r}.")
        entry = next((e for e in entries if entry_id in (None, e.id)), None)
        if entry is None:
            raise NotFound(
                f"Change {entry_id} of memory {name!r} is not in the journal (it holds "
                f"{', '.join(str(e.id) for e in entries)})."
            )
        if entry.action == "move" and entry.new_name is not None:
            answer = self.move(entry.new_name, entry.name)
            return {**answer, "revertedTo": entry.id}
        if entry.withheld and (entry.before_size or 0) > MAX_KEPT_FILE_BYTES:
            raise TooLarge(
                f"The content of {entry.name!r} before change {entry.id} was larger than "
                f"{MAX_KEPT_FILE_BYTES} bytes, so the journal did not keep it; nothing was changed."
            )
        if entry.withheld:
            raise PossibleSecret(
                f"The content of {entry.name!r} before change {entry.id} held what looks like "
                "a credential, so the journal did not keep it; nothing was changed."
            )
        self._catch_up(entry.path)
        later = sorted(
            (e for e in self.journal.history(name) if e.id > entry.id), key=lambda e: e.id
        )
        answer = self._restore(entry.name, entry.path, lambda now: self._inverse(entry, later, now))
        return {**answer, "revertedTo": entry.id}

    def _inverse(self, entry: Entry, later: list[Entry], now: bytes | None) -> _Plan:
        """What undoing `entry` writes over the file as it is `now`, keeping later work."""
        if now is None or now == entry.before:
            # Gone since (or by the change): its content before the change comes back.
            return entry.before, {}
        after = self._content_after(entry, later, now)
        if now == after:
            return entry.before, {}  # nothing built on the change: it is undone as it was
        kept = [e.id for e in later]
        since = f" (changes since: {', '.join(map(str, kept))})" if kept else ""
        if entry.before is None:
            raise VersionConflict(
                f"{entry.name!r} was changed after change {entry.id} created it{since}; "
                "reverting the creation would delete that work, so nothing was changed. "
                "Delete the memory if that is what you mean.",
                version_of(now),
            )
        if after is None:
            raise VersionConflict(
                f"{entry.name!r} was created again after change {entry.id} deleted it{since}; "
                "restoring the deleted content would overwrite it, so nothing was changed.",
                version_of(now),
            )
        merged = _merge_inverse(entry, after, now, since)
        return merged, {"merged": True, "keptChanges": kept}

    def _catch_up(self, path: str) -> None:
        """Journal a change of the file made unseen (a `git pull` no server watched): later work."""
        try:
            observe_paths(self.journal, self.config, [path])
        except (sqlite3.Error, OSError) as exc:
            _LOG.warning("The change journal %s could not catch up: %s", self.journal.path, exc)

    def _content_after(self, entry: Entry, later: list[Entry], now: bytes) -> bytes | None:
        """The memory's content just after `entry`; refused when the journal cannot tell."""
        if entry.version_after is None:
            return None
        following = later[0] if later else None
        if following is None and version_of(now) == entry.version_after:
            return now
        if (
            following is not None
            and following.version_before == entry.version_after
            and not following.withheld
        ):
            return following.before
        raise VersionConflict(
            f"{entry.name!r} changed after change {entry.id} in a way the journal did not keep "
            "(outside it, or content withheld), so the later work cannot be told apart from "
            "the change; nothing was changed.",
            version_of(now),
        )

    def _restore(
        self, qualified: str, path: str, plan: Callable[[bytes | None], _Plan]
    ) -> dict[str, Any]:
        """Write what `plan` makes of the bytes now (None: remove the file), checked as a save."""
        owned = self.config.name_of(path)
        if owned is None or owned[0].qualified(owned[1]) != qualified:
            raise OutsideStore(
                f"{path} is no longer the file of memory {qualified!r} in the configured "
                "folders; nothing was changed."
            )
        folder, name = owned
        memory = MemoryFile(name, path, folder)
        self._check_access(name, "global" if folder.kind == "global" else "project", write=True)
        self._writable(memory)
        real, owner = self._write_target(path)
        with folder_lock(folder.real, owner.real):
            before = _bytes_or_none(path) if os.path.lexists(path) else None
            # Planned under the lock: no write can slip between the merge and its result.
            data, extra = plan(before)
            if data is None:
                if before is not None:
                    self._remove(memory)
                    self._journal("revert", memory, before, None)
                    self._record(Change("delete", memory, before, None))
                return {"name": qualified, "path": path, "deleted": before is not None, **extra}
            self._check_size(data, name)
            check_content(
                before,
                data,
                qualified=qualified,
                project=folder.scope == "project",
                secrets=self.config.secrets,
            )
            if before is None and folder.kind != "additional":
                ensure_folder(folder.path)
            if before != data:
                atomic_write(real, data, owner.real)
                self._journal("revert", memory, before, data)
        self._record(Change("save", memory, before, data))
        return {
            "name": qualified,
            "path": path,
            "created": before is None,
            **_versions(before, data),
            **extra,
        }


def _merge_inverse(entry: Entry, after: bytes, now: bytes, since: str) -> bytes:
    """The change's inverse merged into the memory now; refused on a conflict or without git."""
    before = entry.before or b""
    try:
        result = merge_memory(_text(after), _text(now), _text(before), labels=_LABELS)
    except MergeFailed as exc:
        raise VersionConflict(
            f"{entry.name!r} changed after change {entry.id}{since}, and undoing the change "
            f"while keeping that work needs git to merge ({exc}); nothing was changed.",
            version_of(now),
        ) from exc
    if not result.clean:
        where = "; ".join(_conflicts(result.text, result.conflicted_keys, _text(now)))
        raise VersionConflict(
            f"Reverting change {entry.id} of {entry.name!r} conflicts with later work{since}: "
            f"{where}. Nothing was changed; revert the later changes first (newest first), "
            "or edit the memory by hand.",
            version_of(now),
        )
    return result.text.encode("utf-8", "surrogateescape")


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _conflicts(merged: str, keys: tuple[str, ...], now: str) -> list[str]:
    """Where a merge conflicts, in words: the frontmatter keys, then the lines (as now)."""
    said = [f"frontmatter key {key!r} changed since" for key in keys]
    lines = now.splitlines()
    side: list[list[str]] | None = None  # inside a block: [lines now, lines before the change]
    found = 0
    for line in merged.splitlines():
        if line == f"<<<<<<< {_LABELS.ours}":
            side = [[]]
        elif side is not None and line == "=======":
            side.append([])
        elif side is not None and line == f">>>>>>> {_LABELS.theirs}":
            ours, theirs = side[0], side[-1] if len(side) > 1 else []
            start = _find(lines, ours, found)
            found = start if start is not None else found
            at = f"line {start + 1}" if start is not None and ours else "a line"
            said.append(f"{at} now {_quote(ours)} (before the change: {_quote(theirs)})")
            side = None
        elif side is not None:
            side[-1].append(line)
    if len(said) > _SHOWN_CONFLICTS:
        said[_SHOWN_CONFLICTS:] = [f"and {len(said) - _SHOWN_CONFLICTS} more"]
    return said or ["the memory's lines"]


def _find(lines: list[str], block: list[str], start: int) -> int | None:
    """Where `block` starts in `lines`, at or after `start`."""
    for index in range(start, len(lines) - len(block) + 1):
        if block and lines[index : index + len(block)] == block:
            return index
    return None


def _quote(block: list[str]) -> str:
    """Lines in a sentence: the first, cut short, and how many more."""
    if not block:
        return "nothing"
    first = block[0] if len(block[0]) <= _SHOWN_CHARS else block[0][: _SHOWN_CHARS - 1] + "…"
    more = f" and {len(block) - 1} more line(s)" if len(block) > 1 else ""
    return f"{first!r}{more}"
