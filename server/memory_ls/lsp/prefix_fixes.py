"""Quick fixes for `unknown-prefix` (issue 34): create the folder the prefix names, or
rename the memory without its prefix.

A prefix routes to an additional folder that is configured and exists (SPEC 2.4;
routing never creates one), so creating a directory alone routes nothing: "Create
folder" makes the directory beside the other additional folders and adds it to the
project file's `additional-folders` (`memory.createFolder`), after which the memory is
`misrouted` and its quick fix moves it there. Where the editor's settings or the
server's flags set the folders, the file would not decide, and the fix is not offered.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from memory_ls.core.rules.errors import InvalidArguments, MemoryStoreError
from memory_ls.core.storage.folders import Folder
from memory_ls.lsp.commands import refusal
from memory_ls.lsp.edits import can_rename_files, workspace_edit
from memory_ls.lsp.server import MemoryServer
from memory_ls.lsp.targets import shown_path
from memory_ls.project_file import write_atomic

CREATE_FOLDER_COMMAND = "memory.createFolder"
QUICK_FIX = types.CodeActionKind.QuickFix
_PREFIX = re.compile(r"[A-Z]+(?:_[A-Z]+)*")
_KEY = re.compile(r"^additional-folders[ \t]*=[ \t]*\[", re.MULTILINE)
_TABLE = re.compile(r"^[ \t]*\[", re.MULTILINE)


@dataclass(frozen=True)
class FolderPlan:
    """Where the folder for a prefix goes and how it becomes an additional folder."""

    path: str
    project_file: str | None  # the file to list it in; None when it is listed already


def register(server: MemoryServer) -> None:
    """Register the command "Create folder" runs."""

    @server.command(CREATE_FOLDER_COMMAND)
    async def create_folder(ls: MemoryServer, *arguments: object) -> dict[str, Any]:
        prefix = (
            arguments[0].get("prefix") if arguments and isinstance(arguments[0], dict) else None
        )
        if len(arguments) != 1 or not isinstance(prefix, str) or not _PREFIX.fullmatch(prefix):
            raise refusal(
                InvalidArguments(
                    f"{CREATE_FOLDER_COMMAND} takes one object: {{prefix}} (ALL CAPS)."
                )
            )
        plan = plan_folder(ls, prefix)
        if plan is None:
            raise refusal(
                InvalidArguments(
                    "The additional folders are set in the editor's settings or the server's "
                    "flags; add the folder there."
                )
            )
        try:
            await ls.in_store_thread(carry_out, plan)
        except OSError as error:
            raise refusal(InvalidArguments(f"Could not create {plan.path}: {error}.")) from error
        ls.reconfigure()
        return {"path": plan.path, "projectFile": plan.project_file}


def plan_folder(ls: MemoryServer, prefix: str) -> FolderPlan | None:
    """The folder that makes `prefix` route somewhere; None where the settings that list
    the folders are not the project file's."""
    label = prefix.lower()
    config = ls.config
    # A folder configured but missing (skipped) routes once it exists.
    for missing in config.missing_additional:
        if os.path.basename(missing).lower() == label:
            return FolderPlan(missing, None)
    project = ls.project.project
    setters = [layer for layer in ls.layers() if "additional_folders" in layer.values]
    if project is None or project.in_pyproject or (setters and setters[-1] is not project.layer):
        return None  # pyproject.toml is not ours to rewrite; the editor's settings win
    beside: Folder = config.additional[0] if config.additional else config.primary
    return FolderPlan(os.path.join(os.path.dirname(beside.path), label), project.path)


def carry_out(plan: FolderPlan) -> None:
    """Create the folder, then list it in the project file (blocking)."""
    os.makedirs(plan.path, exist_ok=True)
    if plan.project_file is None:
        return
    with open(plan.project_file, encoding="utf-8") as handle:
        text = handle.read()
    relative = os.path.relpath(plan.path, os.path.dirname(plan.project_file))
    write_atomic(plan.project_file, with_folder(text, relative.replace(os.sep, "/")))


