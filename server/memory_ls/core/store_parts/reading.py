"""Reading a memory: its bytes, its document, the answer a reader gets."""

from __future__ import annotations

from typing import Any

from memory_ls.core.rules.conflicts import conflict_warning
from memory_ls.core.rules.document import Document, iso, parse_document
from memory_ls.core.rules.supersede import Successor
from memory_ls.core.services.related import related_memories, successors
from memory_ls.core.storage.fsio import read_bytes
from memory_ls.core.storage.gate import decode_for_read, version_of
from memory_ls.core.storage.memory import MemoryFile
from memory_ls.core.store_parts.listing import Listing


def read_result(memory: MemoryFile, data: bytes) -> dict[str, Any]:
    """The `memory.read` result of a memory's bytes: body, metadata, version, any warning."""
    text, warning = decode_for_read(data, memory.qualified)
    doc = parse_document(text)
    result = {
        "name": memory.qualified,
        "path": memory.path,
        "scope": memory.scope,
        "folder": memory.folder.path,
        "content": _as_serena_reads(doc),
        "tags": doc.tags,
        "createdAt": iso(doc.metadata.get("created_at")),
        "updatedAt": iso(doc.metadata.get("updated_at")),
        "readOnly": memory.read_only,
        "version": version_of(data),
    }
    # An unresolved merge conflict is said first: its two sides are not knowledge.
    conflict = conflict_warning(memory.qualified, text)
    warnings = [w for w in (conflict, warning) if w is not None]
    if warnings:
        result["warning"] = "\n".join(warnings)
    return result


def _as_serena_reads(doc: Document) -> str:
    """A memory's body as Serena's read_memory gives it: every line break `\n` (universal
    newlines), and a file's byte order mark where the body is the whole file."""
    body = doc.body if doc.has_frontmatter else doc.bom + doc.body
    return body.replace("\r\n", "\n").replace("\r", "\n") if "\r" in body else body


class Reading(Listing):
    """Reading memories."""

    def read_file(self, raw_name: object, scope: object = None) -> tuple[MemoryFile, bytes]:
        """The memory a read means and its file's bytes, read once."""
        memory = self.find_for_read(raw_name, scope)
        return memory, read_bytes(memory.path)

    def read(
        self, raw_name: object, scope: object = None, *, related: bool = False
    ) -> dict[str, Any]:
        """A memory's body and metadata (`memory.read`); a bare name may fall back to global.

        The result says which memories supersede it (`supersededBy`) and, with `related`,
        lists the memories one link away (`related`)."""
        return self.read_answer(*self.read_file(raw_name, scope), related=related)[0]

    def read_answer(
        self, memory: MemoryFile, data: bytes, *, related: bool = False
    ) -> tuple[dict[str, Any], list[Successor]]:
        """`read_result` of a memory's bytes with what the other memories say of it, and
        the memories that supersede it (for the note a reader sees first)."""
        result = read_result(memory, data)
        text, _warning = decode_for_read(data, memory.qualified)
        found = successors(self, memory, text)
        result["supersededBy"] = [successor.name for successor in found]
        if related:
            result["related"] = related_memories(self, memory, text)
        return result, found
