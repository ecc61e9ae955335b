"""Questions to the index: searches, the files that may hold some words or references,
hidden memories, near-duplicates and tags."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from memory_ls.core.rules.names import GLOBAL_PREFIX, is_valid_name
from memory_ls.core.rules.similarity import SHINGLE_KEY, SKETCH_MATCHES, bucket_limit
from memory_ls.core.rules.stemming import stem
from memory_ls.core.rules.supersede import SUPERSEDED_BY_KEY, SUPERSEDES_KEY
from memory_ls.core.services.backlinks import SERENA_MARK
from memory_ls.core.services.relevance import (
    NAME_WEIGHT,
    Found,
    Hit,
    Part,
    Query,
    describe,
    enough,
    order_by_supersession,
    score_of,
    tokens,
)
from memory_ls.core.services.search.database import Database
from memory_ls.core.services.search.files import _stamp
from memory_ls.core.services.search.schema import (
    DUPKEY_MASK,
    IndexUnusable,
    _tag_text,
    _unpack_body,
    sqlite3,
)

if TYPE_CHECKING:
    from memory_ls.core.services.search.index import SearchIndex

logger = logging.getLogger(__name__)

# A hint (a read's "superseded by") builds a missing index for at most this many memories
# (about a second here); a bigger store waits for a search, a rename or the editor to.
HINT_BUILD_LIMIT = 2000
# A search waits this long at most for an announced first sync to begin (the names are
# listed first: a second or two at 100,000 memories).
FIRST_SYNC_WAIT = 10.0
# A search re-reads stale memories it was about to return and asks again, this often.
STALE_RETRIES = 3
# A relevance search looks a word's stem up under at most this many indexed words (the
# most frequent), and an OR of them is answered in one pass.
MAX_VARIANTS = 24
# Link keys whose words both tokenizers cut alike (ASCII letters and digits, split by
# what names may hold besides): the only ones the index looks up by their words.
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_. /-]*")

# With search by meaning, the words' ranking fused holds at least this many memories.
FUSION_DEPTH = 50

# A file not indexed yet, as a search reads it: (qualified name, path, folder rank, name).
Unindexed = tuple[str, str, int, str]


class Queries:
    """The questions a `SearchIndex` answers (its lock held around each), the index
    brought in line with the disk first as its owner's mode says (`_current`)."""

    def __init__(self, index: SearchIndex) -> None:
        self.index = index
        self.database = index.database
        self.config = index.config
        self._lock = index.database.lock
        self._big: bool | None = None  # more memories than a hint builds an index for
        # The tags `tags_in` gave last, with what they were of (scope, index version).
        self._tags_kept: tuple[tuple[object, ...], tuple[str, ...]] | None = None

    def _current(self) -> bool:
        """Bring the index in line before a question (lock held): a live one by its owner's
        events, else by a walk; False when it cannot answer now."""
        if self.index.live:
            if self.index._failed:
                self.index.apply(())
            return self.index._complete and not self.index._failed
        return self.index.sync()

    def _too_big_for_hints(self) -> bool:
        """Whether the store has more memory files than a hint builds an index for (counted
        once a process: names only, stopping at the limit)."""
        if self._big is None:
            count = 0
            for folder in self.config.folders:
                for _directory, _dirs, files in os.walk(folder.path):
                    count += sum(1 for name in files if name.endswith(".md"))
                    if count > HINT_BUILD_LIMIT:
                        break
                if count > HINT_BUILD_LIMIT:
                    break
            self._big = count > HINT_BUILD_LIMIT
        return self._big

    def tags_in(self, scope: str | None) -> list[str] | None:
        """Every tag of the memories of `scope` (None: all), each once, from the index; None
        when it cannot answer for the disk now."""
        if self.index.live and not self.index._complete:
            return None
        ranks = [r for r, f in enumerate(self.config.folders) if scope is None or f.scope == scope]
        with self._lock:
            if not self._current():
                return None
            try:
                # Kept until the index changes (by any process): a search that matches
                # nothing asks for them, 60 ms at 100,000 memories.
                key = (tuple(ranks), self.database.data_version())
                if self._tags_kept is not None and self._tags_kept[0] == key:
                    return list(self._tags_kept[1])
                marks = ",".join("?" * len(ranks))
                rows = self.database.connect().execute(
                    f"SELECT DISTINCT tags FROM files WHERE folder IN ({marks})", ranks
                )
                tags = list({tag for (text,) in rows for tag in text.split("\n") if tag})
                self._tags_kept = (key, tuple(tags))
                return tags
            except (IndexUnusable, sqlite3.Error) as exc:
                logger.info("search index query failed: %s", exc)
                return None

    # ----- renames ---------------------------------------------------------------------

    def reference_sources(
        self, keys: Sequence[str], *, fresh: bool = True, current: bool = False
    ) -> list[str] | None:
        """The memory files that may hold any of these link keys (core/services/backlinks.py), for
        a rename to read only those; None when the index cannot tell (a rename then reads
        every memory).

        Not live: the disk is compared with the index first, so a file changed since it
        was indexed is read as it is now. A key's name is written whole in every reference
        to it (`[[ NAME.md ]]`, `mem:global/NAME`), between characters that are no part of
        a word, so the files that hold it are among those whose body has its words in a
        row, the last maybe longer (`mem:NAME` before a letter no name holds), and those
        whose references the body does not show (`hidden_refs`). A supersede relation
        (core/rules/supersede.py) is declared in frontmatter: its holders are among the latter.
        """
        if self.index.live and not (current and self.index._complete):
            # Only as current as the events its owner reported: that owner answers from its
            # own link index and what it has not caught up with; `current`: the owner has
            # applied every event so far (the MCP server, before its link index is built).
            return None
        phrases = []
        for key in keys:
            if key[:1] in (SUPERSEDES_KEY, SUPERSEDED_BY_KEY):
                # Declared in frontmatter, which is not indexed: among the hidden_refs files.
                continue
            words = tokens(key.removeprefix(SERENA_MARK))
            if not words or not _PLAIN_KEY.fullmatch(key.removeprefix(SERENA_MARK)):
                return None  # words the two tokenizers may cut differently
            phrases.append(f"({Part(tuple(words), prefix=True).expression()})")
        if not keys:
            return []
        with self._lock:
            # A hint (who supersedes a memory being read) takes the index as some process
            # last brought it in line: a read is not worth a walk of the store (0.3 s at
            # 100,000). A rename must see the disk as it is now.
            if not self.index.live and (fresh or not self.database.built()):
                if not fresh and self._too_big_for_hints():
                    return None  # nor does a hint wait for a big store to be indexed
                if not self.index.sync():
                    return None
            try:
                db = self.database.connect()
                if phrases:
                    found = db.execute(
                        "SELECT folder, name FROM files WHERE hidden_refs UNION "
                        "SELECT folder, name FROM files WHERE id IN "
                        "(SELECT rowid FROM fts WHERE fts MATCH ?)",
                        ("{body} : (" + " OR ".join(phrases) + ")",),
                    ).fetchall()
                else:
                    found = db.execute(
                        "SELECT folder, name FROM files WHERE hidden_refs"
                    ).fetchall()
            except (IndexUnusable, sqlite3.Error) as exc:
                logger.info("search index could not name a rename's referrers: %s", exc)
                return None
        folders = self.config.folders
        return [folders[rank].file_for(name) for rank, name in found]

    # ----- files that hold some words -------------------------------------------------

    def files_with_phrases(self, phrases: Sequence[Sequence[str]]) -> list[str] | None:
        """The memory files whose indexed body holds any of these phrases (folded words in
        a row), for a caller that reads and confirms each; None when the index cannot tell.

        Not live: the disk is compared with the index first. Live: as current as the
        events its owner reported (as `search`), so a file changed since is read as it is
        now by the caller, and one not yet reported is missed as a search misses it.
        """
        expressions = [f"({Part(tuple(words)).expression()})" for words in phrases if words]
        if not expressions:
            return []
        if self.index.live and not self.index._complete:
            return None
        with self._lock:
            if not self._current():
                return None
            try:
                found = (
                    self.database.connect()
                    .execute(
                        "SELECT folder, name FROM files WHERE id IN "
                        "(SELECT rowid FROM fts WHERE fts MATCH ?)",
                        ("{body} : (" + " OR ".join(expressions) + ")",),
                    )
                    .fetchall()
                )
            except (IndexUnusable, sqlite3.Error) as exc:
                logger.info("search index could not name the files holding words: %s", exc)
                return None
        folders = self.config.folders
        return [folders[rank].file_for(name) for rank, name in found]

    # ----- searching ---------------------------------------------------------------------

    def search(
        self,
        query: Query,
        tags: Sequence[str],
        scope: str | None,
        limit: int,
        *,
        per_memory: bool = False,
        offset: int = 0,
        count: bool = False,
        nearest: Sequence[tuple[int, float]] | None = None,
    ) -> Found | None:
        """The memories that answer a query, best first: enough for `limit` lines (or,
        `per_memory`, `limit` memories after `offset`), with the number of memories that
        match in all when `count`; None when the index cannot answer for the disk now
        (not live: the disk is compared with the index first). `nearest`: the `files`
        rows nearest in meaning (core/services/meaning/), fused with the words' ranking."""
        if self.index.live and not self.index._complete:
            return None  # the first indexing runs: no waiting for it
        with self._lock:
            if not self._current():
                return None
            try:
                for _attempt in range(STALE_RETRIES):
                    search = _Search(self.database, query, tags, scope)
                    found = (
                        search.run(limit, per_memory, offset, count)
                        if nearest is None
                        else search.run_fused(limit, per_memory, offset, count, nearest)
                    )
                    if not search.stale:
                        return found
                    # Changed behind the index's back: read again, then ask again.
                    self.index._apply_batches(
                        [(k, p) for p in search.stale if (k := self.index._key(p))]
                    )
            except (IndexUnusable, sqlite3.Error) as exc:
                logger.info("search index query failed: %s", exc)
            return None

    def search_partial(
        self,
        query: Query,
        tags: Sequence[str],
        scope: str | None,
        limit: int,
        *,
        per_memory: bool = False,
        count: bool = False,
    ) -> tuple[Found, list[Unindexed]] | None:
        """While the first indexing runs (live): the best memories among those indexed
        (enough for `limit`, no offset), and the files in `scope` not indexed yet, for the
        caller to read (`hidden` tells which another memory hides); None when no first
        indexing runs or the index cannot answer."""
        begun = self.index._sync_begun
        if begun is not None and not self.index._complete:
            begun.wait(FIRST_SYNC_WAIT)
        with self._lock:
            unsynced = self.index._unsynced
            if unsynced is None:
                return None
            try:
                search = _Search(self.database, query, tags, scope, unsynced)
                found = search.run(limit, per_memory, 0, count)
            except (IndexUnusable, sqlite3.Error) as exc:
                logger.info("search index query failed: %s", exc)
                return None
            folders = self.config.folders
            # What a folder's names are qualified with, for the folders of `scope`.
            prefixes = {
                r: f.qualified("")
                for r, f in enumerate(folders)
                if scope is None or f.scope == scope
            }
            rest = [
                (prefixes[rank] + name, path, rank, name)
                for (rank, name), path in unsynced.items()
                if rank in prefixes
            ]
            # Changed behind the index's back: read as they are now, with the rest.
            rest += [
                (folders[key[0]].qualified(key[1]), path, *key)
                for path in search.stale
                if (key := self.index._key(path)) is not None and key not in unsynced
            ]
            return found, rest

    def hidden(self, rank: int, name: str) -> bool:
        """Whether a memory (of the folder at `rank`) is hidden by one of the same name
        earlier in lookup order, indexed or not yet (a project memory by another)."""
        folders = self.config.folders
        if folders[rank].kind == "global" or not is_valid_name(name):
            return False
        earlier = [r for r in range(rank) if folders[r].kind != "global"]
        with self._lock:
            unsynced = self.index._unsynced or {}
            if any((r, name) in unsynced for r in earlier):
                return True
            try:
                found = (
                    self.database.connect()
                    .execute(
                        "SELECT folder FROM files WHERE name = ? AND folder < ? AND valid",
                        (name, rank),
                    )
                    .fetchall()
                )
            except (IndexUnusable, sqlite3.Error):
                return False
        return any(row[0] in earlier for row in found)

    # ----- near-duplicates (core/operations/duplicates.py) ------------------------------

    def duplicate_candidates(
        self, keys: Sequence[int], written: Iterable[str] = ()
    ) -> list[tuple[str, str, bool]] | None:
        """(path, qualified name, global) of the memories sharing one of these near-duplicate
        keys, or None when the index cannot answer now.

        Not live, the first question brings the index in line with the disk (a walk);
        later ones bring only the files just `written` up to date: a walk of 10,000
        files costs more than the whole answer, and whoever else writes keeps the shared
        index current too (a language server, every search).
        """
        if self.index.live and not self.index._complete:
            return None
        with self._lock:
            if self.index.live:  # its own file events keep it current
                if self.index._failed:
                    self.index.apply(())
                if not self.index._complete or self.index._failed:
                    return None
            elif self.index._complete:
                self.index.apply(written)
                if self.index._failed:
                    return None
            elif not self.index.sync():
                return None
            try:
                db = self.database.connect()
                ids: set[int] = set()
                sketched: dict[int, int] = {}  # id -> sketch keys shared
                for key in {k & DUPKEY_MASK for k in keys}:
                    limit = bucket_limit(key)
                    rows = db.execute(
                        "SELECT id FROM dupkeys WHERE key = ? LIMIT ?",
                        (key, limit + 1),
                    ).fetchall()
                    if len(rows) > limit:  # a template's phrase: it proposes nothing
                        continue
                    for (ident,) in rows:
                        if key & 3 == SHINGLE_KEY:
                            sketched[ident] = sketched.get(ident, 0) + 1
                        else:
                            ids.add(ident)
                ids.update(i for i, count in sketched.items() if count >= SKETCH_MATCHES)
                found = [
                    db.execute("SELECT folder, name FROM files WHERE id = ?", (i,)).fetchone()
                    for i in sorted(ids)
                ]
            except (IndexUnusable, sqlite3.Error) as exc:
                logger.info("search index query failed: %s", exc)
                return None
        folders = self.config.folders
        return [
            (
                folders[rank].file_for(name),
                folders[rank].qualified(name),
                folders[rank].scope == "global",
            )
            for rank, name in (row for row in found if row is not None)
        ]

    def duplicate_groups(self) -> list[tuple[int, list[tuple[str, str, bool]]]] | None:
        """Each near-duplicate key that more than one memory and not too many share, with
        those memories as `duplicate_candidates` gives them; None when it cannot answer."""
        with self._lock:
            if not self.index._complete or self.index._failed:
                return None
            try:
                db = self.database.connect()
                shared = [
                    (key, [int(i) for i in joined.split(",")])
                    for key, joined in db.execute(
                        "SELECT key, group_concat(id) FROM dupkeys GROUP BY key HAVING count(*) > 1"
                    )
                ]
                shared = [(key, ids) for key, ids in shared if len(ids) <= bucket_limit(key)]
                rows = {
                    ident: (rank, name)
                    for ident in sorted({i for _key, ids in shared for i in ids})
                    for rank, name in db.execute(
                        "SELECT folder, name FROM files WHERE id = ?", (ident,)
                    )
                }
            except (IndexUnusable, sqlite3.Error) as exc:
                logger.info("search index query failed: %s", exc)
                return None
        folders = self.config.folders
        return [
            (
                key,
                [
                    (folders[r].file_for(n), folders[r].qualified(n), folders[r].scope == "global")
                    for r, n in (rows[i] for i in ids if i in rows)
                ],
            )
            for key, ids in shared
        ]


