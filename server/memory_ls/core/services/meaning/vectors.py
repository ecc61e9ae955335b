"""The vectors' tables in the search index's database, and the matrix searched by cosine.

A memory is embedded as several texts (`texts_of`): its summary (its name as words and its
title) and its passages (its name, then as much of its body as a small model reads, 256
tokens for all-MiniLM-L6-v2: a longer body is cut at its headings and paragraphs into
several). A search scores a memory by its best passage and its summary together
(`SUMMARY_WEIGHT`): a question names what a note is about as often as what it says.

`vectors` holds each embedded memory's vectors by model and content hash, so a memory
indexed again unchanged (a file touched, an edit undone) is not embedded again; `embedded`
says which memory of which model each `files` row has, and loses the row when `files` does
(a trigger). A model change leaves the rows of the old model pending until embedded anew;
so does a change of what is embedded (`LAYOUT`, part of the model's key).
"""

from __future__ import annotations

import hashlib
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_ls.core.rules.titles import title_of
from memory_ls.core.services.search.schema import _unpack_body

# What is embedded of a memory and how it is stored: part of the model's key in the tables
# (`model_key`), so that vectors of another layout are embedded anew, never misread.
# 2: a summary and passages (1: the name and the body, one vector, cut by the model).
LAYOUT = 2
# A search's score of a memory: this share of its summary's cosine similarity to the query,
# the rest its best passage's. bench/retrieval with all-MiniLM-L6-v2, recall@5 of the 12
# paraphrases sharing no content word with their note / of the 53 task sentences: passages
# alone (0) 67% / 94%, 0.3 71% / 93%, 0.4 79% / 93%, 0.5 79% / 92%.
SUMMARY_WEIGHT = 0.4
# Characters of a memory's body in one passage: about what a small model reads (256 tokens
# of all-MiniLM-L6-v2 are 800 to 1,100 characters of English, fewer of code).
PASSAGE_CHARS = 1000
# Passages embedded of a memory at most (a larger one is found by its first 16,000
# characters and its summary: bounded work however large).
MAX_PASSAGES = 16

