"""Importing an AI Coder store (SPEC 4): its notes read and checked, then written all or nothing."""

from __future__ import annotations

from typing import Any

from memory_ls.core.layouts.aicoder import SOURCES, prepare, read_aicoder_db, read_aicoder_json
from memory_ls.core.rules.errors import InvalidArguments
from memory_ls.core.store import Store


def import_aicoder(
    store: Store, source: str, path: str, *, overwrite: bool = False
) -> dict[str, Any]:
    """Import an AI Coder store (`aicoder-db` file or `aicoder-json` folder) into the store."""
    if source == "aicoder-db":
        notes = read_aicoder_db(path)
    elif source == "aicoder-json":
        notes = read_aicoder_json(path)
    else:
        raise InvalidArguments(f"unknown import source {source!r}; one of {', '.join(SOURCES)}.")
    prepared = prepare(notes, store.config.max_memory_bytes)
    result = store.import_records(prepared.records, overwrite=overwrite)
    result["rejected"] = [r.as_dict() for r in prepared.rejected]
    return result