class _Search:
    """One search through the index (its lock held)."""

    def __init__(
        self,
        database: Database,
        query: Query,
        tags: Sequence[str],
        scope: str | None,
        unsynced: Mapping[tuple[int, str], str] | None = None,
    ) -> None:
        self.db = database.connect()
        # Files the first indexing has not reached: their rows (if any) are not believed.
        self.unsynced = unsynced or {}
        self.query = query
        self.folders = database.config.folders
        self.allowed = {
            rank for rank, f in enumerate(self.folders) if scope is None or f.scope == scope
        }
        self.global_rank = next(
            (r for r, f in enumerate(self.folders) if f.kind == "global"), len(self.folders)
        )
        self.wanted_tags = [_tag_text((tag,)) for tag in tags]
        self.stale: list[str] = []
        # Successors listed beside the matches they supersede, without the query's words.
        self.added: list[str] = []
        variants = self._variants() if query.stemmed else {}
        every = query.expression(variants)
        # Memories whose name holds every term come first, then those holding every term;
        # ranking those alone is cheap, and most searches need nothing more. In relevance
        # mode, those holding some term are ranked only when those do not fill the results.
        self.tiers = [(2, f"{{name title}} : ({every})"), (1, every)]
        if query.stemmed and len(query.terms) > 1:
            self.tiers.append((0, query.any_expression(variants)))

    def run(self, limit: int, per_memory: bool, offset: int, count: bool) -> Found:
        self.added = []
        hits: list[Hit] = []
        seen: set[int] = set()
        wanted = limit + offset
        self._ranked_hits(hits, seen, wanted, per_memory)
        ordered = order_by_supersession(hits, self._fetch)
        if per_memory:
            ordered = ordered[offset : offset + limit]
        return Found(ordered, self._count() if count else None, len(self.added))

    def run_fused(
        self,
        limit: int,
        per_memory: bool,
        offset: int,
        count: bool,
        nearest: Sequence[tuple[int, float]],
    ) -> Found:
        """`run`, the ranking of the memories holding every word fused with the rows
        nearest in meaning (reciprocal rank fusion, core/services/meaning/fusion.py); then,
        should those not fill the answer, the rest of the words' ranking (those holding
        some of the words: a question in other words matches a note's incidental words,
        and fused, those pushed the notes it means out of the first five; bench/retrieval:
        paraphrases sharing no word with their note 17% found in the first five, 67% so)."""
        from memory_ls.core.services.meaning.fusion import RRF_K, reciprocal_rank_fusion

        self.added = []
        wanted = limit + offset
        depth = max(2 * wanted, FUSION_DEPTH)
        by_words: list[int] = []
        for tier, expression in self.tiers:
            if len(by_words) >= depth or tier == 0:
                break
            ranked = self.db.execute(
                "SELECT rowid, bm25(fts, ?, ?, 1.0) AS r FROM fts WHERE fts MATCH ? "
                "ORDER BY r, rowid LIMIT ?",
                (NAME_WEIGHT, NAME_WEIGHT, expression, depth),
            )
            known = set(by_words)
            by_words += [ident for ident, _r in ranked if ident not in known]
        by_words = by_words[:depth]
        similar = dict(nearest)
        hits: list[Hit] = []
        seen: set[int] = set()
        # Scaled so that the first of both rankings scores 1.
        scale = (RRF_K + 1) / 2
        for ident, fused in reciprocal_rank_fusion([by_words, list(similar)]):
            if enough(hits, wanted, per_memory):
                break
            seen.add(ident)
            hit = self._hit(ident, fused * scale)
            if hit is not None:
                hit.similarity = similar.get(ident)
                hits.append(hit)
        self._ranked_hits(hits, seen, wanted, per_memory)
        ordered = order_by_supersession(hits, self._fetch)
        if per_memory:
            ordered = ordered[offset : offset + limit]
        total = None
        if count:
            # Those found by meaning alone count on top of those holding some word.
            total = self._count_with(list(similar))
        return Found(ordered, total, len(self.added))

    def _count_with(self, similar: Sequence[int]) -> int:
        """`_count`, and the rows of `similar` that hold no word of the query (found by
        meaning alone) on top."""
        expression = self.tiers[-1][1]
        if len(self.allowed) == len(self.folders) and not self.wanted_tags:
            # One pass over the matches answers both (the count alone costs as much).
            matching = {
                row[0]
                for row in self.db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", [expression])
            }
            return len(matching) + sum(1 for i in similar if i not in matching and self._may(i))
        extra = [
            i
            for i in similar
            if self._may(i)
            and self.db.execute(
                "SELECT 1 FROM fts WHERE fts MATCH ? AND rowid = ?", (expression, i)
            ).fetchone()
            is None
        ]
        return self._count() + len(extra)

    def _may(self, ident: int) -> bool:
        """Whether an indexed file is in the search's scope and has its tags."""
        row = self.db.execute("SELECT folder, tags FROM files WHERE id = ?", (ident,)).fetchone()
        return (
            row is not None
            and row[0] in self.allowed
            and all(t in row[1] for t in self.wanted_tags)
        )

    def _ranked_hits(self, hits: list[Hit], seen: set[int], wanted: int, per_memory: bool) -> None:
        """Hits added to `hits` from the words' ranking, tier by tier, until enough (those
        in `seen` passed over)."""
        for tier, expression in self.tiers:
            if enough(hits, wanted, per_memory):
                break
            # Ranked alone, each file looked up while the ranking is read: SQLite drops the
            # ORDER BY of a subquery that is joined.
            ranked = self.db.execute(
                "SELECT rowid, bm25(fts, ?, ?, 1.0) AS r FROM fts WHERE fts MATCH ? "
                "ORDER BY r, rowid",
                (NAME_WEIGHT, NAME_WEIGHT, expression),
            )
            for ident, rank in ranked:
                if ident in seen:
                    continue
                seen.add(ident)
                hit = self._hit(ident, score_of(tier, -rank))
                if hit is not None:
                    hits.append(hit)
                    if enough(hits, wanted, per_memory):
                        break

    def _variants(self) -> dict[str, list[str]]:
        """The indexed words of each term's stem, the most frequent first."""
        variants: dict[str, list[str]] = {}
        for part in self.query.terms:
            wanted = part.stem
            if wanted is None or wanted in variants:
                continue
            # A word begins with its stem but for the stem's last letter (`happi`, `happy`).
            low = wanted[:-1]
            high = low[:-1] + chr(ord(low[-1]) + 1)
            found = [
                (-docs, term)
                for term, docs in self.db.execute(
                    "SELECT term, doc FROM vocab WHERE term >= ? AND term < ?", (low, high)
                )
                if stem(term) == wanted
            ]
            found.sort()
            variants[wanted] = [term for _docs, term in found[:MAX_VARIANTS]]
        return variants

    def _hit(self, ident: int, score: float) -> Hit | None:
        """The hit of an indexed file, if it is a memory the search may return."""
        db = self.db
        row = db.execute(
            "SELECT folder, name, mtime_ns, size, valid, tags, body_line, superseded_by "
            "FROM files WHERE id = ?",
            (ident,),
        ).fetchone()
        if row is None:
            return None
        folder_rank, name, mtime, size, valid, tag_text, body_line, declared = row
        if folder_rank not in self.allowed or any(t not in tag_text for t in self.wanted_tags):
            return None
        if self.unsynced and (
            (folder_rank, name) in self.unsynced
            or (
                valid
                and folder_rank < self.global_rank
                and any((r, name) in self.unsynced for r in range(folder_rank))
            )
        ):
            return None  # read by the caller, or maybe hidden by a memory not indexed yet
        if valid and folder_rank < self.global_rank and self._shadowed(name, folder_rank):
            return None
        folder = self.folders[folder_rank]
        path = folder.file_for(name)
        if _stamp(path) != (mtime, size):
            self.stale.append(path)
            return None
        (data,) = db.execute("SELECT data FROM bodies WHERE id = ?", (ident,)).fetchone()
        body = _unpack_body(data)
        qualified = folder.qualified(name)
        newer = dict.fromkeys(declared.split("\n") if declared else ())
        for (successor,) in db.execute(
            "SELECT newer FROM successors WHERE older = ?", (qualified,)
        ).fetchall():
            found = db.execute(
                "SELECT folder, name FROM files WHERE id = ?", (successor,)
            ).fetchone()
            if found is not None:
                newer[self.folders[found[0]].qualified(found[1])] = None
        newer.pop(qualified, None)
        return describe(self.query, qualified, path, body, body_line, score, tuple(newer))

    def _shadowed(self, name: str, folder_rank: int) -> bool:
        """Whether a project memory is hidden by one of the same name earlier in lookup order."""
        found = self.db.execute(
            "SELECT 1 FROM files WHERE name = ? AND folder < ? AND folder < ? AND valid LIMIT 1",
            (name, folder_rank, self.global_rank),
        ).fetchone()
        return found is not None

    def _fetch(self, qualified: str) -> Hit | None:
        """The hit of the memory so named (one that supersedes a memory the query found):
        what holds now about what the query found, whether or not it has the query's
        words (a paraphrase finds the old wording and not the new)."""
        if qualified.startswith(GLOBAL_PREFIX):
            found = self.db.execute(
                "SELECT id FROM files WHERE name = ? AND folder = ?",
                (qualified[len(GLOBAL_PREFIX) :], self.global_rank),
            ).fetchone()
        else:
            found = self.db.execute(
                "SELECT id FROM files WHERE name = ? AND folder < ? ORDER BY folder LIMIT 1",
                (qualified, self.global_rank),
            ).fetchone()
        if found is None:
            return None
        matched = self.db.execute(
            "SELECT bm25(fts, ?, ?, 1.0) FROM fts WHERE fts MATCH ? AND rowid = ?",
            (NAME_WEIGHT, NAME_WEIGHT, self.tiers[-1][1], found[0]),
        ).fetchone()
        if matched is None:
            # Listed for the memory it supersedes, not counted among the matches.
            self.added.append(qualified)
        return self._hit(found[0], 0.0 if matched is None else score_of(0, -matched[0]))

    def _count(self) -> int:
        """How many memories match in all (scope and tags applied; a project memory that
        another of the same name hides still counts: rare, and costly to rule out)."""
        # Counted by SQLite: at 100,000 memories a common word matches tens of thousands,
        # and reading each row into Python cost most of a search's time.
        arguments: list[object] = [self.tiers[-1][1]]
        if len(self.allowed) == len(self.folders) and not self.wanted_tags:
            # Each `fts` row is a `files` row (added and dropped together): no join.
            counted = self.db.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", arguments)
            return int(counted.fetchone()[0])
        sql = "SELECT count(*) FROM files WHERE id IN (SELECT rowid FROM fts WHERE fts MATCH ?)"
        if len(self.allowed) < len(self.folders):
            sql += f" AND folder IN ({', '.join('?' * len(self.allowed))})"
            arguments += sorted(self.allowed)
        for tag in self.wanted_tags:
            sql += " AND instr(tags, ?) > 0"  # as `in`: the tag between newlines
            arguments.append(tag)
        return int(self.db.execute(sql, arguments).fetchone()[0])
