"""The store behind each MCP tool call: settings fixed at start, folders resolved per call."""

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from memory_ls.config import Settings
from memory_ls.core.errors import MemoryStoreError
from memory_ls.core.folders import StoreConfig, resolve_store_config
from memory_ls.core.fulltext import SearchIndex, fingerprint
from memory_ls.core.listing import ScanCache
from memory_ls.core.store import Store
from memory_ls.mcp.answers import failure, refusal

if TYPE_CHECKING:
    from mcp.types import CallToolResult

log = logging.getLogger("memory_ls.mcp")


class StoreFactory:
    """Builds the Store for each tool call from settings fixed at start."""

    def __init__(self, settings: Settings, root: str) -> None:
        self.settings = settings
        self.root = root
        self.reported_missing: tuple[str, ...] | None = None
        # The full-text index of the configuration last used: kept open between calls.
        self.search_index: SearchIndex | None = None
        # Folder scans kept between calls while no directory changes (listings at 10,000
        # memories answer in milliseconds instead of a 0.1 s scan each).
        self.scan_cache = ScanCache()

    def config(self) -> StoreConfig:
        """Resolve the folders now; report configured folders that do not exist when that changes.

        Resolving is a handful of stat calls, so it is done on every call: an additional
        folder that appears while the agent works (a clone, a mount) is used at once.
        """
        config = resolve_store_config(self.settings, self.root)
        if config.missing_additional != self.reported_missing:
            self.reported_missing = config.missing_additional
            for missing in config.missing_additional:
                log.warning("memory-ls: additional folder %s does not exist; skipped", missing)
        return config

    def run(self, act: Callable[[Store], "CallToolResult"]) -> "CallToolResult":
        """Run one tool's action on a fresh Store; a refusal becomes a tool error."""
        try:
            config = self.config()
            if self.search_index is None or fingerprint(self.search_index.config) != fingerprint(
                config
            ):
                if self.search_index is not None:
                    self.search_index.close()
                self.search_index = SearchIndex(config, live=False)
            return act(Store(config, self.search_index, scan_cache=self.scan_cache))
        except MemoryStoreError as exc:
            return refusal(exc)
        except OSError as exc:
            # Not a refusal with a SPEC code (a full disk, a permission), but the agent should
            # still learn what failed rather than see a bare "Error executing tool".
            where = f" ({exc.filename})" if exc.filename else ""
            return failure(f"The file system refused the operation: {exc.strerror or exc}{where}.")
