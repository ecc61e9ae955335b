"""Listing memories: the resolved names, listings with filters and cursors, groups, tags."""

from __future__ import annotations

import bisect
import copy
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from memory_ls.core.rules.document import Document, iso
from memory_ls.core.rules.names import GLOBAL_PREFIX
from memory_ls.core.rules.supersede import declaration
from memory_ls.core.rules.titles import title_of
from memory_ls.core.services.related import successors_of_many
from memory_ls.core.storage.fsio import folder_lock, remove_leftovers
from memory_ls.core.storage.listing import (
    check_limit,
    continued_filters,
    decode_cursor,
    encode_cursor,
    group_names,
    sort_key,
)
from memory_ls.core.storage.memory import MemoryFile, Resolved, resolve_files, scan_folder
from memory_ls.core.store_parts.arguments import _check_str, _check_tags, check_scope
from memory_ls.core.store_parts.base import StoreBase


def in_topic(name: str, is_global: bool, topic: str) -> bool:
    """Whether a memory, named `global/...` when global, is under a topic of Serena's list."""
    # Serena lists a topic's folder recursively: `auth` is every project memory `auth/...`,
    # `global` every global memory, `global/x` the global memories `global/x/...`.
    topic = topic.rstrip("/")
    wants_global = topic == "global" or topic.startswith(GLOBAL_PREFIX)
    if wants_global != is_global:
        return False
    return topic == "global" or name.startswith(topic + "/")


def _list_filters(scope: object, tags: object, prefix: object, topic: object) -> dict[str, object]:
    """A listing's filters, checked; empty ones are None (`topic=""` is Serena's "none")."""
    wanted = _check_tags(tags)
    return {
        "scope": check_scope(scope, allow_all=True),
        "tags": sorted(wanted) if wanted else None,
        "prefix": (None if prefix is None else _check_str(prefix, "prefix")) or None,
        "topic": (None if topic is None else _check_str(topic, "topic")) or None,
    }


def _checked_filters(
    filters: Mapping[str, object],
) -> tuple[str | None, list[str], str | None, str]:
    """(scope, tags, prefix, topic) of a listing's filters, checked again: a cursor's are text
    from the caller too."""
    prefix, topic = filters.get("prefix"), filters.get("topic")
    return (
        check_scope(filters.get("scope"), allow_all=True),
        _check_tags(filters.get("tags")) or [],
        None if prefix is None else _check_str(prefix, "prefix"),
        "" if topic is None else _check_str(topic, "topic"),
    )


def _qualified_of(item: Resolved) -> str:
    return item.memory.qualified


def _listed(item: Resolved, doc: Document | None, newer: list[str]) -> dict[str, Any]:
    """One memory of a listing (`memory.list`); `newer`: the memories that supersede it."""
    memory = item.memory
    return {
        "name": memory.qualified,
        "path": memory.path,
        "scope": memory.scope,
        "folder": memory.folder.path,
        "tags": doc.tags if doc else [],
        "updatedAt": iso(doc.metadata.get("updated_at")) if doc else None,
        "readOnly": memory.read_only,
        # A name memory-ls would not create (Serena may have): the editor offers a rename.
        "validName": memory.valid,
        "shadows": [m.path for m in item.shadows],
        "title": title_of(doc.body) if doc else None,
        "supersededBy": newer,
    }


