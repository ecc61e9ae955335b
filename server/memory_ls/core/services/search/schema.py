"""The index's format: its tables, fingerprint and path, the packed listing, stored bodies."""

from __future__ import annotations

import array
import contextlib
import functools
import hashlib
import json
import sys
import unicodedata
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

from memory_ls.core.rules.names import is_valid_name
from memory_ls.core.rules.similarity import heading_key, words
from memory_ls.core.rules.similarity import keys as duplicate_keys
from memory_ls.core.storage.folders import Folder, StoreConfig
from memory_ls.core.storage.fsio import user_cache_dir

# Imported from here by the other modules ("as": a name they may import), None when missing.
try:
    import sqlite3 as sqlite3
except ImportError:  # a Python built without it: search reads the files
    sqlite3 = None  # type: ignore[assignment]

# 2: files.hidden_refs, for renames; 3: dupkeys, for near-duplicates; 4: hidden_refs also
# marks frontmatter that may declare supersede relations; 5: the first heading as its own
# column, supersedes and superseded_by, the vocabulary of stems; 6: dupkeys in one
# b-tree, bodies as raw deflate (an index of another version is another file).
SCHEMA_VERSION = 6
# The rules of core/rules/similarity.py's keys: change with them (an index of others is another).
DUPLICATE_KEYS_VERSION = 2
# Near-duplicate keys are kept as their low 31 bits (the key's kind is in its low 2 bits).
DUPKEY_MASK = 0x7FFFFFFF
# unicode61 splits on everything but letters and digits; remove_diacritics 2 folds
# accents (the query side is folded the same way by `fold`).
TOKENIZER = "unicode61 remove_diacritics 2"
# Arrays are packed in this machine's byte order: a manifest from another never matches.
MANIFEST_FORMAT = f"listing-2-{sys.byteorder}"
_SCHEMA = (
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # One row per indexed file: `folder` is its folder's position in the configuration,
    # `name` its name in that folder as on disk; `tags` are newline-delimited;
    # `hidden_refs` is 1 when the file may hold a reference outside its indexed body
    # (`mem:`, `[[` or a supersede relation in its frontmatter, or a body too large to
    # index).
    "CREATE TABLE files(id INTEGER PRIMARY KEY, folder INTEGER NOT NULL, name TEXT NOT NULL, "
    "mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, valid INTEGER NOT NULL, "
    "tags TEXT NOT NULL, body_line INTEGER NOT NULL, hidden_refs INTEGER NOT NULL, "
    "superseded_by TEXT NOT NULL, UNIQUE(name, folder))",
    "CREATE INDEX files_hidden_refs ON files(id) WHERE hidden_refs",
    # The indexed body, compressed: FTS5 needs the old text to drop a row from a
    # contentless table (SQLite before 3.43), and the lines of a hit come from it.
    "CREATE TABLE bodies(id INTEGER PRIMARY KEY, data BLOB NOT NULL)",
    # `title`: the first heading, unless it only repeats the name (`relevance.title_text`).
    f"CREATE VIRTUAL TABLE fts USING fts5(name, title, body, content='', tokenize='{TOKENIZER}')",
    # The indexed words with the number of memories holding each: a stem's words are
    # found here.
    "CREATE VIRTUAL TABLE vocab USING fts5vocab(fts, 'row')",
    # `supersedes: OLDER` in a memory's frontmatter (qualified names, core/rules/supersede.py);
    # `superseded_by` is in `files` (newline-delimited).
    "CREATE TABLE successors(older TEXT NOT NULL, newer INTEGER NOT NULL)",
    "CREATE INDEX successors_older ON successors(older)",
    "CREATE INDEX successors_newer ON successors(newer)",
    # Each file's near-duplicate keys (core/rules/similarity.py, cut to DUPKEY_BITS): who may
    # nearly duplicate whom. One b-tree: a file's keys are dropped by computing them again
    # from its indexed body (a second index by id cost 30% of the table).
    "CREATE TABLE dupkeys(key INTEGER NOT NULL, id INTEGER NOT NULL, PRIMARY KEY(key, id))"
    " WITHOUT ROWID",
)
# What `files` holds, in one value: the `Listing` of the walk that found the files as
# indexed (marshal of MANIFEST_FORMAT and `Listing.packed`, deflated). A new process whose walk
# packs the same knows that nothing changed without a single object per file. Any change
# to `files` removes it (the triggers); the next sync that finds it missing writes it.
_MANIFEST_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS manifest(id INTEGER PRIMARY KEY CHECK (id = 0), data BLOB)",
    *(
        f"CREATE TRIGGER IF NOT EXISTS files_{event.lower()} AFTER {event} ON files "
        "BEGIN DELETE FROM manifest; END"
        for event in ("INSERT", "DELETE", "UPDATE")
    ),
)


