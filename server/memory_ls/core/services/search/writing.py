"""Writing the index: each file's rows worked out (`Writer.prepare`) and written, or dropped."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memory_ls.core.rules.document import Document, parse_document
from memory_ls.core.rules.errors import MemoryStoreError
from memory_ls.core.rules.names import is_valid_name
from memory_ls.core.rules.supersede import KEY_WORD as SUPERSEDE_WORD
from memory_ls.core.rules.supersede import relations
from memory_ls.core.services.relevance import title_text
from memory_ls.core.services.search.database import Database
from memory_ls.core.services.search.files import READ_LIMIT_FACTOR, _read_small
from memory_ls.core.services.search.schema import (
    _pack_body,
    _stored_keys,
    _tag_text,
    _unpack_body,
    sqlite3,
)
from memory_ls.core.services.search.walk import _memory_stamp
from memory_ls.core.storage.folders import Folder


class Writer:
    """What writes the index's rows, one transaction a batch (its database's lock held)."""

    def __init__(self, database: Database) -> None:
        self.database = database
        # In the indexing worker: each file read, for its facts (`worker_main`).
        self.seen: list[tuple[str, tuple[int, int], str, Document]] | None = None

    def apply_now(
        self,
        keyed: Sequence[tuple[tuple[int, str], str]],
        prepared: Mapping[tuple[int, str], _Row] | None = None,
        *,
        reread: bool = False,
    ) -> None:
        """Each file as the disk has it now, in one transaction (lock held).

        The files are looked at inside the write transaction, so of two processes
        indexing the same file, the one that writes last has seen it last: a row
        `prepared` before it (by key) is written only if the file's stamp is still its.
        """
        db = self.database.db
        # One entry per key (the last): the rows are inserted together after the drops.
        wanted = dict(keyed)
        db.execute("BEGIN IMMEDIATE")
        try:
            indexed = _indexed_rows(db, list(wanted))
            rows: list[_Row] = []
            for key, path in wanted.items():
                found = indexed.get(key)
                folder = self.database.config.folders[key[0]]
                stamp = _memory_stamp(folder, key[1], path)
                if not reread and found is not None and stamp is not None and found[1:] == stamp:
                    continue
                if found is not None:
                    self._drop(db, found[0], key)
                if stamp is not None:
                    row = prepared.get(key) if prepared is not None else None
                    if row is None or row.stamp != stamp:
                        # Unreadable: left out, and tried again next time.
                        row = self.prepare(folder, key[1], path, stamp)
                    if row is not None:
                        rows.append(row)
            _insert_many(db, rows)
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise

    def _drop(self, db: Any, ident: int, key: tuple[int, str]) -> None:
        (data,) = db.execute("SELECT data FROM bodies WHERE id = ?", (ident,)).fetchone() or (None,)
        folder = self.database.config.folders[key[0]]
        if data is not None:
            qualified = folder.qualified(key[1])
            body = _unpack_body(data)
            db.execute(
                "INSERT INTO fts(fts, rowid, name, title, body) VALUES ('delete', ?, ?, ?, ?)",
                (ident, qualified, title_text(qualified, body), body),
            )
        db.execute("DELETE FROM successors WHERE newer = ?", (ident,))
        db.execute("DELETE FROM bodies WHERE id = ?", (ident,))
        if data is None:
            db.execute("DELETE FROM dupkeys WHERE id = ?", (ident,))  # not expected: a scan
        else:
            db.executemany(
                "DELETE FROM dupkeys WHERE key = ? AND id = ?",
                [(k, ident) for k in _stored_keys(folder, key[1], body)],
            )
        db.execute("DELETE FROM files WHERE id = ?", (ident,))

    def prepare(self, folder: Folder, name: str, path: str, stamp: tuple[int, int]) -> _Row | None:
        """What indexing one file writes, worked out without the database (None: the file
        cannot be read)."""
        body, body_line, hidden_refs = "", 0, True
        tags: tuple[str, ...] = ()
        supersedes: tuple[str, ...] = ()
        superseded_by: tuple[str, ...] = ()
        if stamp[1] <= READ_LIMIT_FACTOR * self.database.config.max_memory_bytes:
            # One open and read, no file object (a first indexing reads every file).
            data = _read_small(path, sys.maxsize)
            if data is None:
                return None
            text = data.decode("utf-8", errors="replace")
            try:
                doc = parse_document(text)
            except MemoryStoreError:
                return None
            body, body_line, tags = doc.body, doc.body_line, tuple(doc.tags)
            if self.seen is not None:
                self.seen.append((path, stamp, text, doc))
            # The body is the end of the text: what comes before it is not indexed.
            head = text[: len(text) - len(body)]
            hidden_refs = "mem:" in head or "[[" in head or SUPERSEDE_WORD in head
            replaced = relations(doc.metadata)
            supersedes, superseded_by = replaced.supersedes, replaced.superseded_by
        qualified = folder.qualified(name)
        return _Row(
            stamp,
            (
                self.database.ranks[folder.path],
                name,
                stamp[0],
                stamp[1],
                int(is_valid_name(name)),
                _tag_text(tags),
                body_line,
                int(hidden_refs),
                "\n".join(superseded_by),
            ),
            _pack_body(body),
            (qualified, title_text(qualified, body), body),
            supersedes,
            _stored_keys(folder, name, body),
        )


@dataclass(frozen=True)
class _Row:
    """What indexing one file writes (`Writer.prepare`)."""

    stamp: tuple[int, int]
    file: tuple[Any, ...]  # the `files` row but its id
    packed: bytes  # the body as `bodies` keeps it
    text: tuple[str, str, str]  # name, title and body for `fts`
    supersedes: tuple[str, ...]
    dupkeys: list[int]


# Keys looked up in one statement (SQLite allows 32,766 variables since 3.32; older ones 999).
LOOKUP_KEYS = 400


def _indexed_rows(
    db: Any, keys: Sequence[tuple[int, str]]
) -> dict[tuple[int, str], tuple[int, int, int]]:
    """The (id, mtime_ns, size) of each of these files the index holds, by key: a few
    statements for a batch, not one a file."""
    by_folder: dict[int, list[str]] = {}
    for folder, name in keys:
        by_folder.setdefault(folder, []).append(name)
    found: dict[tuple[int, str], tuple[int, int, int]] = {}
    for folder, names in by_folder.items():
        for start in range(0, len(names), LOOKUP_KEYS):
            part = names[start : start + LOOKUP_KEYS]
            marks = ",".join("?" * len(part))
            query = (
                f"SELECT id, name, mtime_ns, size FROM files WHERE folder = ? AND name IN ({marks})"
            )
            for ident, name, mtime_ns, size in db.execute(query, (folder, *part)):
                found[(folder, name)] = (ident, mtime_ns, size)
    return found


def _insert_many(db: Any, rows: Sequence[_Row]) -> None:
    """Insert these files' rows, a statement a table: the ids are given here (the write
    transaction is ours) so each table takes its rows in one `executemany`."""
    if not rows:
        return
    (last,) = db.execute("SELECT COALESCE(MAX(id), 0) FROM files").fetchone()
    idents = range(int(last) + 1, int(last) + 1 + len(rows))
    db.executemany(
        "INSERT INTO files(id, folder, name, mtime_ns, size, valid, tags, body_line, "
        "hidden_refs, superseded_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(ident, *row.file) for ident, row in zip(idents, rows, strict=True)],
    )
    db.executemany(
        "INSERT INTO bodies(id, data) VALUES (?, ?)",
        [(ident, row.packed) for ident, row in zip(idents, rows, strict=True)],
    )
    db.executemany(
        "INSERT INTO fts(rowid, name, title, body) VALUES (?, ?, ?, ?)",
        [(ident, *row.text) for ident, row in zip(idents, rows, strict=True)],
    )
    successors = [
        (older, ident) for ident, row in zip(idents, rows, strict=True) for older in row.supersedes
    ]
    if successors:
        db.executemany("INSERT INTO successors(older, newer) VALUES (?, ?)", successors)
    # In key order: the b-tree takes them page by page rather than at random.
    db.executemany(
        "INSERT INTO dupkeys VALUES (?, ?)",
        sorted(
            (key, ident) for ident, row in zip(idents, rows, strict=True) for key in row.dupkeys
        ),
    )
