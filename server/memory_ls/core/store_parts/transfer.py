"""Exporting memories as records and importing them (through the write path's checks)."""

from __future__ import annotations

import os
from typing import Any

from memory_ls.core.rules.document import iso, jsonable, parse_document, parse_timestamp
from memory_ls.core.rules.errors import InvalidArguments, InvalidName, ReadOnly, TooLarge
from memory_ls.core.rules.names import parse_name
from memory_ls.core.storage.fsio import read_text
from memory_ls.core.store_parts.arguments import SCOPES, _check_tags, _check_unicode, check_scope
from memory_ls.core.store_parts.history import History
from memory_ls.core.store_parts.writing import _document_for_save


def _check_records(records: object) -> list[dict[str, Any]]:
    """Validate every import record before anything is written."""
    if not isinstance(records, list):
        raise InvalidArguments("An import must be a list of records.")
    checked = []
    for index, record in enumerate(records):
        where = f"record {index + 1}"
        if not isinstance(record, dict):
            raise InvalidArguments(f"{where} is not an object.")
        if not isinstance(record.get("name"), str) or not isinstance(record.get("content"), str):
            raise InvalidArguments(f"{where} needs a string name and a string content.")
        _check_unicode(record["content"], f"{where}: content")
        try:
            parse_name(record["name"])
        except InvalidName as exc:
            raise InvalidName(f"{where}: {exc.message}") from exc
        _check_tags(record.get("tags"))
        if record.get("scope") not in (None, "project", "global"):
            raise InvalidArguments(f"{where}: scope must be project or global.")
        for key in ("created_at", "updated_at"):
            value = record.get(key)
            if value is not None and parse_timestamp(value) is None:
                raise InvalidArguments(f"{where}: {key} is not an ISO 8601 timestamp.")
        if record.get("metadata") is not None and not isinstance(record["metadata"], dict):
            raise InvalidArguments(f"{where}: metadata must be an object.")
        checked.append(record)
    return checked


class Transfer(History):
    """Export and import."""

    # ----- export and import ---------------------------------------------------------

    def export(self, scope: object = None) -> list[dict[str, Any]]:
        """Every resolved memory as a record (name, content, tags, timestamps, scope)."""
        where = check_scope(scope, allow_all=True)
        # Scope by scope: a global memory hidden by a project one of the same name is still
        # a memory of its own (reachable as `global/NAME`) and must not be lost.
        resolved = [item for s in ((where,) if where else SCOPES[:2]) for item in self.resolve(s)]
        records = []
        for item in resolved:
            memory = item.memory
            doc = self._safe_load(memory)
            if doc is None or not memory.valid:
                continue
            record: dict[str, Any] = {
                "name": memory.qualified,
                "content": doc.body,
                "tags": doc.tags,
                "created_at": iso(doc.metadata.get("created_at")),
                "updated_at": iso(doc.metadata.get("updated_at")),
                "scope": memory.scope,
            }
            extra = {
                k: v
                for k, v in doc.metadata.items()
                if k not in ("tags", "created_at", "updated_at")
            }
            if extra:
                # Not in the SPEC record shape, but dropping the author's keys would lose data.
                record["metadata"] = jsonable(extra)
            records.append(record)
        return records

    def import_records(self, records: object, *, overwrite: bool = False) -> dict[str, Any]:
        """Save exported records, routed like `save`; existing names skipped unless overwrite."""
        to_write: list[tuple[dict[str, Any], str]] = []
        skipped: list[str] = []
        # Every record is checked (name, route, size) before the first one is written.
        for index, record in enumerate(_check_records(records)):
            parsed = parse_name(record["name"])
            where = "global" if parsed.is_global else (record.get("scope") or "project")
            if not overwrite and self.locate_all(parsed.name, where):
                skipped.append(record["name"])
                continue
            path, folder, _by = self._route(parsed.name, parsed.is_global, where)
            if folder.read_only:
                raise ReadOnly(
                    f"record {index + 1}: {parsed.name!r} routes to the read-only folder "
                    f"{folder.path}; nothing was imported."
                )
            if os.path.exists(path):  # to be overwritten: its frontmatter must take the keys
                try:
                    _document_for_save(
                        parse_document(read_text(path)),
                        record["content"],
                        record.get("tags") or None,
                        record.get("metadata"),
                        None,
                        None,
                    )
                except InvalidArguments as exc:
                    raise InvalidArguments(
                        f"record {index + 1} ({parsed.name!r}): {exc.message} Nothing was imported."
                    ) from exc
            try:
                self._check_size(record["content"].encode("utf-8"), parsed.name)
            except TooLarge as exc:
                raise TooLarge(f"record {index + 1}: {exc.message} Nothing was imported.") from exc
            to_write.append((record, where))
        imported = [
            self.save(
                record["name"],
                record["content"],
                record.get("tags") or None,
                where,
                created_at=record.get("created_at"),
                updated_at=record.get("updated_at"),
                metadata=record.get("metadata"),
                restore=True,
            )
            for record, where in to_write
        ]
        return {"imported": imported, "skipped": skipped}
