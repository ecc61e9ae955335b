"""The memory store: names, folders, routing, reading and writing. No editor code here."""

from memory_ls.core.check import check_store
from memory_ls.core.diagnostics import Diagnostic, NameIndex, text_diagnostics
from memory_ls.core.errors import ERROR_CODES, MemoryStoreError
from memory_ls.core.folders import Folder, StoreConfig, resolve_store_config
from memory_ls.core.memory import MemoryFile
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
