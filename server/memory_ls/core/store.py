"""The memory store: finding, saving, editing, deleting, moving and searching memories.

Operations look at the disk, not at a cache, so a long-lived server and a CLI process
always agree on what exists; listings come from a directory scan (kept between calls by a
ScanCache only while no directory changed, core/storage/listing.py).

`Store` is a facade over the parts in `memory_ls.core.store_parts` (one module each for
reading, listing, searching, writing, moving, history and revert, export and import);
this module re-exports the helpers the front ends use.
"""

from __future__ import annotations

from memory_ls.core.store_parts.arguments import check_scope
from memory_ls.core.store_parts.listing import in_topic
from memory_ls.core.store_parts.reading import read_result
from memory_ls.core.store_parts.transfer import Transfer

__all__ = ["Store", "check_scope", "in_topic", "read_result"]


class Store(Transfer):
    """One store: the configured folders and the rules over them."""

    def fork(self) -> Store:
        """A store on the same folders and indexes with its own record of changes."""
        return Store(
            self.config,
            self.search_index,
            self.reference_sources,
            self.scan_cache,
            self.wrote,
            self.journal,
            self.source,
            self.name_words,
        )
