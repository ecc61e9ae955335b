"""A memory's history from the change journal, and reverting a change."""

from __future__ import annotations

import os
from typing import Any

from memory_ls.core.rules.errors import (
    InvalidArguments,
    NotFound,
    OutsideStore,
    PossibleSecret,
    TooLarge,
)
from memory_ls.core.services.journal import MAX_KEPT_FILE_BYTES, Entry
from memory_ls.core.storage.fsio import atomic_write, ensure_folder, folder_lock
from memory_ls.core.storage.gate import check_content
from memory_ls.core.storage.memory import Change, MemoryFile
from memory_ls.core.store_parts.arguments import _check_str
from memory_ls.core.store_parts.base import _bytes_or_none, _versions
from memory_ls.core.store_parts.moving import Moving


class History(Moving):
    """History and revert."""

    # ----- history and undo ----------------------------------------------------------

    def history(self, raw_name: object) -> list[Entry]:
        """The journal's entries of a memory (a deleted one too), newest first."""
        return self.journal.history(_check_str(raw_name, "name").strip())

    def revert(self, raw_name: object, entry_id: object = None) -> dict[str, Any]:
        """Give a memory back the content it had before a journal entry (the latest by
        default), as a write of its own (journaled, so it can be reverted in turn)."""
        if entry_id is not None and (isinstance(entry_id, bool) or not isinstance(entry_id, int)):
            raise InvalidArguments("The entry to revert to must be a whole number.")
        name = _check_str(raw_name, "name").strip()
        entries = self.journal.history(name)
        if not entries:
            raise NotFound(f"The change journal holds no change of memory {name!r}.")
        entry = next((e for e in entries if entry_id in (None, e.id)), None)
        if entry is None:
            raise NotFound(
                f"Change {entry_id} of memory {name!r} is not in the journal (it holds "
                f"{', '.join(str(e.id) for e in entries)})."
            )
        if entry.action == "move" and entry.new_name is not None:
            answer = self.move(entry.new_name, entry.name)
            return {**answer, "revertedTo": entry.id}
        if entry.withheld and (entry.before_size or 0) > MAX_KEPT_FILE_BYTES:
            raise TooLarge(
                f"The content of {entry.name!r} before change {entry.id} was larger than "
                f"{MAX_KEPT_FILE_BYTES} bytes, so the journal did not keep it; nothing was changed."
            )
        if entry.withheld:
            raise PossibleSecret(
                f"The content of {entry.name!r} before change {entry.id} held what looks like "
                "a credential, so the journal did not keep it; nothing was changed."
            )
        return {**self._restore(entry.name, entry.path, entry.before), "revertedTo": entry.id}

    def _restore(self, qualified: str, path: str, data: bytes | None) -> dict[str, Any]:
        """Write `data` at the memory's path (None: remove it) with a save's checks."""
        owned = self.config.name_of(path)
        if owned is None or owned[0].qualified(owned[1]) != qualified:
            raise OutsideStore(
                f"{path} is no longer the file of memory {qualified!r} in the configured "
                "folders; nothing was changed."
            )
        folder, name = owned
        memory = MemoryFile(name, path, folder)
        self._check_access(name, "global" if folder.kind == "global" else "project", write=True)
        self._writable(memory)
        real, owner = self._write_target(path)
        with folder_lock(folder.real, owner.real):
            before = _bytes_or_none(path) if os.path.lexists(path) else None
            if data is None:
                if before is not None:
                    self._remove(memory)
                    self._journal("revert", memory, before, None)
                    self._record(Change("delete", memory, before, None))
                return {"name": qualified, "path": path, "deleted": before is not None}
            self._check_size(data, name)
            check_content(
                before,
                data,
                qualified=qualified,
                project=folder.scope == "project",
                secrets=self.config.secrets,
            )
            if before is None and folder.kind != "additional":
                ensure_folder(folder.path)
            if before != data:
                atomic_write(real, data, owner.real)
                self._journal("revert", memory, before, data)
        self._record(Change("save", memory, before, data))
        return {
            "name": qualified,
            "path": path,
            "created": before is None,
            **_versions(before, data),
        }