class Listing(StoreBase):
    """Listing memories, their groups and tags."""

    def _page(self, page: Sequence[tuple[Resolved, Document | None]]) -> list[dict[str, Any]]:
        """A listing's memories, each with the memories that supersede it (its frontmatter
        or theirs says so; the index asked once for the page)."""
        newer = successors_of_many(
            self,
            [
                (
                    item.memory,
                    None
                    if doc is None
                    else declaration(item.memory.qualified, doc.metadata, doc.raw_frontmatter),
                )
                for item, doc in page
            ],
        )
        return [
            _listed(item, doc, [s.name for s in newer[item.memory.qualified]]) for item, doc in page
        ]

    def resolve(self, scope: str | None = None) -> list[Resolved]:
        """Memories as lookup sees them: one per name, with what each shadows (sorted)."""
        return list(self._resolved(scope))

    def _resolved(self, scope: str | None) -> Sequence[Resolved]:
        return self._resolved_keyed(scope)[1]

    def _resolved_keyed(
        self, scope: str | None
    ) -> tuple[tuple[object, ...] | None, Sequence[Resolved]]:
        """The resolved memories of a scope, and what identifies this version of them in
        the scan cache (None without one)."""
        folders = self.config.folders_in(scope)
        cache = self.scan_cache
        if cache is None:
            return None, resolve_files(self.scan(folders))
        others = {f.path for f in self.config.folders}
        scans = [cache.scan(f, others - {f.path}, scan_folder) for f in folders]
        key = (scope, tuple(scan.generation for scan in scans))
        built = cache.resolved(
            key, lambda: resolve_files([m for scan in scans for m in scan.files])
        )
        return key, built

    def _named(self, where: str | None, prefix: str | None, topic: str) -> Sequence[Resolved]:
        """Resolved memories in a scope whose names have the prefix and lie under the topic
        (sorted by name: only the run of names that start alike is looked at)."""
        resolved = self._resolved(where)
        if prefix is None and not topic:
            return resolved
        if prefix is not None:
            start = prefix
        else:
            wanted = topic.rstrip("/")
            start = GLOBAL_PREFIX if wanted == "global" else wanted + "/"
        named: list[Resolved] = []
        first = bisect.bisect_left(resolved, start, key=_qualified_of)
        for position in range(first, len(resolved)):
            item = resolved[position]
            qualified = item.memory.qualified
            if not qualified.startswith(start):
                break
            if prefix is not None and not qualified.startswith(prefix):
                continue
            if topic and not in_topic(qualified, item.memory.scope == "global", topic):
                continue
            named.append(item)
        return named

    def list_memories(
        self,
        scope: object = None,
        tags: object = None,
        prefix: object = None,
        *,
        topic: object = None,
        limit: object = None,
        cursor: object = None,
    ) -> dict[str, Any]:
        """Memories in a scope, filtered by tags (all must match), name prefix and topic,
        sorted by name: `limit` of them after `cursor` (all without a limit).

        The result has `total` (how many match, left out when a tag filter stopped reading
        early) and, when more follow, `nextCursor`: the sort key of the page's last memory,
        so it stays valid when memories are added or removed between pages. Only the page's
        files are read, except with tags: then files are read until the page is full and
        one more match is found.
        """
        filters = _list_filters(scope, tags, prefix, topic)
        page_size = check_limit(limit)
        after = None
        if cursor is not None:
            after, cursor_filters = decode_cursor(cursor)
            filters = continued_filters(filters, cursor_filters)
        where, wanted, given_prefix, under = _checked_filters(filters)
        named = self._named(where, given_prefix, under)
        start = 0 if after is None else bisect.bisect_right(named, after, key=sort_key)
        page: list[tuple[Resolved, Document | None]] = []
        more = False
        for position in range(start, len(named)):
            item = named[position]
            doc = self._safe_load(item.memory)
            doc_tags = doc.tags if doc else []
            if any(t not in doc_tags for t in wanted):
                continue
            if page_size is not None and len(page) == page_size:
                more = True
                break
            page.append((item, doc))
            if page_size is not None and not wanted and len(page) == page_size:
                more = position + 1 < len(named)
                break
        memories = self._page(page)
        result: dict[str, Any] = {"memories": memories}
        if not wanted:
            result["total"] = len(named)
            result["remaining"] = len(named) - start - len(memories)
        elif not more and after is None:
            result["total"] = len(memories)
        if more and memories:
            last = (memories[-1]["name"], memories[-1]["path"])
            following = bisect.bisect_right(named, last, key=sort_key)
            tie = following < len(named) and named[following].memory.qualified == last[0]
            kept = {k: v for k, v in filters.items() if v}
            result["nextCursor"] = encode_cursor(last, kept, tie=tie)
        return result

    def list_groups(
        self,
        scope: object = None,
        tags: object = None,
        prefix: object = None,
        *,
        topic: object = None,
    ) -> dict[str, Any]:
        """How many memories match, by folder and by group of names (what follows the prefix
        or topic up to the next `/` or `_`), largest first; reads files only with tags."""
        where, wanted, given_prefix, under = _checked_filters(
            _list_filters(scope, tags, prefix, topic)
        )
        if not wanted and self.scan_cache is not None:
            # Counted once per version of the listing: a long-lived process answers the
            # first page of every listing with these (100,000 names take 0.1 s to group).
            key, _ = self._resolved_keyed(where)
            if key is not None:
                counted = self.scan_cache.kept(
                    ("groups", key, given_prefix, under),
                    lambda: self._groups(where, given_prefix, under, ()),
                )
                return copy.deepcopy(counted)
        return self._groups(where, given_prefix, under, wanted)

    def _groups(
        self, where: str | None, given_prefix: str | None, under: str, wanted: Sequence[str]
    ) -> dict[str, Any]:
        named = self._named(where, given_prefix, under)
        if wanted:
            named = [item for item in named if self._has_tags(item.memory, wanted)]
        base = given_prefix or ""
        if under:
            topic_base = under.rstrip("/") + "/"
            if len(topic_base) > len(base) and all(
                item.memory.qualified.startswith(topic_base) for item in named
            ):
                base = topic_base
        grouped = group_names([item.memory.qualified for item in named], base)
        by_folder = Counter(item.memory.folder.path for item in named)
        return {
            "total": len(named),
            "base": grouped.base,
            "groups": [{"prefix": start, "count": count} for start, count in grouped.groups],
            "ungrouped": grouped.ungrouped,
            "folders": [
                {"folder": folder.path, "count": by_folder[folder.path]}
                for folder in self.config.folders_in(where)
                if by_folder[folder.path]
            ],
        }

    def _has_tags(self, memory: MemoryFile, wanted: Sequence[str]) -> bool:
        doc = self._safe_load(memory)
        return doc is not None and all(t in doc.tags for t in wanted)

    def clean_leftovers(self) -> int:
        """Remove temp files of writes that were killed midway, in every writable folder."""
        removed = 0
        for folder in self.config.folders:
            if not folder.read_only and os.path.isdir(folder.path):
                with folder_lock(folder.real):
                    removed += remove_leftovers(folder.path)
        return removed

    def tags(self, scope: object = None) -> dict[str, Any]:
        """Tags in use with their counts, most used first (`memory.tags`)."""
        where = check_scope(scope, allow_all=True)
        counts: dict[str, int] = {}
        for item in self.resolve(where):
            doc = self._safe_load(item.memory)
            for tag in doc.tags if doc else []:
                counts[tag] = counts.get(tag, 0) + 1
        ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        return {"tags": [{"tag": tag, "count": count} for tag, count in ordered]}