def fingerprint(config: StoreConfig) -> str:
    """What decides which files are memories and what is read of them."""
    return json.dumps(
        {
            "schema": SCHEMA_VERSION,
            "tokenizer": TOKENIZER,
            "folders": [[f.path, f.kind] for f in config.folders],
            "ignored": [p.pattern for p in config.patterns.ignored],
            "maxMemoryBytes": config.max_memory_bytes,
            # Near-duplicate keys are dropped by computing them again: every process that
            # shares the file must compute them alike (Unicode data, the key rules).
            "unicode": unicodedata.unidata_version,
            "duplicateKeys": DUPLICATE_KEYS_VERSION,
        },
        sort_keys=True,
    )


def search_index_path(config: StoreConfig) -> str:
    """Where the search index of this store configuration lives."""
    key = hashlib.sha256(fingerprint(config).encode("utf-8", "surrogateescape")).hexdigest()
    return str(user_cache_dir() / "index" / f"{key[:32]}.search.sqlite3")


@functools.cache
def fts5_available() -> bool:
    """Whether this Python's SQLite has FTS5 compiled in."""
    if sqlite3 is None:
        return False
    try:
        with contextlib.closing(sqlite3.connect(":memory:")) as probe:
            probe.execute("CREATE VIRTUAL TABLE probe USING fts5(x)")
    except sqlite3.Error:
        return False
    return True


# A listing as the manifest keeps it: ranks, names joined by NUL (no file name holds
# one), mtimes and sizes, the numbers as packed arrays.
Packed = tuple[bytes, str, bytes, bytes]


@dataclass(frozen=True)
class Listing:
    """The memory files a walk found, in the walk's order, with their stamps."""

    ranks: array.array[int]  # the position of each file's folder in the configuration
    names: list[str]  # each file's name in its folder
    mtimes: array.array[int]
    sizes: array.array[int]  # negative: no file when stated (gone, a folder: FOLDER_SIZE)

    def rows(self) -> set[tuple[int, str, int, int]]:
        """(folder, name, mtime, size) of each file, as the index's `files` has them."""
        return {
            (rank, name, mtime, size)
            for rank, name, mtime, size in zip(
                self.ranks, self.names, self.mtimes, self.sizes, strict=True
            )
            if size >= 0
        }

    def packed(self) -> Packed:
        """The listing in a few values that compare in C (the same files in the same
        order with the same stamps pack the same)."""
        joined = "\0".join(self.names)
        return self.ranks.tobytes(), joined, self.mtimes.tobytes(), self.sizes.tobytes()

    @staticmethod
    def unpacked(packed: Packed) -> Listing:
        """The listing `packed` was made of (one that `_well_formed` accepts)."""
        ranks, mtimes, sizes = array.array("i"), array.array("q"), array.array("q")
        ranks.frombytes(packed[0])
        mtimes.frombytes(packed[2])
        sizes.frombytes(packed[3])
        # Counted by the ranks: no file and one named "" (a file `.md`) join the same.
        names = packed[1].split("\0") if ranks else []
        return Listing(ranks, names, mtimes, sizes)


def _well_formed(packed: tuple[object, ...]) -> bool:
    """Whether a packed listing has a rank, a name, an mtime and a size for each file."""
    ranks, joined, mtimes, sizes = packed
    if not (isinstance(ranks, bytes) and isinstance(joined, str)):
        return False
    if not (isinstance(mtimes, bytes) and isinstance(sizes, bytes)):
        return False
    width = array.array("i").itemsize
    count = len(ranks) // width
    if count == 0:
        return not (joined or mtimes or sizes)
    named = joined.count("\0") + 1
    return len(ranks) == width * named and len(mtimes) == len(sizes) == 8 * named


class IndexUnusable(Exception):
    """The index cannot answer now (missing FTS5, a broken, locked or unwritable cache)."""


def _stored_keys(folder: Folder, name: str, body: str) -> list[int]:
    """A file's near-duplicate keys as `dupkeys` holds them (none for an invalid name)."""
    if not is_valid_name(name):
        return []
    found = duplicate_keys(
        folder.qualified(name), folder.scope == "global", words(body), heading_key(body)
    )
    # Cut to 31 bits: 4 bytes a key in SQLite; a collision only proposes a pair to compare.
    return sorted({k & DUPKEY_MASK for k in found})


def _pack_body(body: str) -> bytes:
    """An indexed body as stored: raw deflate (no zlib header and checksum: 6 bytes a
    memory, most of them a few hundred bytes long)."""
    data = body.encode("utf-8", "surrogatepass")
    # A window no larger than the body loses nothing, and sets up ten times faster than
    # the default one (95 us a memory here, most of a first indexing's deflate time);
    # `_unpack_body`'s largest window reads every smaller one.
    bits = max(9, min(15, len(data).bit_length()))
    packer = zlib.compressobj(1, zlib.DEFLATED, -bits, max(1, bits - 7))
    return packer.compress(data) + packer.flush()


def _unpack_body(data: bytes) -> str:
    """The body `_pack_body` stored."""
    return zlib.decompress(data, -15).decode("utf-8", "surrogatepass")


def _tag_text(tags: Iterable[str]) -> str:
    return "\n" + "".join(tag.replace("\n", " ") + "\n" for tag in tags)
