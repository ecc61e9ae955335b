"""The vectors' tables in the search index's database, and the matrix searched by cosine.

`vectors` holds each embedded text's vector by model and content hash, so a text indexed
again unchanged (a file touched, an edit undone) is not embedded again; `embedded` says
which text of which model each `files` row has, and loses the row when `files` does (a
trigger). A model change leaves the rows of the old model pending until embedded anew.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_ls.core.services.search.schema import _unpack_body

TABLES = ("vectors", "embedded", "vector_meta")
_SCHEMA = (
    # Unit-length float32 vectors, in this machine's byte order (a cache, as the index is).
    "CREATE TABLE IF NOT EXISTS vectors(model TEXT NOT NULL, hash BLOB NOT NULL, "
    "data BLOB NOT NULL, PRIMARY KEY(model, hash)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS embedded(id INTEGER PRIMARY KEY, model TEXT NOT NULL, "
    "hash BLOB NOT NULL)",
    # Bumped by every change to `embedded`: a process keeps its matrix until it moves.
    "CREATE TABLE IF NOT EXISTS vector_meta(id INTEGER PRIMARY KEY CHECK (id = 0), "
    "version INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO vector_meta VALUES (0, 0)",
    "CREATE TRIGGER IF NOT EXISTS files_unembed AFTER DELETE ON files "
    "BEGIN DELETE FROM embedded WHERE id = old.id; END",
    *(
        f"CREATE TRIGGER IF NOT EXISTS embedded_{event.lower()} AFTER {event} ON embedded "
        "BEGIN UPDATE vector_meta SET version = version + 1 WHERE id = 0; END"
        for event in ("INSERT", "DELETE", "UPDATE")
    ),
)

Matrix32 = npt.NDArray[np.float32]


def create_tables(db: Any) -> None:
    """Make the tables and triggers where they are missing (one transaction)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        for statement in _SCHEMA:
            db.execute(statement)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def text_hash(text: str) -> bytes:
    """What identifies an embedded text (16 bytes of BLAKE2b)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def embedded_text(qualified: str, body: str) -> str:
    """What is embedded of a memory: its name as words, then its body."""
    words = qualified.replace("/", " ").replace("-", " ").replace("_", " ")
    return f"{words}\n{body}"


@dataclass(frozen=True)
class Pending:
    """A `files` row without a vector of the model: what to embed, and what it was."""

    ident: int
    folder: int
    name: str
    packed: bytes  # its `bodies` data when read: stored only if still the same
    text: str
    hash: bytes


def pending(db: Any, model: str, qualified: Sequence[str], limit: int) -> list[Pending]:
    """Up to `limit` indexed memories without a vector of `model` (`qualified`: each
    folder's prefix, by position)."""
    rows = db.execute(
        "SELECT f.id, f.folder, f.name, b.data FROM files f JOIN bodies b ON b.id = f.id "
        "WHERE NOT EXISTS "
        "(SELECT 1 FROM embedded e WHERE e.id = f.id AND e.model = ?) LIMIT ?",
        (model, limit),
    ).fetchall()
    found = []
    for ident, folder, name, packed in rows:
        text = embedded_text(qualified[folder] + name, _unpack_body(packed))
        found.append(Pending(ident, folder, name, packed, text, text_hash(text)))
    return found


def known(db: Any, model: str, hashes: Sequence[bytes]) -> dict[bytes, bytes]:
    """The stored vectors of these texts, by hash."""
    found = {}
    for digest in hashes:
        row = db.execute(
            "SELECT data FROM vectors WHERE model = ? AND hash = ?", (model, digest)
        ).fetchone()
        if row is not None:
            found[digest] = row[0]
    return found


def unit(vector: Sequence[float]) -> Matrix32:
    """The vector as float32 of length 1 (zero stays zero)."""
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else array


def store(db: Any, model: str, done: Sequence[tuple[Pending, bytes]]) -> int:
    """Record the vectors of these rows (one transaction), each only if its row still
    holds the text embedded; how many were recorded."""
    db.execute("BEGIN IMMEDIATE")
    try:
        recorded = 0
        for row, data in done:
            db.execute(
                "INSERT OR IGNORE INTO vectors(model, hash, data) VALUES (?, ?, ?)",
                (model, row.hash, data),
            )
            cursor = db.execute(
                "INSERT OR REPLACE INTO embedded(id, model, hash) SELECT ?, ?, ? "
                "WHERE EXISTS (SELECT 1 FROM files f JOIN bodies b ON b.id = f.id "
                "WHERE f.id = ? AND f.folder = ? AND f.name = ? AND b.data = ?)",
                (row.ident, model, row.hash, row.ident, row.folder, row.name, row.packed),
            )
            recorded += cursor.rowcount
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return recorded


def forget_unused(db: Any, model: str) -> int:
    """Drop the vectors of `model` that no row holds any more; how many."""
    db.execute("BEGIN IMMEDIATE")
    try:
        cursor = db.execute(
            "DELETE FROM vectors WHERE model = ? AND hash NOT IN "
            "(SELECT hash FROM embedded WHERE model = ?)",
            (model, model),
        )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return int(cursor.rowcount)


def version(db: Any) -> int:
    """What changes whenever any process changes `embedded`."""
    return int(db.execute("SELECT version FROM vector_meta WHERE id = 0").fetchone()[0])


@dataclass(frozen=True)
class Matrix:
    """Every vector of a model with the `files` row it belongs to, searched by brute force
    (10,000 × 384 floats: a fraction of a millisecond)."""

    ids: npt.NDArray[np.int64]
    vectors: Matrix32

    @staticmethod
    def load(db: Any, model: str) -> Matrix:
        """The vectors of `model` now held for `files` rows."""
        rows = db.execute(
            "SELECT e.id, v.data FROM embedded e JOIN vectors v "
            "ON v.model = e.model AND v.hash = e.hash WHERE e.model = ?",
            (model,),
        ).fetchall()
        if not rows:
            return Matrix(np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32))
        width = max(len(data) for _i, data in rows)
        rows = [(ident, data) for ident, data in rows if len(data) == width]
        ids = np.fromiter((ident for ident, _d in rows), dtype=np.int64, count=len(rows))
        vectors = np.frombuffer(b"".join(data for _i, data in rows), dtype=np.float32)
        return Matrix(ids, vectors.reshape(len(rows), width // 4))

    def __len__(self) -> int:
        return len(self.ids)

    def nearest(self, query: Matrix32, count: int, floor: float) -> list[tuple[int, float]]:
        """The `count` rows most similar to `query` (a unit vector) with their cosine
        similarity, best first, none below `floor`."""
        if not len(self) or query.shape[0] != self.vectors.shape[1] or count < 1:
            return []
        scores = self.vectors @ query
        if count < len(scores):
            top = np.argpartition(-scores, count - 1)[:count]
        else:
            top = np.arange(len(scores))
        ordered = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self.ids[n]), float(scores[n])) for n in ordered if float(scores[n]) >= floor]
