"""Listings sized for a reader: folder scans kept between calls, cursors, titles, groups.

A long-lived process (the MCP server) lists the same folders again and again. A folder's
scan is kept and reused while no directory in it has changed: the modification time of a
directory changes whenever an entry is added, removed or renamed in it, and each directory
is stat'ed before it is listed, so a change made during the scan is seen by the next call.
A directory changed less than RACY_NS before the scan may change again within the same
timestamp tick (a second or two on some file systems) unseen, so such a scan is not reused.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar, cast

from memory_ls.core.rules.errors import InvalidArguments
from memory_ls.core.storage.folders import Folder
from memory_ls.core.storage.memory import MemoryFile, Resolved, directory_stamp

T = TypeVar("T")
# A directory must have been left alone this long before a scan for the scan to be reused
# (FAT's timestamps are 2 s apart; others are finer).
RACY_NS = 2_000_000_000
# Sorts after any path: a cursor without one continues after every file of its name.
AFTER_EVERY_PATH = "\U0010ffff"
# Folder scans kept (older configurations are dropped first).
SCANS_KEPT = 64
# Cursors carry this first element, so a cursor of another kind is refused, not misread.
CURSOR_KIND = "after"

# A group is the start of a name up to its first `/` (a topic) or `_` (a prefix).
_GROUP_HEAD = re.compile(r"[^/_]+[/_]")


@dataclass(frozen=True)
class FolderScan:
    """One folder's files as a scan found them, and how to tell whether it still holds."""

    generation: int
    files: tuple[MemoryFile, ...]
    # (directory, modification time in ns) of every directory listed, stat'ed before listing.
    directories: tuple[tuple[str, int], ...]
    # Whether every directory had been left alone RACY_NS before the scan.
    settled: bool

    def still_holds(self) -> bool:
        """Whether no directory of the folder changed (or appeared) since the scan."""
        return self.settled and all(
            directory_stamp(directory) == mtime_ns for directory, mtime_ns in self.directories
        )


ScanFolder = Callable[["Folder", Iterable[str], list[tuple[str, int]]], list["MemoryFile"]]


class ScanCache:
    """Folder scans and their resolved listings, kept between calls (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scans: dict[tuple[object, ...], FolderScan] = {}
        self._resolved: dict[tuple[object, ...], tuple[Resolved, ...]] = {}
        self._kept: dict[tuple[object, ...], object] = {}
        self._generation = 0

    def scan(self, folder: Folder, skip: Iterable[str], scan_folder: ScanFolder) -> FolderScan:
        """The folder's scan: the kept one while it holds, else a new one."""
        skipped = frozenset(skip)
        # Folders compare without their patterns, which decide what is listed: key on both.
        key = (folder, folder.patterns, skipped)
        with self._lock:
            kept = self._scans.get(key)
        if kept is not None and kept.still_holds():
            return kept
        started = time.time_ns()
        stamps: list[tuple[str, int]] = []
        files = scan_folder(folder, skipped, stamps)
        settled = all(mtime_ns < started - RACY_NS for _, mtime_ns in stamps)
        with self._lock:
            self._generation += 1
            scan = FolderScan(self._generation, tuple(files), tuple(stamps), settled)
            if len(self._scans) >= SCANS_KEPT:
                self._scans.clear()
                self._resolved.clear()
            self._scans[key] = scan
        return scan

    def resolved(
        self,
        key: tuple[object, ...],
        build: Callable[[], list[Resolved]],
    ) -> tuple[Resolved, ...]:
        """The resolved listing of these scans (key: scope and scan generations), built once."""
        with self._lock:
            kept = self._resolved.get(key)
        if kept is not None:
            return kept
        made = tuple(build())
        with self._lock:
            if len(self._resolved) >= SCANS_KEPT:
                self._resolved.clear()
            self._resolved[key] = made
        return made

    def kept(self, key: tuple[object, ...], build: Callable[[], T]) -> T:
        """What `build` makes of a version of the listing (key: what it is made of and the
        `resolved` key it is made from), built once."""
        with self._lock:
            known = self._kept.get(key)
        if known is not None:
            return cast(T, known)
        made = build()
        with self._lock:
            if len(self._kept) >= SCANS_KEPT:
                self._kept.clear()
            self._kept[key] = made
        return made


# ----- cursors -------------------------------------------------------------------------


def sort_key(item: Resolved) -> tuple[str, str]:
    """Where a memory sorts in a listing: by name, then path (two invalid files may share one)."""
    return item.memory.qualified, item.memory.path


Filters = dict[str, object]


def encode_cursor(key: tuple[str, str], filters: Filters, *, tie: bool = False) -> str:
    """A cursor that continues a listing with these filters after the memory with this key;
    the path goes into it only when the next memory has the same name (`tie`)."""
    name, path = key
    data = [CURSOR_KIND, name, path if tie else "", filters]
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")


def decode_cursor(cursor: object) -> tuple[tuple[str, str], Filters]:
    """The sort key a cursor continues after, and its listing's filters; a cursor no listing
    gave is refused."""
    if not isinstance(cursor, str):
        raise InvalidArguments(f"cursor must be a string, not {type(cursor).__name__}.")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError):
        value = None
    if (
        isinstance(value, list)
        and len(value) == 4
        and value[0] == CURSOR_KIND
        and isinstance(value[1], str)
        and isinstance(value[2], str)
        and isinstance(value[3], dict)
    ):
        # No path: after every file of that name.
        return (value[1], value[2] or AFTER_EVERY_PATH), value[3]
    raise InvalidArguments(
        "cursor is not one a listing gave: pass the next_cursor of the previous answer "
        "unchanged, or leave cursor out to start from the first memory."
    )


def continued_filters(given: Filters, cursor_filters: Filters) -> Filters:
    """The filters of a page: the cursor's listing's, which a call may repeat but not change."""
    merged: Filters = {}
    for key in sorted(set(given) | set(cursor_filters)):
        value, before = given.get(key), cursor_filters.get(key)
        if value is not None and value != before:
            was = "none" if before is None else f"{json.dumps(before, ensure_ascii=False)}"
            raise InvalidArguments(
                f"cursor continues a listing whose {key} is {was}, not "
                f"{json.dumps(value, ensure_ascii=False)}: pass the cursor alone (it keeps "
                "the filters), or leave the cursor out to start a new listing."
            )
        merged[key] = before
    return merged


def check_limit(limit: object) -> int | None:
    """Validate a page size: a positive whole number, or None for everything."""
    if limit is None:
        return None
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise InvalidArguments("limit must be a positive whole number.")
    return limit


# ----- groups ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Groups:
    """How the names under a base (a prefix) divide: groups by next segment, and the rest."""

    base: str
    groups: list[tuple[str, int]]  # (name start, count), largest first
    ungrouped: int  # names directly under the base, in no group


def group_names(names: Sequence[str], base: str = "") -> Groups:
    """Names grouped by what follows `base` up to the next `/` (topic) or `_` (prefix).

    When all names fall into one group, its members are grouped in turn, so the answer
    always divides them (`FEATURE_` alone becomes `FEATURE_auth_`, `FEATURE_api_`, ...).
    """
    while True:
        counts: Counter[str] = Counter()
        ungrouped = 0
        for name in names:
            head = _GROUP_HEAD.match(name, len(base)) if name.startswith(base) else None
            if head is None:
                ungrouped += 1
            else:
                counts[name[: head.end()]] += 1
        if len(counts) == 1 and not ungrouped:
            (only,) = counts
            base = only
            continue
        ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        return Groups(base, ordered, ungrouped)
