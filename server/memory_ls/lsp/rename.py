"""Rename a memory (SPEC 3.4) from a reference or inside its file: one workspace edit that
rewrites every reference (all three forms) and renames the file to where the new name
routes. When the editor renames a memory file itself (`workspace/willRenameFiles`), the
edit rewrites the references and the editor moves the file; the same edit rewrites
Claude Code's imports and MEMORY.md's links to renamed files (agent_rename.py)."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import uuid
from collections.abc import Mapping, Sequence

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import to_fs_path

from memory_ls.core.operations.navigation import moved_files, plan_for_path, plan_move_of
from memory_ls.core.rules.errors import InvalidName, MemoryStoreError, NotFound, ReadOnly
from memory_ls.core.rules.names import name_problem
from memory_ls.core.storage.memory import MemoryFile
from memory_ls.lsp import agent_rename, agents
from memory_ls.lsp.commands import REQUEST_FAILED, refusal
from memory_ls.lsp.edits import (
    FileEdit,
    can_rename_files,
    merge_edits,
    plan_edit,
    plan_files,
    workspace_edit,
)
from memory_ls.lsp.server import MemoryServer
from memory_ls.lsp.targets import (
    Cursor,
    OpenText,
    cursor_at,
    open_markdown,
    resolve,
    wait_for_names,
)

WILL_RENAME = types.WORKSPACE_WILL_RENAME_FILES
DID_RENAME = types.WORKSPACE_DID_RENAME_FILES
_GLOB_SPECIAL = re.compile(r"([*?\[\]{}])")
# What renames of agents' files to ask about: files, folders, folders with all in them.
AgentPaths = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]

logger = logging.getLogger(__name__)


def register(server: MemoryServer) -> None:
    """Register rename, prepareRename and willRenameFiles."""
    filters = RenameFilters(server)
    server.folder_listeners.append(filters.rearm)
    agents.of(server).listeners.append(lambda _known: filters.rearm())

    @server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
    async def prepare_rename(
        ls: MemoryServer, params: types.PrepareRenameParams
    ) -> types.PrepareRenamePlaceholder | None:
        await wait_for_names(ls)
        cursor = cursor_at(ls, params.text_document.uri, params.position)
        memory = _renamable(ls, cursor)
        if memory is None:
            return None
        here = types.Range(start=params.position, end=params.position)
        return types.PrepareRenamePlaceholder(
            range=cursor.reference_range(ls) or here, placeholder=qualified(memory)
        )

    @server.feature(types.TEXT_DOCUMENT_RENAME)
    async def rename(ls: MemoryServer, params: types.RenameParams) -> types.WorkspaceEdit:
        await wait_for_names(ls)
        cursor = cursor_at(ls, params.text_document.uri, params.position)
        memory = _renamable(ls, cursor)
        if memory is None:
            raise refusal(
                NotFound("Put the cursor on a reference to a memory, or in a memory file.")
            )
        try:
            return await ls.in_store_thread(
                rename_edit, ls, memory, params.new_name, open_markdown(ls)
            )
        except MemoryStoreError as error:
            raise refusal(error) from error

    @server.feature(WILL_RENAME)
    async def will_rename_files(
        ls: MemoryServer, params: types.RenameFilesParams
    ) -> types.WorkspaceEdit | None:
        pairs = [(to_fs_path(f.old_uri), to_fs_path(f.new_uri)) for f in params.files]
        paths = [
            (os.path.normpath(old), os.path.normpath(new)) for old, new in pairs if old and new
        ]
        for listener in ls.rename_listeners:
            listener(paths, False)
        await wait_for_names(ls)
        agent_edits = await agent_rename.rename_file_edits(ls, paths)
        return await ls.in_store_thread(follow_renames, ls, paths, open_markdown(ls), agent_edits)


def qualified(memory: MemoryFile) -> str:
    """A memory's name as a rename starts from: `global/` kept, so the scope stays unless
    the user removes it."""
    return memory.qualified


def _renamable(ls: MemoryServer, cursor: Cursor) -> MemoryFile | None:
    """The memory a rename at the cursor would move; a JSON-RPC error when it cannot be."""
    ref = cursor.reference
    memory: MemoryFile | None
    if ref is not None:
        problem = name_problem(ref.name)
        if problem:
            raise refusal(InvalidName(f"{ref.target!r} is not a valid memory name: {problem}."))
        entry = resolve(ls, ref)
        if entry is None:
            raise refusal(
                NotFound(f"No memory named {ref.target!r}, so there is nothing to rename.")
            )
        memory = entry.memory
    else:
        memory = cursor.own
        if memory is None:
            return None
        problem = name_problem(memory.name)
        if problem:
            raise refusal(
                InvalidName(
                    f"The file name {memory.name!r} is not a valid memory name ({problem}); "
                    "rename the file itself."
                )
            )
    if memory.folder.read_only:
        raise refusal(
            ReadOnly(
                f"Memory {memory.qualified!r} is in the read-only folder {memory.folder.path}."
            )
        )
    if not can_rename_files(ls):
        raise JsonRpcException(
            code=REQUEST_FAILED,
            message="This editor cannot rename files for a language server (its workspace "
            "edits have no rename operation), so a memory cannot be renamed here; use the "
            "memory.move command.",
        )
    return memory


def rename_edit(
    ls: MemoryServer, memory: MemoryFile, new_name: str, open_texts: Mapping[str, OpenText]
) -> types.WorkspaceEdit:
    """Check the new name like memory.move, then build the edit (blocking: reads the store)."""
    plan = plan_move_of(ls.store, memory, new_name)
    return plan_edit(ls, [plan], open_texts, move_files=True)


def follow_renames(
    ls: MemoryServer,
    renamed: Sequence[tuple[str, str]],
    open_texts: Mapping[str, OpenText],
    agent_edits: Sequence[FileEdit] = (),
) -> types.WorkspaceEdit | None:
    """The reference rewrites for files and folders the editor is renaming (blocking), with
    the imports' and index links' (`agent_edits`, merged in where a file has both)."""
    memories = ls.index.files() if ls.index.scanned else ls.store.scan()
    plans = []
    for old, new in renamed:
        for memory, new_path in moved_files(memories, old, new):
            plan = plan_for_path(ls.store, memory, new_path) if memory.valid else None
            if plan is not None:
                plans.append(plan)
    if not agent_edits:
        return plan_edit(ls, plans, open_texts, move_files=False) if plans else None
    memory_edits = plan_files(ls, plans, open_texts) if plans else []
    return workspace_edit(ls, merge_edits(memory_edits, agent_edits))


def _glob(path: str) -> str:
    return _GLOB_SPECIAL.sub(r"[\1]", path.replace(os.sep, "/").rstrip("/"))


def _filter(glob: str, kind: types.FileOperationPatternKind) -> types.FileOperationFilter:
    return types.FileOperationFilter(
        scheme="file", pattern=types.FileOperationPattern(glob=glob, matches=kind)
    )


def rename_filters(
    folders: Sequence[str], agent_paths: AgentPaths = ((), (), ())
) -> list[types.FileOperationFilter]:
    """Markdown files and subfolders of each memory folder, as absolute globs; and the
    agents' files that imports and MEMORY.md's links name (`agent_rename.watched_paths`:
    files, the folders above them, the auto memory folders with everything in them)."""
    file, folder = types.FileOperationPatternKind.File, types.FileOperationPatternKind.Folder
    filters = []
    for memory_folder in folders:
        base = _glob(memory_folder)
        filters.append(_filter(f"{base}/**/*.md", file))
        filters.append(_filter(f"{base}/**", folder))
    files, parents, trees = agent_paths
    filters.extend(_filter(_glob(path), file) for path in files)
    filters.extend(_filter(_glob(path), folder) for path in parents)
    for tree in trees:
        filters.append(_filter(f"{_glob(tree)}/**", file))
        filters.append(_filter(f"{_glob(tree)}/**", folder))
    return filters


class RenameFilters:
    """Registers willRenameFiles for the current memory folders and the agents' files that
    imports and index links name (re-registered when they change), where the client takes
    dynamic registrations."""

    def __init__(self, ls: MemoryServer) -> None:
        self.ls = ls
        self._folders: tuple[tuple[str, ...], AgentPaths] = ((), ((), (), ()))
        self._registration: str | None = None
        self._lock = asyncio.Lock()

    def rearm(self) -> None:
        """Follow the configured folders and the agents' files (on the event loop)."""
        known = agents.of(self.ls).current
        watched = agent_rename.watched_paths(known) if known is not None else ((), (), ())
        folders = (tuple(folder.path for folder in self.ls.config.folders), watched)
        if folders == self._folders or not _dynamic(self.ls):
            return
        self._folders = folders
        task = asyncio.ensure_future(self._register(folders))
        task.add_done_callback(_log_failure)

    async def _register(self, folders: tuple[tuple[str, ...], AgentPaths]) -> None:
        async with self._lock:
            if self._registration is not None:
                old, self._registration = self._registration, None
                await self.ls.client_unregister_capability_async(
                    types.UnregistrationParams(
                        unregisterations=[
                            types.Unregistration(id=old, method=WILL_RENAME),
                            # The journal's: didRenameFiles (lsp/journal.py).
                            types.Unregistration(id=old + "-did", method=DID_RENAME),
                        ]
                    )
                )
            if folders != self._folders:
                return  # the folders changed again; the newer call registers
            registration = str(uuid.uuid4())
            options = types.FileOperationRegistrationOptions(filters=rename_filters(*folders))
            await self.ls.client_register_capability_async(
                types.RegistrationParams(
                    registrations=[
                        types.Registration(
                            id=registration, method=WILL_RENAME, register_options=options
                        ),
                        # The journal's: didRenameFiles (lsp/journal.py).
                        types.Registration(
                            id=registration + "-did", method=DID_RENAME, register_options=options
                        ),
                    ]
                )
            )
            self._registration = registration


def _dynamic(ls: MemoryServer) -> bool:
    workspace = ls.client_capabilities.workspace
    operations = workspace.file_operations if workspace else None
    return bool(operations and operations.dynamic_registration and operations.will_rename)


def _log_failure(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.warning("registering willRenameFiles failed: %s", task.exception())