def with_folder(text: str, folder: str) -> str:
    """A project file's text with one more `additional-folders` entry, every other line
    as written (comments too)."""
    entry = '"' + folder.replace("\\", "\\\\").replace('"', '\\"') + '"'
    match = _KEY.search(text)
    if match is None:
        line = f"additional-folders = [{entry}]\n"
        table = _TABLE.search(text)
        if table is not None:  # top-level keys come before the first table
            return text[: table.start()] + line + "\n" + text[table.start() :]
        return text + ("\n" if text and not text.endswith("\n") else "") + line
    close, last = _array_end(text, match.end())
    if last < 0:  # an empty array
        return text[:close] + entry + text[close:]
    comma = "" if text[last] == "," else ","
    line_end = text.find("\n", last + 1)
    if 0 <= line_end < close:
        # One entry a line: the new one on a line of its own, after the last one's
        # comment, indented as it is.
        line_start = text.rfind("\n", 0, last) + 1
        line = text[line_start:last]
        indent = line[: len(line) - len(line.lstrip())]
        head = text[: last + 1] + comma + text[last + 1 : line_end]
        return head + f"\n{indent}{entry}," + text[line_end:]
    return text[: last + 1] + f"{comma} {entry}" + text[last + 1 :]


def _array_end(text: str, start: int) -> tuple[int, int]:
    """(index of the `]` closing the array opened before `start`, index of its last
    character that is neither space nor comment, -1 when none)."""
    depth, last, at = 1, -1, start
    while at < len(text):
        char = text[at]
        if char in "\"'":
            end = text.find(char, at + 1)
            while char == '"' and end > 0 and text[end - 1] == "\\":
                end = text.find(char, end + 1)
            at = len(text) if end < 0 else end
            last = at
        elif char == "#":
            end = text.find("\n", at)
            at = len(text) if end < 0 else end
            continue
        elif char in "[{":
            depth += 1
            last = at
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return at, last
            last = at
        elif not char.isspace():
            last = at
        at += 1
    return len(text), last


def prefix_fixes(
    ls: MemoryServer, uri: str, diagnostic: types.Diagnostic
) -> Iterator[tuple[str, types.CodeAction]]:
    """ "Create folder" for the prefix and, on the memory itself, "Rename without the prefix"."""
    data: Any = diagnostic.data
    prefix = data.get("prefix") if isinstance(data, dict) else None
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(prefix, str) or not isinstance(name, str) or not _PREFIX.fullmatch(prefix):
        return
    plan = plan_folder(ls, prefix)
    if plan is not None:
        where = shown_path(ls, plan.path)
        title = f"Create folder {where} for {prefix}_ memories"
        if plan.project_file is not None:
            title += f" (added to {os.path.basename(plan.project_file)})"
        command = types.Command(
            title=title, command=CREATE_FOLDER_COMMAND, arguments=[{"prefix": prefix}]
        )
        action = types.CodeAction(
            title=title, kind=QUICK_FIX, diagnostics=[diagnostic], command=command
        )
        yield f"folder:{prefix}", action
    path = to_fs_path(uri)
    memory = ls.index.memory_for(path) if path else None
    if memory is None or memory.name != name or memory.folder.read_only:
        return  # a link's prefix: "did you mean" covers it
    if not can_rename_files(ls):
        return
    new_name = without_prefix(memory.name, prefix)
    if new_name is None or ls.store.locate_all(new_name, memory.scope):
        return
    target = memory.folder.file_for(new_name)
    if os.path.lexists(target):
        return
    try:
        edit = workspace_edit(ls, [], [(memory.path, target)])
    except MemoryStoreError:
        return
    action = types.CodeAction(
        title=f"Rename without the prefix: {memory.folder.qualified(new_name)}",
        kind=QUICK_FIX,
        diagnostics=[diagnostic],
        edit=edit,
    )
    yield f"unprefix:{memory.path}", action


def without_prefix(name: str, prefix: str) -> str | None:
    """A name without its ALL-CAPS prefix run (`BUGFIX_login_crash` -> `login_crash`)."""
    if not name.startswith(prefix):
        return None
    rest = name[len(prefix) :].lstrip("_")
    return rest or None
