"""Moving a memory: the plan, the move itself and the rewriting of references to it."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from memory_ls.core.layouts import IndexChange
from memory_ls.core.rules.errors import Exists, InvalidName, NotFound, OutsideStore, ReadOnly
from memory_ls.core.rules.names import lookup_names, parse_name
from memory_ls.core.rules.references import rename_references
from memory_ls.core.services.backlinks import serena_key
from memory_ls.core.storage.fsio import (
    atomic_write,
    ensure_folder,
    folder_lock,
    read_bytes,
    utf8_or_none,
)
from memory_ls.core.storage.gate import check_version
from memory_ls.core.storage.memory import Change, MemoryFile, MovePlan
from memory_ls.core.storage.routing import route_new
from memory_ls.core.store_parts.arguments import _check_version_arg
from memory_ls.core.store_parts.base import _bytes_or_none
from memory_ls.core.store_parts.writing import SIDE_EFFECT_LIMIT, Writing, _check_path_free


def _rewrite_references(text: str, plan: MovePlan) -> tuple[str, int]:
    """Rewrite the references a move rewrites (SPEC 2.6), nothing else of the text."""
    refs = rename_references(text, plan.source.qualified, plan.points_here)
    if not refs:
        return text, 0
    lines = text.split("\n")
    for ref in reversed(refs):
        line = lines[ref.line]
        lines[ref.line] = line[: ref.start] + plan.new_text(ref) + line[ref.end :]
    return "\n".join(lines), len(refs)


class Moving(Writing):
    """Moving memories."""

    def plan_move(self, raw_name: object, raw_new_name: object, scope: object = None) -> MovePlan:
        """Check a rename and work out where it goes; nothing is written (move and rename)."""
        # Serena's order: both names against the patterns, both names validated, then files.
        for write in (False, True):
            self._check_patterns(raw_name, scope, write=write)
            self._check_patterns(raw_new_name, None, write=write, existing=False)
        lookup_names(raw_name)  # any file Serena could have written can be renamed
        new = parse_name(raw_new_name)  # but a new name must follow SPEC 2.1
        new_scope = "global" if new.is_global else "project"
        source = self.find(raw_name, scope, write=True)
        self._writable(source)
        taken = [m for m in self.locate_all(new.name, new_scope) if m.path != source.path]
        if taken:
            raise Exists(f"A memory named {new.qualified!r} already exists at {taken[0].path}.")
        folder, _routed_by = route_new(
            new.name, new.is_global, self.config.primary, self.config.additional
        )
        if folder is None:
            if self.config.global_folder is None:
                raise OutsideStore("The global scope is disabled, so a global memory has no home.")
            folder = self.config.global_folder
        target = folder.file_for(new.name)
        if self.config.owner_of(target) is not folder:
            raise InvalidName(f"The name {new.name!r} would land in another configured folder.")
        if folder.read_only:
            raise ReadOnly(f"{new.name!r} routes to the read-only folder {folder.path}.")
        if target == source.path:
            raise Exists(f"Memory {source.name!r} is already at {target}.")
        _check_path_free(folder, new.name)
        self._write_target(target)
        # Which references point at the source is decided before it moves.
        first = self.locate_all(source.name, source.scope)
        return MovePlan(
            source=source,
            new_name=new.name,
            new_is_global=new.is_global,
            folder=folder,
            target=target,
            source_wins=bool(first) and first[0].path == source.path,
        )

    def move(
        self,
        raw_name: object,
        raw_new_name: object,
        scope: object = None,
        *,
        expected_version: object = None,
    ) -> dict[str, Any]:
        """Rename a memory, route it like a new save, rewrite references (`memory.move`)."""
        expected = _check_version_arg(expected_version)
        plan = self.plan_move(raw_name, raw_new_name, scope)
        # Who refers to the memory is asked before it moves (a link index keys by name).
        holders = self._reference_holders(plan)
        self.move_file(plan, expected)
        updated, rewritten = self._rewrite_all(plan, holders)
        moved = self.changes[-1]
        if updated and moved.action == "move":
            # Its own links to its old name were rewritten too: the findings are of that.
            with contextlib.suppress(OSError):
                self.changes[-1] = replace(moved, after=read_bytes(plan.target))
        index = self._index_after_move(plan)
        return {
            "name": plan.source.qualified,
            "newName": plan.new_qualified,
            "path": plan.target,
            "updatedReferences": updated,
            **(
                {
                    "rewritten": rewritten[:SIDE_EFFECT_LIMIT],
                    "moreRewritten": max(0, len(rewritten) - SIDE_EFFECT_LIMIT),
                }
                if rewritten
                else {}
            ),
            **({"index": index.as_dict()} if index is not None else {}),
        }

    def _index_after_move(self, plan: MovePlan) -> IndexChange | None:
        """The agent's index follows the move: its entry renamed, taken out (moved out of
        the primary folder) or added (moved into it)."""
        source, folder = plan.source, plan.folder
        if source.folder.kind == "primary" and folder.kind == "primary":
            with folder_lock(folder.real):
                return self._update_index(folder, source.path, "renamed", new_path=plan.target)
        if source.folder.kind == "primary":
            with folder_lock(source.folder.real):
                return self._update_index(source.folder, source.path, "removed")
        if folder.kind == "primary":
            with folder_lock(folder.real):
                text = (_bytes_or_none(plan.target) or b"").decode("utf-8", "replace")
                return self._update_index(folder, plan.target, "added", text=text)
        return None

    def move_file(self, plan: MovePlan, expected_version: str | None = None) -> None:
        """Move the memory's file as planned, bytes unchanged (references are not touched)."""
        source, folder = plan.source, plan.folder
        target, owner = self._write_target(plan.target)
        with folder_lock(source.folder.real, folder.real, owner.real):
            if os.path.lexists(target):
                raise Exists(f"A file already exists at {target}.")
            if not os.path.isfile(source.path):
                raise NotFound(f"Memory {source.name!r} is gone from {source.path}.")
            self._check_size(os.path.getsize(source.path), plan.new_name)
            if not os.path.islink(source.path):
                # Refused before anything is written: the source could not be removed.
                self._write_target(source.path)
            if folder.kind != "additional":
                ensure_folder(folder.path)
            with open(source.path, "rb") as handle:
                data = handle.read()
            check_version(expected_version, data, source.qualified)
            atomic_write(target, data, owner.real)
            self._remove(source)
            moved = MemoryFile(plan.new_name, plan.target, folder)
            self._journal("move", source, data, data, moved)
        self._record(Change("move", moved, data, data, moved_from=source))

    def _reference_holders(self, plan: MovePlan) -> list[MemoryFile] | None:
        """The memories that may refer to the one `plan` moves, at their paths after the
        move; None when only reading every memory can tell."""
        qualified = plan.source.qualified
        paths = self._link_sources(qualified, serena_key(qualified))
        if paths is None:
            return None
        holders: list[MemoryFile] = []
        for path in dict.fromkeys(plan.target if p == plan.source.path else p for p in paths):
            owned = self.config.name_of(path)
            if owned is not None:
                holders.append(MemoryFile(owned[1], path, owned[0]))
        return holders

    def _rewrite_all(
        self, plan: MovePlan, holders: Sequence[MemoryFile] | None = None
    ) -> tuple[int, list[str]]:
        """Rewrite references to the moved memory in every writable memory (in `holders`
        where a link index named them); return how many, and the names of the memories
        rewritten (sorted; the moved one by its new name). A memory the store may not write
        (read-only, or a link leading out of every folder) keeps its reference.

        `mem:OLD` is rewritten wherever Serena's rename rewrites it (anywhere in the file,
        fenced code included); `[[OLD]]` links where they are links (outside code). The
        files' bytes change only there: a rewritten reference is not an update.
        """
        total = 0
        rewritten: list[str] = []
        for memory in self.scan() if holders is None else holders:
            if memory.read_only:
                continue
            # Read first without the folder's lock (writes replace files whole): taking it
            # for each of 10,000 files that do not name the memory cost most of a move.
            try:
                text = utf8_or_none(read_bytes(memory.path))
            except OSError:
                continue
            if text is None or plan.source.name not in text:
                continue
            with folder_lock(memory.folder.real):
                try:
                    text = utf8_or_none(read_bytes(memory.path))
                except OSError:
                    continue
                if text is None or ("[[" not in text and "mem:" not in text):
                    continue
                new_text, count = _rewrite_references(text, plan)
                if not count:
                    continue
                try:
                    real, owner = self._write_target(memory.path)
                except (OutsideStore, ReadOnly):
                    # A link that leads out of the store, or a memory the patterns make
                    # read-only: not ours to rewrite. The memory has moved already; a
                    # refusal now would answer half a move as an error.
                    continue
                atomic_write(real, new_text, owner.real)
                self._journal("edit", memory, text.encode("utf-8"), new_text.encode("utf-8"))
                if self.wrote is not None:
                    self.wrote(memory.path)
                total += count
                rewritten.append(memory.qualified)
        return total, sorted(dict.fromkeys(rewritten))
