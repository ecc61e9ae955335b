"""Writing memories: routing a new name, saving, editing and deleting."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from memory_ls.core.layouts import IndexChange, layout_named
from memory_ls.core.rules.document import (
    Document,
    carry_keys,
    parse_document,
    parse_timestamp,
    render,
    update_document,
    with_keys,
)
from memory_ls.core.rules.errors import (
    Exists,
    InvalidArguments,
    InvalidName,
    OutsideStore,
    ReadOnly,
)
from memory_ls.core.rules.names import (
    ParsedName,
    name_problem,
    normalize_input,
    parse_name,
    qualify,
)
from memory_ls.core.rules.references import find_references
from memory_ls.core.rules.replace import replace_text
from memory_ls.core.storage.folders import Folder
from memory_ls.core.storage.fsio import (
    atomic_write,
    ensure_folder,
    folder_lock,
    read_bytes,
    utf8_or_none,
)
from memory_ls.core.storage.gate import check_content, check_version, version_of
from memory_ls.core.storage.memory import LISTING_READ_LIMIT, Change, MemoryFile
from memory_ls.core.storage.routing import route_new, unknown_prefix
from memory_ls.core.store_parts.arguments import (
    _check_flag,
    _check_str,
    _check_tags,
    _check_version_arg,
    check_scope,
)
from memory_ls.core.store_parts.base import _bytes_or_none, _versions
from memory_ls.core.store_parts.searching import Searching

# Memories a delete's or a rename's answer names at most (the rest are counted).
SIDE_EFFECT_LIMIT = 20


def _check_path_free(folder: Folder, name: str) -> None:
    """Refuse a new memory whose file is a folder on disk, or whose topic folder is a file."""
    current = folder.path
    for segment in name.split("/")[:-1]:
        current = os.path.join(current, segment)
        if os.path.lexists(current) and not os.path.isdir(current):
            raise Exists(
                f"{current} is a file, so the topic folder of {name!r} cannot be made there; "
                "choose another name."
            )
    path = folder.file_for(name)
    if os.path.isdir(path):
        raise Exists(f"{path} is a folder, so memory {name!r} cannot be written there.")


def _document_for_save(
    old: Document | None,
    text: str,
    tags: list[str] | None,
    metadata: Mapping[str, Any] | None,
    created_at: object,
    updated_at: object,
) -> Document:
    """The document a save writes: the content as given, the managed keys kept right.

    Content with its own frontmatter keeps that block as written (comments, order,
    quoting, byte order mark), with the memory's other keys added (SPEC 2.5). Plain
    content goes under the memory's existing block, or is the whole file.
    """
    given = parse_document(text)
    extra: dict[str, Any] = dict(metadata or {})
    if given.has_frontmatter and given.problem is None:
        content_tags = given.metadata.get("tags")
        if tags is None and isinstance(content_tags, list):
            tags = [str(t) for t in content_tags]
        order: list[str] = []
        if old is not None and old.problem is None:
            order = list(old.metadata)
            left_out = [k for k in order if k not in given.metadata and k != "updated_at"]
            # Keys the content left out come back as they were written and where they
            # were: a reordered or reformatted block is a change git must merge.
            given = _with_old_lines(given, old, [k for k in left_out if k not in extra], order)
            for key in left_out:
                if key not in given.metadata:
                    extra.setdefault(key, old.metadata[key])
        stamp = updated_at if updated_at is not None else given.metadata.get("updated_at")
        return update_document(
            given,
            given.body,
            tags=tags,
            extra=extra or None,
            now=parse_timestamp(stamp),
            order=order,
        )
    if old is not None and old.problem is not None and (tags is not None or extra):
        # Keys cannot be merged into a block that does not parse, and replacing the block
        # would lose what the author wrote there: refuse rather than drop them silently.
        keys = ", ".join(sorted({*extra, *(["tags"] if tags is not None else [])}))
        raise InvalidArguments(
            f"{keys} cannot be set: the memory's frontmatter does not parse, and it is kept "
            f"as written (line {old.problem.line + 1}: {old.problem.message}) Save without "
            f"{keys}, or fix the frontmatter first; nothing was written."
        )
    stamp = updated_at if updated_at is not None else extra.get("updated_at")
    extra.pop("created_at", None)
    extra.pop("updated_at", None)
    # A plain memory is replaced whole (its byte order mark too); a block stays.
    base = old if old is not None and old.has_frontmatter else None
    return update_document(base, text, tags=tags, extra=extra or None, now=parse_timestamp(stamp))


def _with_old_lines(given: Document, old: Document, keys: list[str], order: list[str]) -> Document:
    """The written document with the old block's lines of `keys` put back as they were
    (unchanged when they cannot be carried over exactly)."""
    if not keys:
        return given
    raw = carry_keys(given.raw_frontmatter or "", old.raw_frontmatter or "", keys, order)
    if raw is None:
        return given
    carried = parse_document(render(replace(given, raw_frontmatter=raw)))
    same = all(
        key in carried.metadata and carried.metadata[key] == old.metadata[key] for key in keys
    )
    return carried if carried.problem is None and same else given


def _with_timestamps(doc: Document, created_at: object, updated_at: object) -> Document:
    """An imported memory gets exactly the timestamps it was exported with (or none)."""
    changes: dict[str, Any] = {}
    remove: list[str] = []
    for key, value in (("created_at", created_at), ("updated_at", updated_at)):
        stamp = parse_timestamp(value)
        if stamp is None:
            remove.append(key)
        else:
            changes[key] = stamp
    if doc.raw_frontmatter is None and not changes:
        return doc
    base = doc if doc.raw_frontmatter is not None else Document(body=doc.body, raw_frontmatter="")
    return with_keys(base, changes, remove)


class Writing(Searching):
    """Saving, editing and deleting memories."""

    # ----- routing and saving --------------------------------------------------------

    def _route(self, name: str, is_global: bool, scope: str | None) -> tuple[str, Folder, str]:
        """(path, folder, routedBy) for a save of `name`, existing memories first."""
        where = self._scope_for(is_global, scope)
        self._check_access(name, where, write=False)
        hits = self.locate_all(name, where)
        if hits:
            # A dry run refuses what the write would: a link that leads out.
            if not hits[0].folder.read_only:
                self._write_target(hits[0].path)
            return hits[0].path, hits[0].folder, "existing"
        problem = name_problem(name)
        if problem:
            # Found only as an existing file (`_name_for_save`); a new file needs a valid name.
            raise InvalidName(f"Invalid memory name {name!r} for a new memory: {problem}.")
        folder, routed_by = route_new(
            name, where == "global", self.config.primary, self.config.additional
        )
        if folder is None:
            if self.config.global_folder is None:
                raise OutsideStore("The global scope is disabled, so a global memory has no home.")
            folder = self.config.global_folder
        path = folder.file_for(name)
        owner = self.config.owner_of(path)
        if owner is not folder:
            raise InvalidName(
                f"The name {name!r} would land inside the folder {owner.path if owner else path}, "
                "which is configured separately; choose another topic name."
            )
        _check_path_free(folder, name)
        # A dry run (route) must refuse what the write would: a link on the way out.
        if not folder.read_only:
            self._write_target(path)
        return path, folder, routed_by

    def _name_for_save(self, raw_name: object, scope: object) -> ParsedName:
        """A save's name: an existing file is written in place under its own name (one
        Serena wrote, `what?` or ` padded `, too); a new memory's name must follow SPEC 2.1."""
        try:
            meant = self._meant(raw_name, scope)
            where = self._scope_for(meant.is_global, check_scope(scope))
        except (InvalidName, InvalidArguments):
            return parse_name(raw_name)  # the save says what is wrong, in its order
        normalised = isinstance(raw_name, str) and meant.name == normalize_input(raw_name)[0]
        if (normalised and name_problem(meant.name) is None) or self.locate_all(meant.name, where):
            return meant  # a valid new name, or a file that exists (written in place)
        return parse_name(raw_name)

    def route(self, raw_name: object, scope: object = None) -> dict[str, Any]:
        """Where a save of this name would go, without writing (`memory.route`)."""
        parsed = self._name_for_save(raw_name, scope)
        path, folder, routed_by = self._route(parsed.name, parsed.is_global, check_scope(scope))
        qualified = qualify(parsed.name, folder.kind == "global")
        return {
            "name": qualified,
            "path": path,
            "folder": folder.path,
            "routedBy": routed_by,
            "exists": routed_by == "existing",
            # What a save would be told, said before anyone types the content.
            "readOnly": folder.read_only or self.config.patterns.is_read_only(qualified),
            "unknownPrefix": (
                unknown_prefix(parsed.name, self.config.additional)
                if folder.scope == "project"
                else None
            ),
        }

    def save(
        self,
        raw_name: object,
        content: object,
        tags: object = None,
        scope: object = None,
        *,
        created_at: object = None,
        updated_at: object = None,
        metadata: Mapping[str, Any] | None = None,
        restore: bool = False,
        expected_version: object = None,
        create_only: object = False,
    ) -> dict[str, Any]:
        """Create or overwrite a memory, routed by SPEC 2.4 (`memory.save`).

        `expected_version` makes an overwrite conditional on the version read; `create_only`
        refuses to replace an existing memory. Content `check` would call an error, and new
        possible secrets (unless the store only warns), are refused.
        """
        parsed = self._name_for_save(raw_name, scope)
        text = _check_str(content, "content")
        tag_list = _check_tags(tags)
        expected = _check_version_arg(expected_version)
        only_new = _check_flag(create_only, "createOnly")
        where = self._scope_for(parsed.is_global, check_scope(scope))
        self._check_access(parsed.name, where, write=True)
        self._check_size(text.encode("utf-8"), parsed.name)
        for _attempt in range(3):
            path, folder, routed_by = self._route(parsed.name, parsed.is_global, where)
            if only_new and routed_by == "existing":
                raise self._exists_error(parsed.qualified, path)
            if folder.read_only:
                raise ReadOnly(
                    f"Memory {parsed.name!r} routes to the read-only folder {folder.path}; "
                    "nothing was written."
                )
            real, owner = self._write_target(path)
            with folder_lock(folder.real, owner.real):
                # Someone may have created the memory elsewhere since we routed: route again.
                if self._route(parsed.name, parsed.is_global, where)[0] != path:
                    continue
                existed = os.path.exists(path)
                before = read_bytes(path) if existed else None
                qualified = qualify(parsed.name, folder.kind == "global")
                check_version(expected, before, qualified)
                if only_new and before is not None:
                    raise self._exists_error(qualified, path)
                old = parse_document(before.decode("utf-8", "replace")) if before else None
                doc = _document_for_save(old, text, tag_list, metadata, created_at, updated_at)
                if restore:
                    doc = _with_timestamps(doc, created_at, updated_at)
                data = render(doc).encode("utf-8")
                self._check_size(data, parsed.name)
                check_content(
                    before,
                    data,
                    qualified=qualified,
                    project=folder.scope == "project",
                    secrets=self.config.secrets,
                )
                if not existed and folder.kind != "additional":
                    ensure_folder(folder.path)
                atomic_write(real, data, owner.real)
                memory = MemoryFile(parsed.name, path, folder)
                self._journal("save", memory, before, data)
                index = self._update_index(folder, path, "added", text=data.decode("utf-8"))
            self._record(Change("save", memory, before, data))
            return {
                "name": qualified,
                "path": path,
                "scope": folder.scope,
                "folder": folder.path,
                "created": not existed,
                "routedBy": routed_by,
                **_versions(before, data),
                **({"index": index.as_dict()} if index is not None else {}),
            }
        raise OutsideStore(f"Memory {parsed.name!r} kept moving while it was saved; try again.")

    def _exists_error(self, qualified: str, path: str) -> Exists:
        """`exists` for a create-only save, with what to do instead."""
        try:
            version = f" (version {version_of(read_bytes(path))})"
        except OSError:
            version = ""
        return Exists(
            f"Memory {qualified!r} already exists at {path}{version}; create_only refuses to "
            "replace it. Read it and edit it, write it with its version as expected_version "
            "to replace it, or choose another name. Nothing was written."
        )

    # ----- reading -------------------------------------------------------------------

    def _load_for_write(self, memory: MemoryFile, data: bytes) -> tuple[str, Document]:
        """Parse a memory about to be rewritten; refuse files that are not UTF-8."""
        text = utf8_or_none(data)
        if text is None:
            raise ReadOnly(
                f"Memory {memory.name!r} is not UTF-8 text; it is left untouched so no byte is "
                "lost. Fix or re-save it as a whole."
            )
        return text, parse_document(text)

    # ----- editing, deleting, moving -------------------------------------------------

    def edit(
        self,
        raw_name: object,
        scope: object = None,
        *,
        content: object = None,
        needle: object = None,
        replacement: object = None,
        mode: object = "literal",
        allow_multiple: object = False,
        expected_version: object = None,
    ) -> dict[str, Any]:
        """Change a memory in place: replace its body, or a needle (`memory.edit`)."""
        expected = _check_version_arg(expected_version)
        if content is None and needle is None:
            raise InvalidArguments("edit needs either content, or needle and replacement.")
        if content is not None and needle is not None:
            raise InvalidArguments("edit takes content or needle, not both.")
        if content is not None:
            _check_str(content, "content")
        else:
            _check_str(needle, "needle")
            _check_str(replacement, "replacement")
            if needle == "":
                raise InvalidArguments("needle must not be empty.")
        if mode not in ("literal", "regex"):
            raise InvalidArguments(f"mode must be literal or regex, not {mode!r}.")
        if not isinstance(allow_multiple, bool):
            raise InvalidArguments("allowMultiple must be true or false.")
        # As Serena: a missing memory is not-found before the needle is looked at.
        memory = self.find(raw_name, scope, write=True)
        self._writable(memory)
        real, owner = self._write_target(memory.path)
        with folder_lock(memory.folder.real, owner.real):
            memory = self.find(raw_name, scope, write=True)
            before = read_bytes(memory.path)
            check_version(expected, before, memory.qualified)
            source, doc = self._load_for_write(memory, before)
            if isinstance(content, str):
                doc, count = update_document(doc, content), 1
            else:
                assert isinstance(needle, str) and isinstance(replacement, str)
                # The needle searches the whole file, frontmatter included, as Serena's does.
                text, count = replace_text(
                    source, needle, replacement, str(mode), allow_multiple, memory.qualified
                )
                edited = parse_document(text)
                # Frontmatter that still parses keeps updated_at current (SPEC 2.5).
                doc = edited if edited.problem else update_document(edited, edited.body)
            data = render(doc).encode("utf-8")
            self._check_size(data, memory.name)
            check_content(
                before,
                data,
                qualified=memory.qualified,
                project=memory.scope == "project",
                secrets=self.config.secrets,
            )
            atomic_write(real, data, owner.real)
            self._journal("edit", memory, before, data)
        self._record(Change("edit", memory, before, data))
        return {
            "name": memory.qualified,
            "path": memory.path,
            "replacements": count,
            **_versions(before, data),
        }

    def delete(
        self, raw_name: object, scope: object = None, *, expected_version: object = None
    ) -> dict[str, Any]:
        """Remove a memory from wherever it is found (`memory.delete`)."""
        expected = _check_version_arg(expected_version)
        memory = self.find(raw_name, scope, write=True)
        self._writable(memory)
        # Who links to the memory is asked before it goes, as a move asks (a link index
        # keys by name).
        sources = self._link_sources(memory.qualified)
        with folder_lock(memory.folder.real):
            memory = self.find(raw_name, scope, write=True)
            before = read_bytes(memory.path) if expected is not None else None
            check_version(expected, before, memory.qualified)
            kept = before if before is not None else _bytes_or_none(memory.path)
            self._remove(memory)
            if kept is not None:
                self._journal("delete", memory, kept, None)
            index = self._update_index(memory.folder, memory.path, "removed")
        self._record(Change("delete", memory, before, None))
        broken = self._broken_links(memory, sources)
        result: dict[str, Any] = {"name": memory.qualified, "path": memory.path}
        if broken:  # a delete nobody's links named says nothing more
            result["brokenLinks"] = broken[:SIDE_EFFECT_LIMIT]
            result["moreBrokenLinks"] = max(0, len(broken) - SIDE_EFFECT_LIMIT)
        if index is not None:
            result["index"] = index.as_dict()
        return result

    def _link_sources(self, qualified: str, *keys: str) -> list[str] | None:
        """The paths of the memories that may refer to `qualified` (or hold the other link
        `keys`), as the link index names them; None when only reading every memory can tell."""
        if self.reference_sources is None:
            return None
        return self.reference_sources([qualified, *keys])

    def _broken_links(
        self, deleted: MemoryFile, sources: Sequence[str] | None
    ) -> list[dict[str, Any]]:
        """The memories whose links (`[[name]]`, `[[name|label]]`, `` `mem:name` ``) the
        delete of `deleted` broke, each with its first such line (1-based), by name: none
        when another file of its name answers them now. `sources`: the link index's
        candidates (asked before the delete), else every memory is read."""
        if self.locate_all(deleted.name, deleted.scope):
            return []
        paths = sources if sources is not None else [m.path for m in self.scan()]
        # The name written whole, not as the start of a longer one (`note_6` in `note_60`).
        written = re.compile(re.escape(deleted.name) + "(?![A-Za-z0-9_-])")
        limit = LISTING_READ_LIMIT * self.config.max_memory_bytes
        found: list[dict[str, Any]] = []
        for path in dict.fromkeys(paths):
            owned = self.config.name_of(path) if path != deleted.path else None
            if owned is None:
                continue
            try:
                if os.path.getsize(path) > limit:
                    continue
                text = utf8_or_none(read_bytes(path))
            except OSError:
                continue
            if text is None or written.search(text) is None:
                continue
            refs = find_references(text, deleted.name)
            ref = next((r for r in refs if r.target == deleted.qualified), None)
            if ref is None:
                continue
            holder = MemoryFile(owned[1], path, owned[0])
            found.append({"name": holder.qualified, "path": path, "line": ref.line + 1})
        found.sort(key=lambda row: (str(row["name"]), str(row["path"])))
        return found

    # ----- the agent's index (Claude Code's MEMORY.md) ----------------------------------

    def _update_index(
        self,
        folder: Folder,
        path: str,
        change: str,
        *,
        text: str = "",
        new_path: str | None = None,
    ) -> IndexChange | None:
        """Keep the layout's index of its primary folder as the agent keeps it (Claude
        Code's MEMORY.md: a line per topic file); the caller holds the folder's lock."""
        rules = layout_named(self.config.layout).index
        if rules is None or folder.kind != "primary":
            return None
        index_path = os.path.join(folder.path, rules.file_name)
        if os.path.normcase(os.path.abspath(path)) == os.path.normcase(index_path):
            return None  # the index itself
        file_name = os.path.relpath(path, folder.path).replace(os.sep, "/")
        before = _bytes_or_none(index_path)
        current = None if before is None else utf8_or_none(before)
        if before is not None and current is None:
            return None  # not UTF-8: left alone, as any memory would be
        entry = file_name
        if change == "added":
            updated = rules.add(current, file_name, text)
        elif current is None:
            updated = None
        elif change == "removed":
            updated, entry = rules.remove(current, file_name), ""
        else:
            assert new_path is not None
            entry = os.path.relpath(new_path, folder.path).replace(os.sep, "/")
            updated = rules.rename(current, file_name, entry)
        if updated is not None:
            data = updated.encode("utf-8")
            real, owner = self._write_target(index_path)
            atomic_write(real, data, owner.real)
            index_memory = MemoryFile(rules.file_name.removesuffix(".md"), index_path, folder)
            self._journal("save", index_memory, before, data)
            self._record(Change("save", index_memory, before, data))
        final = updated if updated is not None else (current or "")
        return rules.describe(
            index_path, final, entry or None, change if updated is not None else "unchanged"
        )
