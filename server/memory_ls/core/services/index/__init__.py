"""The name and link index of a store's memories (`MemoryIndex`), for completion and checks.

What lives here: `core`, the `MemoryIndex` itself (the files, the updates, the lookups);
`facts`, what is known of the files' contents (`FactsCache`: tags, update times, link
keys, previews, and the cache file kept between starts); `names`, the sorted names per
scope behind prefix, substring and typo lookups (`NameTable`); `paths`, which paths are
memory files by the scan's rules.

May import: the other services (`backlinks`, `diagnostics`), the storage and the rules;
`core` uses `facts`, `names` and `paths`, which know neither `core` nor each other
(import-linter's layers contract in pyproject.toml).
"""

from memory_ls.core.services.index.core import Entry, MemoryIndex, Update
from memory_ls.core.services.index.facts import (
    FactsRow,
    LinkRow,
    Metadata,
    Stamp,
    facts_cache_path,
    facts_of_text,
    make_preview,
    read_metadata,
)

__all__ = [
    "Entry",
    "FactsRow",
    "LinkRow",
    "MemoryIndex",
    "Metadata",
    "Stamp",
    "Update",
    "facts_cache_path",
    "facts_of_text",
    "make_preview",
    "read_metadata",
]
