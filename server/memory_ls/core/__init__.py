"""The memory store without an editor: rules, storage, services, the `Store` and operations.

Layers, each importing only those below it (import-linter's contracts in pyproject.toml):

- `memory_ls.core.operations`: whole-store operations over the `Store` (the check, the
  graph, mentions, navigation, the live view, imports);
- `memory_ls.core.store`: the `Store` facade, which wires the search index, the journal
  and the listing over the storage;
- `memory_ls.core.store_parts`: the parts behind the facade, one module each for
  finding, listing, reading, searching, writing, moving, history and revert, transfer;
- `memory_ls.core.services`: indexes, diagnostics, the journal, related memories, formats
  and git's merge driver; they take memories and configurations, never the `Store`;
- `memory_ls.core.storage`: folders, files, scans, listings, locks, atomic writes, watching;
- `memory_ls.core.rules`: names, documents, links and the checks as functions of data.

No editor protocol (pygls, lsprotocol) and no front end (cli, lsp, mcp) is imported here.
This package re-exports what the front ends and tests use most.
"""

from memory_ls.core.operations.check import check_store
from memory_ls.core.rules.errors import ERROR_CODES, MemoryStoreError
from memory_ls.core.services.diagnostics import Diagnostic, NameIndex, text_diagnostics
from memory_ls.core.storage.folders import Folder, StoreConfig, resolve_store_config
from memory_ls.core.storage.memory import MemoryFile
from memory_ls.core.store import Store

__all__ = [
    "ERROR_CODES",
    "Diagnostic",
    "Folder",
    "MemoryFile",
    "MemoryStoreError",
    "NameIndex",
    "Store",
    "StoreConfig",
    "check_store",
    "resolve_store_config",
    "text_diagnostics",
]
