"""The project file in the editor: read again when it changes, shown with what overrides it,
and written from the editor's settings on request (`memory.configuration`,
`memory.writeProjectFile`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import uuid
from collections.abc import Mapping
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path

from memory_ls.config import Layer, camel_key, explain_layers, merge_layers, plain_value
from memory_ls.core.rules.errors import Exists, InvalidArguments, MemoryStoreError
from memory_ls.core.storage.git import work_tree_top
from memory_ls.lsp.commands import Command as StoreCommand
from memory_ls.lsp.commands import check_arguments, refusal
from memory_ls.lsp.server import MemoryServer
from memory_ls.project_file import (
    DEFAULT_FILE_NAME,
    PROJECT_FILE_NAMES,
    PYPROJECT,
    render_project_file,
    write_atomic,
)

NAMES = (*PROJECT_FILE_NAMES, PYPROJECT)
NAMES_GLOB = "{" + ",".join(NAMES) + "}"
logger = logging.getLogger(__name__)
# How long `memory.configuration` waits for the session's first settings.
CONFIGURED_TIMEOUT_SECONDS = 10.0
EDITOR_SOURCES = ("initializationOptions", "workspace configuration")


def register(server: MemoryServer) -> None:
    """Follow the project file and offer its commands."""
    registered: list[bool] = []

    def on_client_files(paths: list[str]) -> None:
        if any(os.path.basename(path) in NAMES for path in paths):
            server.reconfigure()

    def on_start() -> None:
        if not registered:
            registered.append(True)
            server.on_loop(lambda: _spawn(server, _watch_with_client(server)))

    server.client_file_listeners.append(on_client_files)
    server.folder_listeners.append(on_start)

    @server.command("memory.configuration")
    async def configuration(ls: MemoryServer, *arguments: object) -> dict[str, Any]:
        _arguments("memory.configuration", {}, arguments)
        # Asked as the session starts, the answer waits for the client's settings (pulled
        # after `initialized`): an answer without them would say nothing overrides the file.
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(ls.configured.wait(), CONFIGURED_TIMEOUT_SECONDS)
        return describe(ls)

    @server.command("memory.writeProjectFile")
    async def write_project_file(ls: MemoryServer, *arguments: object) -> dict[str, Any]:
        args = _arguments("memory.writeProjectFile", {"replace": "true or false"}, arguments)
        try:
            result = await ls.in_store_thread(write_from_settings, ls, bool(args.get("replace")))
        except MemoryStoreError as error:
            raise refusal(error) from error
        ls.reconfigure()
        return result


def _arguments(
    name: str, optional: dict[str, str], arguments: tuple[object, ...]
) -> dict[str, Any]:
    command = StoreCommand({}, optional, lambda store, args: {})
    try:
        return check_arguments(name, command, arguments)
    except InvalidArguments as error:
        raise refusal(error) from error


def _editor_layers(ls: MemoryServer) -> tuple[Layer, ...]:
    """The layers the editor's settings make (not the file's, not the flags')."""
    return tuple(layer for layer in ls.layers() if layer.source.startswith(EDITOR_SOURCES))


def _by_setting(values: Mapping[str, object]) -> dict[str, object]:
    """A layer's values under the editor's setting names: `diagnostics.<code>` per code
    (they merge code by code), `globalFolder` for a disabled global scope."""
    found: dict[str, object] = {}
    for key, value in values.items():
        if key == "diagnostics":
            for code, severity in dict(value).items():  # type: ignore[call-overload]
                found[f"diagnostics.{code}"] = severity
        elif key == "global_enabled":
            if value is False:  # `globalFolder: null` in the settings, `global = false`
                found["globalFolder"] = None
        else:
            found[camel_key(key)] = plain_value(value)
    return found


def _editor_values(ls: MemoryServer) -> dict[str, tuple[object, str]]:
    """What the editor's settings set, by setting name, each with its value and the editor
    source it comes from (workspace configuration over initializationOptions)."""
    return {
        key: (value, layer.source)
        for layer in _editor_layers(ls)
        for key, value in _by_setting(layer.values).items()
    }


