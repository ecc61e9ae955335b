"""Searching memories: the full-text index, or a scan of the files while it is built."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from typing import Any

from memory_ls.core.rules.document import parse_document
from memory_ls.core.rules.errors import InvalidArguments, MemoryStoreError
from memory_ls.core.rules.names import closest_query, words_of
from memory_ls.core.rules.supersede import relations
from memory_ls.core.services.relevance import (
    RELEVANCE,
    Found,
    Query,
    Searchable,
    enough,
    merge_found,
    parse_query,
    rows_of,
    scan_search,
)
from memory_ls.core.services.rough_ranking import RoughRanker
from memory_ls.core.services.search import SearchIndex, Unindexed
from memory_ls.core.storage.memory import LISTING_READ_LIMIT
from memory_ls.core.store_parts.arguments import _check_str, _check_tags, check_scope
from memory_ls.core.store_parts.reading import Reading

DEFAULT_SEARCH_LIMIT = 50
# A search while the first indexing runs parses the files that may match this many (or
# four times its limit) first, the likeliest first, then twice as many each time until
# they fill its answer (`Store._scan_unindexed`).
SCAN_STEP = 200
# Files not indexed yet a search reads before it looks at them (RoughRanker.add_many).
ROUGH_FILES = 5_000
# Where a search's answer can say it is partial (MCP), a search while the first indexing
# runs reads the files not indexed yet for this long at most, then answers from what it
# read and says so (issue 35: a first call on a store of 100,000 memories never indexed
# answers within 2 s; reading them all took 1.0-1.9 s, and the names and the index's
# comparison before it 1.3 s on a quiet machine). `Store.unindexed_read_seconds`.
UNINDEXED_READ_SECONDS = 0.6
# With search by meaning, at least this many memories nearest in meaning are fused.
MEANING_DEPTH = 50


class Searching(Reading):
    """Searching memories."""

    def search(
        self,
        query: object,
        tags: object = None,
        scope: object = None,
        limit: object = None,
        mode: str = RELEVANCE,
    ) -> dict[str, Any]:
        """Full text over names and bodies, best first (`memory.search`, SPEC 2.6): one row
        per matching line, at most `limit` lines.

        `mode` "relevance" (default) ranks every memory holding some of the words, those
        holding all first; "all_words" wants every word and phrase as written (see
        core/services/relevance.py). The full-text index answers where it can; else every memory
        is read.
        """
        found = self.search_memories(query, tags, scope, limit, mode)
        return {"results": rows_of(found.hits, self._limit(limit))}

    def closest_query(self, query: str, scope: object = None) -> str | None:
        """The query with each word no memory name or tag of `scope` holds replaced by its
        closest such word (`paymnt` -> `payments`), for a search that matched nothing; None
        when no word has a close one."""
        where = check_scope(scope, allow_all=True)
        # Tags from the full-text index where it answers: no file read (100,000 of them
        # on a large store, for one mistyped word).
        tags = self.search_index.tags_in(where) if self.search_index is not None else None
        if tags is None:
            listed = self.list_memories(where)["memories"]
            names = [m["name"] for m in listed]
            tags = [tag for m in listed for tag in m["tags"]]
            vocabulary = {word for text in [*names, *tags] for word in words_of(text)}
            return closest_query(query, vocabulary)
        known = self.name_words(where) if self.name_words is not None else None
        if known is not None:
            return closest_query(query, known.union(w for tag in tags for w in words_of(tag)))
        key, resolved = self._resolved_keyed(where)

        def name_words() -> frozenset[str]:
            return frozenset(word for item in resolved for word in words_of(item.memory.qualified))

        # Kept while the names are (a search that matches nothing, as an agent's often
        # does, took 0.25 s at 100,000 memories for this alone).
        cache = self.scan_cache
        words = (
            name_words() if key is None or cache is None else cache.kept(("words", key), name_words)
        )
        return closest_query(query, words.union(word for tag in tags for word in words_of(tag)))

    def search_memories(
        self,
        query: object,
        tags: object = None,
        scope: object = None,
        limit: object = None,
        mode: str = RELEVANCE,
        *,
        per_memory: bool = False,
        offset: int = 0,
        count: bool = False,
    ) -> Found:
        """The memories that answer a query, best first (`search`'s; `per_memory`: `limit`
        memories after `offset`, and with `count` how many match in all)."""
        text = _check_str(query, "query")
        if not text.strip():
            raise InvalidArguments("query must not be empty.")
        parsed = parse_query(text, _check_str(mode, "mode"))
        wanted = _check_tags(tags) or []
        where = check_scope(scope, allow_all=True)
        size = self._limit(limit)
        index = self.search_index
        if index is None:
            return scan_search(
                parsed, self._searchable(where, wanted), size, per_memory=per_memory, offset=offset
            )
        with index.turns.searching():
            if self.config.meaning is not None:
                fused = self._search_by_meaning(
                    index, text, parsed, wanted, where, size, per_memory, offset, count
                )
                if fused is not None:
                    return fused
            found = index.search(
                parsed, wanted, where, size, per_memory=per_memory, offset=offset, count=count
            )
            if found is not None:
                return found
            # The first indexing runs: what it indexed answers, the rest is read now.
            partial = index.search_partial(
                parsed, wanted, where, size + offset, per_memory=per_memory, count=count
            )
            if partial is None:
                # A live index's first indexing may have ended since it was asked: it
                # answers now (else every file would be read, 6 s at 100,000 memories).
                # Not asked twice otherwise: a CLI's index would walk the store again.
                found = (
                    index.search(
                        parsed,
                        wanted,
                        where,
                        size,
                        per_memory=per_memory,
                        offset=offset,
                        count=count,
                    )
                    if index.live
                    else None
                )
                if found is not None:
                    return found
                return scan_search(
                    parsed,
                    self._searchable(where, wanted),
                    size,
                    per_memory=per_memory,
                    offset=offset,
                )
            indexed, rest = partial
            scanned = self._scan_unindexed(parsed, wanted, rest, index, size + offset, per_memory)
            found = merge_found([indexed, scanned], size, per_memory, offset)
            found.notes = (*indexed.notes, *scanned.notes)
            return found

    def _search_by_meaning(
        self,
        index: SearchIndex,
        text: str,
        parsed: Query,
        wanted: list[str],
        where: str | None,
        size: int,
        per_memory: bool,
        offset: int,
        count: bool,
    ) -> Found | None:
        """The index's answer with the memories nearest in meaning fused in (words only,
        and saying why, while that cannot be); None when the index cannot answer now."""
        # Only here, and only when configured: with it off, none of it is imported.
        try:
            from memory_ls.core.services.meaning.engine import meaning_for
        except ImportError as exc:  # numpy, an optional dependency, is missing
            found = index.search(
                parsed, wanted, where, size, per_memory=per_memory, offset=offset, count=count
            )
            if found is not None:
                found.notes = (
                    f"Search by meaning needs numpy ({exc}): pip install 'memory-ls[meaning]'; "
                    "words only.",
                )
            return found
        engine = meaning_for(self.config, index.database.path)
        if engine is None:
            return None
        depth = max(2 * (size + offset), MEANING_DEPTH)
        # Ranked as a search ranks: by a memory's best passage and its summary.
        nearest = engine.nearest(text, depth, summary=True)
        found = index.search(
            parsed,
            wanted,
            where,
            size,
            per_memory=per_memory,
            offset=offset,
            count=count,
            nearest=nearest,
        )
        if found is not None:
            found.notes = (*found.notes, *engine.state().notes())
        return found

    def _scan_unindexed(
        self,
        query: Query,
        wanted: Sequence[str],
        rest: Sequence[Unindexed],
        index: SearchIndex,
        size: int,
        per_memory: bool,
    ) -> Found:
        """The best memories among the files `rest` (not indexed yet, read through the
        index that keeps them for the next search), those another memory hides left out.

        Bounded work however many may match: the files are ordered by their bytes alone
        (`RoughRanker`), then parsed and ranked as a scan does, the likeliest first, a
        step at a time until they fill the answer. Every memory that holds the query's
        terms is among those that may match, so a term few memories hold finds them all.
        """
        rough = RoughRanker(query)
        budget = self.unindexed_read_seconds
        deadline = None if budget is None else time.monotonic() + budget
        read_files = 0
        # Read and looked at a slice at a time: bounded memory however large the store.
        for start in range(0, len(rest), ROUGH_FILES):
            if start and deadline is not None and time.monotonic() > deadline:
                break  # the answer says how many were left unread
            part = rest[start : start + ROUGH_FILES]
            read_files += len(part)
            read = index.read_unindexed_many([path for _q, path, _r, _n in part])
            rough.add_many(
                [
                    (qualified, data, (qualified, path, rank, name, data))
                    for (qualified, path, rank, name), data in zip(part, read, strict=True)
                    if data is not None
                ]
            )
        ordered = rough.ordered()
        chosen: list[Searchable] = []
        start, step = 0, max(SCAN_STEP, 4 * size)
        while True:
            # Each step twice the last: all of them read at most twice over.
            taken, start, step = ordered[start : start + step], start + step, 2 * step
            for qualified, path, rank, name, data in taken:
                if index.hidden(rank, name):
                    continue
                doc = parse_document(data.decode("utf-8", errors="replace"))
                if all(t in doc.tags for t in wanted):
                    replaced = relations(doc.metadata)
                    chosen.append(
                        Searchable(
                            qualified,
                            path,
                            doc.body,
                            doc.body_line,
                            replaced.supersedes,
                            replaced.superseded_by,
                        )
                    )
            # The others count in the ranking's statistics (their words, roughly).
            spaces = rough.total_spaces * (rough.documents - len(chosen)) // max(rough.documents, 1)
            passed = [rough.documents - len(chosen), spaces]
            found = scan_search(query, chosen, size, per_memory=per_memory, passed=passed)
            if start >= len(ordered) or enough(found.hits, size, per_memory):
                return Found(
                    found.hits, len(ordered), found.added, (_partial_note(read_files, len(rest)),)
                )

    @staticmethod
    def _limit(limit: object) -> int:
        if limit is None:
            return DEFAULT_SEARCH_LIMIT
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise InvalidArguments("limit must be a positive integer.")
        return limit

    def _searchable(self, where: str | None, wanted: Sequence[str]) -> Iterator[Searchable]:
        """Each resolved memory with the tags, read now."""
        for item in self.resolve(where):
            memory = item.memory
            try:
                if os.path.getsize(memory.path) > LISTING_READ_LIMIT * self.config.max_memory_bytes:
                    # Far too large to read: found by its name only (bounded work).
                    if not wanted:
                        yield Searchable(memory.qualified, memory.path, "", 0)
                    continue
                doc = self.load(memory)
            except (OSError, MemoryStoreError):
                continue
            if all(t in doc.tags for t in wanted):
                replaced = relations(doc.metadata)
                yield Searchable(
                    memory.qualified,
                    memory.path,
                    doc.body,
                    doc.body_line,
                    replaced.supersedes,
                    replaced.superseded_by,
                )


def _partial_note(read: int, unindexed: int) -> str:
    """What a search answered while the first indexing runs says of how it was made."""
    if read < unindexed:
        return (
            f"Partial: the search index is still being built; of the {unindexed:,} memories "
            f"not in it yet, {read:,} were read for this search and {unindexed - read:,} "
            "not, so a match may be missing and the count is approximate. Search again "
            "shortly for the whole answer."
        )
    return (
        f"The search index is still being built: the {unindexed:,} memories not in it yet "
        "were read for this search, so the count of matches is approximate."
    )