TABLES = ("vectors", "embedded", "vector_meta")
_SCHEMA = (
    # A memory's vectors (`pack`): their count, then each as unit-length float32 in this
    # machine's byte order (a cache, as the index is).
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


def model_key(provider: str, model: str) -> str:
    """How the tables name a provider's model's vectors of this layout."""
    return f"{provider}:{model}" if LAYOUT == 1 else f"{provider}:{model}#{LAYOUT}"


def _name_words(qualified: str) -> str:
    return qualified.replace("/", " ").replace("-", " ").replace("_", " ")


def embedded_text(qualified: str, body: str) -> str:
    """A memory as one text: its name as words, then its body (its first passage, when
    the body is short)."""
    return f"{_name_words(qualified)}\n{body}"


def summary_text(qualified: str, body: str) -> str:
    """What a memory is about: its name as words, then its title (its first heading, else
    its first line)."""
    return f"{_name_words(qualified)}\n{title_of(body) or ''}"


# Where a block of a body ends: a blank line, or a line before a heading.
_BLOCK_BREAK = re.compile(r"\n[ \t]*\n|\n(?=#{1,6} )")


def passages_of(body: str, size: int | None = None) -> list[str]:
    """The body cut into passages of `size` characters at most (`PASSAGE_CHARS`), as they
    are in it: whole blocks (between blank lines, a heading beginning one) as many as fit,
    a longer block at its lines, a longer line at `size`. The whole body when it is short;
    the first `MAX_PASSAGES` of a very long one."""
    size = PASSAGE_CHARS if size is None else size
    if len(body) <= size:
        return [body]
    ends = [match.end() for match in _BLOCK_BREAK.finditer(body)]
    blocks: list[str] = []
    for start, end in zip([0, *ends], [*ends, len(body)], strict=True):
        if blocks and blocks[-1].lstrip().startswith("#") and blocks[-1].count("\n") <= 2:
            blocks[-1] += body[start:end]  # a heading stays with what follows it
        else:
            blocks.append(body[start:end])
    pieces: list[str] = []
    for block in blocks:
        if len(block) <= size:
            pieces.append(block)
            continue
        for line in block.splitlines(keepends=True):
            pieces += [line[at : at + size] for at in range(0, len(line), size)]
    found: list[str] = []
    current = ""
    for piece in pieces:
        if current and len(current) + len(piece) > size:
            found.append(current)
            current = ""
        current += piece
    found.append(current)
    return [passage for passage in found if passage.strip()][:MAX_PASSAGES] or [body[:size]]


def texts_of(qualified: str, body: str) -> tuple[str, ...]:
    """What is embedded of a memory: its summary, then each passage after its name."""
    return (
        summary_text(qualified, body),
        *(embedded_text(qualified, passage) for passage in passages_of(body)),
    )


@dataclass(frozen=True)
class Pending:
    """A `files` row without a vector of the model: what to embed, and what it was."""

    ident: int
    folder: int
    name: str
    packed: bytes  # its `bodies` data when read: stored only if still the same
    texts: tuple[str, ...]  # `texts_of`: the summary, then the passages
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
        texts = texts_of(qualified[folder] + name, _unpack_body(packed))
        found.append(Pending(ident, folder, name, packed, texts, text_hash("\0".join(texts))))
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


def pack(found: Sequence[Sequence[float]]) -> bytes:
    """A memory's vectors as stored: how many (4 bytes, little-endian), then each as unit
    float32."""
    return struct.pack("<I", len(found)) + b"".join(unit(vector).tobytes() for vector in found)


def _shape(data: bytes) -> tuple[int, int] | None:
    """(vectors, floats each) of `pack`'s data; None when it is not of this layout."""
    if len(data) < 4:
        return None
    count = int.from_bytes(data[:4], "little")
    floats = (len(data) - 4) // 4
    if count < 1 or floats % count or 4 + 4 * floats != len(data):
        return None
    return count, floats // count


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
        forgotten = int(cursor.rowcount)
        # Those of a model (or layout) no row holds any more: all embedded anew since.
        cursor = db.execute(
            "DELETE FROM vectors WHERE model <> ? AND model NOT IN (SELECT model FROM embedded)",
            (model,),
        )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return forgotten + int(cursor.rowcount)


def version(db: Any) -> int:
    """What changes whenever any process changes `embedded`."""
    return int(db.execute("SELECT version FROM vector_meta WHERE id = 0").fetchone()[0])


@dataclass(frozen=True)
class Matrix:
    """Every memory's vectors of a model with the `files` row it belongs to, searched by
    brute force (10,000 memories × 384 floats: a millisecond or two).

    `passages` holds each memory's passages blended with its summary (`SUMMARY_WEIGHT`),
    its rows from `starts[n]` on for the `n`th memory; `summaries` one row a memory."""

    ids: npt.NDArray[np.int64]
    summaries: Matrix32
    passages: Matrix32
    starts: npt.NDArray[np.int64]

    @staticmethod
    def load(db: Any, model: str) -> Matrix:
        """The vectors of `model` now held for `files` rows."""
        rows = db.execute(
            "SELECT e.id, v.data FROM embedded e JOIN vectors v "
            "ON v.model = e.model AND v.hash = e.hash WHERE e.model = ?",
            (model,),
        ).fetchall()
        # Each row's count of vectors and width read from its bytes, then one array of all
        # (not one a row): a reload at 10,000 memories 0.24-0.27 s, 0.17 s of it SQLite's
        # 41 MB (one vector a memory: 0.14 s in all; one array a row: 0.25-0.45 s).
        shapes = [_shape(data) for _ident, data in rows]
        # One width (a model's); rows of another (a model that changed under its name) left out.
        width = max((shape[1] for shape in shapes if shape is not None), default=0)
        kept = [
            (ident, data, shape[0])
            for (ident, data), shape in zip(rows, shapes, strict=True)
            if shape is not None and shape[1] == width and shape[0] >= 2
        ]
        if not kept:
            empty = np.zeros((0, width), dtype=np.float32)
            return Matrix(np.zeros(0, dtype=np.int64), empty, empty, np.zeros(0, dtype=np.int64))
        ids = np.fromiter((ident for ident, _d, _c in kept), dtype=np.int64, count=len(kept))
        every = np.frombuffer(
            b"".join(memoryview(data)[4:] for _i, data, _c in kept), dtype=np.float32
        ).reshape(-1, width)
        sizes = np.fromiter((count for _i, _d, count in kept), dtype=np.int64, count=len(kept))
        firsts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        summaries = every[firsts]
        is_passage = np.ones(len(every), dtype=bool)
        is_passage[firsts] = False
        counts = sizes - 1
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        weight = np.float32(SUMMARY_WEIGHT)
        blended = every[is_passage]  # a copy, blended in place
        blended *= 1 - weight
        blended += weight * np.repeat(summaries, counts, axis=0)
        return Matrix(ids, summaries, blended, starts)

    def __len__(self) -> int:
        return len(self.ids)

    def nearest(
        self, query: Matrix32, count: int, floor: float, *, summary: bool = True
    ) -> list[tuple[int, float]]:
        """The `count` memories most similar to `query` (a unit vector) with their score,
        best first, none below `floor`: by default their best passage's cosine similarity
        blended with their summary's; with `summary` False, their best passage's alone."""
        if not len(self) or query.shape[0] != self.summaries.shape[1] or count < 1:
            return []
        rows = self.passages @ query
        if not summary:
            # The blend undone: the passage's own similarity.
            weight = np.float32(SUMMARY_WEIGHT)
            counts = np.diff(np.append(self.starts, len(rows)))
            own = np.repeat(self.summaries @ query, counts)
            rows = (rows - weight * own) / (1 - weight)
        scores = rows if len(rows) == len(self) else np.maximum.reduceat(rows, self.starts)
        if count < len(scores):
            top = np.argpartition(-scores, count - 1)[:count]
        else:
            top = np.arange(len(scores))
        ordered = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self.ids[n]), float(scores[n])) for n in ordered if float(scores[n]) >= floor]
