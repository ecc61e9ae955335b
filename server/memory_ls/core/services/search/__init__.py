"""Full-text search (SPEC 2.6): an SQLite FTS5 index on disk (the query language and the
ranking are core/services/relevance.py's).

The index holds each memory's words as written (relevance mode looks a word up under
every indexed word of its stem, found in FTS5's vocabulary), its name and first heading
in a column of their own (weighed above the body), and which memories it supersedes.

The index is one SQLite database per store configuration in the user's cache directory,
shared by the CLI, the MCP server and the language server (WAL, busy timeout). It never
answers for the disk: the language server keeps it current from its file events and
checks the stamps of what it returns; the CLI and the MCP server compare the size and
modification time of every file with the index before each search. Whatever goes wrong
with it (no FTS5 in this Python's SQLite, a corrupt, locked or unwritable cache), the
caller gets None and searches by reading every memory, with the same query semantics.

What lives here, one concern a module:

- `schema`: the tables, the fingerprint and path of an index, the packed listing
  (`Listing`) its manifest keeps, the stored bodies and near-duplicate keys;
- `files`: stating and reading many files at once (the forked file helper);
- `walk`: which files are memories (the walk of the folders);
- `database`: `Database`, the connection (made again when stale or broken), its lock and
  the manifest;
- `writing`: `Writer`, each file's rows worked out and written, or dropped;
- `worker`: the first indexing's worker processes (`worker_main`, started as
  `python -c` with `WORKER_CODE`) and the turns it gives searches (`Turns`);
- `query`: `Queries`, the searches and the other questions the index answers;
- `index`: `SearchIndex`, the facade callers use: its lifecycle (sync, apply, the first
  indexing) over the parts above, every question delegated to its `Queries`.

May import: `memory_ls.core.storage`, `memory_ls.core.rules` and the other services
(`relevance`, `backlinks`, `index`); never `memory_ls.core.store`, its parts nor the
operations (import-linter's layers contract). Within the package, each module imports
only those listed before it, but `query`, which names `SearchIndex` for type checking.
"""

from memory_ls.core.services.search.files import READ_LIMIT_FACTOR, start_file_helper
from memory_ls.core.services.search.index import SearchIndex
from memory_ls.core.services.search.query import Unindexed
from memory_ls.core.services.search.schema import (
    Listing,
    fingerprint,
    fts5_available,
    search_index_path,
)
from memory_ls.core.services.search.worker import BACKGROUND_SEARCH_SHARE, WORKER_FILES

__all__ = [
    "BACKGROUND_SEARCH_SHARE",
    "READ_LIMIT_FACTOR",
    "WORKER_FILES",
    "Listing",
    "SearchIndex",
    "Unindexed",
    "fingerprint",
    "fts5_available",
    "search_index_path",
    "start_file_helper",
]