def describe(ls: MemoryServer) -> dict[str, Any]:
    """The configuration in effect: each setting's value and source, the project file,
    what is wrong with it, and which editor settings override it (key by key, and
    diagnostics code by code, as they merge)."""
    project = ls.project.project
    rows = explain_layers(*ls.layers())
    editor = _editor_values(ls)
    overrides = []
    if project is not None:
        in_file = _by_setting(project.layer.values)
        overrides = [
            {"key": key, "source": source, "value": value}
            for key, (value, source) in sorted(editor.items())
            if key in in_file and in_file[key] != value
        ]
    return {
        "projectFile": project.path if project is not None else None,
        "root": ls.config.root,
        "problem": str(ls.project.error) if ls.project.error is not None else None,
        "settings": {
            row.key: {"value": plain_value(row.value), "source": row.source}
            for row in rows
            if not row.key.startswith("diagnostics.") or row.source != "default"
        },
        "editorKeys": sorted({key.split(".")[0] for key in editor}),
        "overrides": overrides,
    }


def write_from_settings(ls: MemoryServer, replace: bool) -> dict[str, Any]:
    """Write the project file from the settings in effect (file, then editor settings;
    not the server's flags). An existing file is replaced only when asked; never a
    pyproject.toml, whose other tables are not ours (blocking: a store thread)."""
    project = ls.project.project
    layers = [layer for layer in ls.layers() if layer is not ls.cli_layer]
    values: dict[str, object] = {}
    for layer in layers:
        values.update(layer.values)
    merged = merge_layers(*layers)
    if merged.configured_diagnostics:
        values["diagnostics"] = {
            code: merged.diagnostics[code] for code in sorted(merged.configured_diagnostics)
        }
    if project is not None and project.in_pyproject:
        raise InvalidArguments(
            f"The settings are in {project.path} ([tool.memory-ls]); edit that table, "
            "memory-ls does not rewrite pyproject.toml."
        )
    if project is not None and not replace:
        raise Exists(f"{project.path} exists; pass replace: true to write it from the settings.")
    directory = project.directory if project is not None else (work_tree_top(ls.root) or ls.root)
    path = project.path if project is not None else os.path.join(directory, DEFAULT_FILE_NAME)
    text = render_project_file(values, directory)
    write_atomic(path, text)
    return {"path": path, "replaced": project is not None, "content": text}


async def _watch_with_client(ls: MemoryServer) -> None:
    """Ask the client for file events on the project file's names, in the workspace folder
    and its parents up to the repository's top (where the file may be)."""
    workspace = ls.client_capabilities.workspace
    capability = workspace.did_change_watched_files if workspace else None
    if capability is None or not capability.dynamic_registration:
        return
    watchers: list[types.FileSystemWatcher] = []
    if capability.relative_pattern_support:
        top = work_tree_top(ls.root) or ls.root
        directory = ls.root
        while True:
            watchers.append(
                types.FileSystemWatcher(
                    glob_pattern=types.RelativePattern(
                        base_uri=from_fs_path(directory) or directory, pattern=NAMES_GLOB
                    )
                )
            )
            parent = os.path.dirname(directory)
            if directory == top or parent == directory:
                break
            directory = parent
    else:
        watchers.append(types.FileSystemWatcher(glob_pattern=NAMES_GLOB))
    await ls.client_register_capability_async(
        types.RegistrationParams(
            registrations=[
                types.Registration(
                    id=str(uuid.uuid4()),
                    method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                    register_options=types.DidChangeWatchedFilesRegistrationOptions(
                        watchers=watchers
                    ),
                )
            ]
        )
    )


def _spawn(ls: MemoryServer, coroutine: Any) -> None:
    task = asyncio.ensure_future(coroutine)

    def done(finished: asyncio.Future[None]) -> None:
        if not finished.cancelled() and finished.exception() is not None:
            logger.warning("project file watch registration failed: %s", finished.exception())

    task.add_done_callback(done)
