"""The project file: the store defined once, in the repository, for every surface.

`memory-ls.toml`, `.memory-ls.toml` or a `[tool.memory-ls]` table in `pyproject.toml`,
found as ruff finds its configuration: in the start directory or the nearest parent
(ruff's order within one directory: the dotted file, the plain one, then pyproject.toml,
which counts only when it holds the table). Its directory is the store's root: folders
in the file are relative to it, and the journal belongs to it (core/services/journal/).

The CLI, the MCP server, the language server, the merge driver and the pre-commit hook
all read it through `load_project`; precedence (config.merge_layers): defaults, then
the file, then the editor's settings, then command-line flags.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from memory_ls.config import (
    ConfigError,
    FolderSetting,
    Layer,
    MeaningSettings,
    parse_project_table,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 has no tomllib
    import tomli as tomllib

PROJECT_FILE_NAMES = (".memory-ls.toml", "memory-ls.toml")
PYPROJECT = "pyproject.toml"
PYPROJECT_TABLE = ("tool", "memory-ls")
# What `init` writes where the repository has no project file yet.
DEFAULT_FILE_NAME = "memory-ls.toml"


@attrs.frozen
class ProjectFile:
    """A project file found on disk, its settings validated."""

    path: str
    layer: Layer
    # (mtime_ns, size) when read: a server reads it again only when this changes.
    stamp: tuple[int, int] = (0, 0)

    @property
    def directory(self) -> str:
        """The file's directory: the store's root."""
        return os.path.dirname(self.path)

    @property
    def in_pyproject(self) -> bool:
        """Whether the settings are pyproject.toml's `[tool.memory-ls]` table."""
        return os.path.basename(self.path) == PYPROJECT

    @property
    def source(self) -> str:
        """How `memory-ls config` and error messages name it."""
        return self.layer.source


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size)


def _read_toml(path: str) -> dict[str, Any]:
    """The file's TOML; a file that is not TOML (or cannot be read) is a ConfigError."""
    try:
        with open(path, "rb") as handle:
            document: dict[str, Any] = tomllib.load(handle)
            return document
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(path, [f"not valid TOML: {exc}"]) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(path, [f"cannot be read: {exc}"]) from exc


def _pyproject_table(document: Mapping[str, Any]) -> object:
    tool = document.get(PYPROJECT_TABLE[0])
    return tool.get(PYPROJECT_TABLE[1]) if isinstance(tool, Mapping) else None


# pyproject.toml files by path: (stamp, whether it holds [tool.memory-ls]). The MCP server
# looks for the project file on every call; a Python repository's pyproject.toml is then
# parsed only when it changed, not each time.
_PYPROJECT_SEEN: dict[str, tuple[tuple[int, int], bool]] = {}


def _has_our_table(path: str) -> bool:
    """Whether a pyproject.toml exists here and holds a `[tool.memory-ls]` table."""
    stamp = _stamp(path)
    if stamp is None:
        return False
    seen = _PYPROJECT_SEEN.get(path)
    if seen is not None and seen[0] == stamp:
        return seen[1]
    found = _pyproject_table(_read_toml(path)) is not None
    _PYPROJECT_SEEN[path] = (stamp, found)
    return found


def find_project_file(start: str) -> str | None:
    """The path of the project file that applies at `start` (a directory), or None.

    A pyproject.toml without a `[tool.memory-ls]` table is passed over, as ruff passes
    over one without `[tool.ruff]`; one that is not valid TOML is an error (its table
    might be there).
    """
    current = os.path.abspath(os.path.expanduser(start))
    while True:
        for name in PROJECT_FILE_NAMES:
            candidate = os.path.join(current, name)
            if os.path.isfile(candidate):
                return candidate
        candidate = os.path.join(current, PYPROJECT)
        if _has_our_table(candidate):
            return candidate
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def read_project_file(path: str) -> ProjectFile:
    """Read and validate one project file; an invalid one is a ConfigError naming it."""
    stamp = _stamp(path) or (0, 0)
    document = _read_toml(path)
    if os.path.basename(path) == PYPROJECT:
        table = _pyproject_table(document)
        source = f"{path} [tool.memory-ls]"
        if not isinstance(table, Mapping):
            raise ConfigError(source, [f"expected a table, got {json.dumps(table)}"])
    else:
        table, source = document, path
    layer = parse_project_table(table, source, os.path.dirname(path))
    return ProjectFile(path=path, layer=layer, stamp=stamp)


def load_project(start: str) -> ProjectFile | None:
    """The project file that applies at `start`, validated; None when there is none."""
    path = find_project_file(start)
    return read_project_file(path) if path is not None else None


def store_root(start: str, project: ProjectFile | None) -> str:
    """The store's root: the project file's directory, else the start directory."""
    return project.directory if project is not None else os.path.abspath(start)


class ProjectWatch:
    """The project file of a long-running server, read again when it changes.

    A server keeps the last good file when the new one is invalid (and says so once per
    change); `current()` costs a few stat calls, so the MCP server asks on every call.
    """

    def __init__(self, start: str) -> None:
        self.start = start
        self.project: ProjectFile | None = None
        # The error of the file as it is on disk now, if it is invalid (else None).
        self.error: ConfigError | None = None
        self._seen: tuple[str | None, tuple[int, int] | None] | None = None

    def refresh(self) -> tuple[bool, ConfigError | None]:
        """Look at the disk again: (whether the settings changed, a new error to report)."""
        try:
            path = find_project_file(self.start)
        except ConfigError as exc:
            return self._failed(None, exc)
        seen = (path, _stamp(path) if path is not None else None)
        if seen == self._seen:
            return False, None
        self._seen = seen
        if path is None:
            changed = self.project is not None
            self.project, self.error = None, None
            return changed, None
        try:
            project = read_project_file(path)
        except ConfigError as exc:
            return self._failed(seen, exc)
        changed = self.project is None or self.project.layer != project.layer
        self.project, self.error = project, None
        return changed, None

    def _failed(
        self, seen: tuple[str | None, tuple[int, int] | None] | None, exc: ConfigError
    ) -> tuple[bool, ConfigError | None]:
        new = self.error is None or str(self.error) != str(exc)
        self._seen, self.error = seen, exc
        return False, exc if new else None


# --- writing a project file --------------------------------------------------------


def _toml_string(text: str) -> str:
    # A JSON string is a TOML basic string: the same escapes (\" \\ \n \uXXXX ...).
    return json.dumps(text, ensure_ascii=False)


def _relative_folder(path: str, directory: str) -> str:
    """A folder as the file should hold it: relative to its directory where that is shorter."""
    if path.startswith("~") or not os.path.isabs(path):
        return path.replace(os.sep, "/")
    relative = os.path.relpath(path, directory)
    home = os.path.expanduser("~")
    if os.path.commonpath([path, home]) == home and relative.count(os.pardir) > 1:
        return "~/" + os.path.relpath(path, home).replace(os.sep, "/")
    return relative.replace(os.sep, "/")


def _folder_entry(folder: FolderSetting, directory: str) -> str:
    path = _relative_folder(folder.path, directory)
    return _toml_string(path + (":ro" if folder.read_only else ""))


def render_project_file(values: Mapping[str, object], directory: str) -> str:
    """A project file holding these layer values (snake_case, as a Layer holds them)."""
    lines = [
        "# memory-ls: the memory store of this repository, read by the editor, the",
        "# `memory-ls` command line, agents' MCP servers, CI and git's merge driver.",
        "# Each key mirrors a command-line flag; `memory-ls config` shows what is in effect.",
    ]
    body: list[str] = []
    if "layout" in values:
        body.append(f"layout = {_toml_string(str(values['layout']))}")
    if "primary_folder" in values:
        folder = _relative_folder(str(values["primary_folder"]), directory)
        body.append(f"primary-folder = {_toml_string(folder)}")
    folders: Sequence[FolderSetting] = values.get("additional_folders", ())  # type: ignore[assignment]
    if folders:
        body.append("additional-folders = [")
        body += [f"  {_folder_entry(folder, directory)}," for folder in folders]
        body.append("]")
    if values.get("global_enabled") is False:
        body.append("global = false")
    elif "global_folder" in values:
        folder = _relative_folder(str(values["global_folder"]), directory)
        body.append(f"global-folder = {_toml_string(folder)}")
    if "max_memory_bytes" in values:
        body.append(f"max-memory-bytes = {int(values['max_memory_bytes'])}")  # type: ignore[call-overload]
    for key, name in (("secrets", "secrets"), ("diagnostics_scope", "diagnostics-scope")):
        if key in values:
            body.append(f"{name} = {_toml_string(str(values[key]))}")
    severities: Mapping[str, str] = values.get("diagnostics", {})  # type: ignore[assignment]
    if body:
        lines += ["", *body]
    if severities:
        lines += ["", "[diagnostics]"]
        lines += [f"{code} = {_toml_string(severity)}" for code, severity in severities.items()]
    meaning = values.get("meaning")
    if isinstance(meaning, MeaningSettings):
        lines += ["", "[search.meaning]"]
        for name, value in (
            ("provider", meaning.provider),
            ("model", meaning.model),
            ("url", meaning.url),
            ("api-key-env", meaning.api_key_env),
        ):
            if value is not None:
                lines.append(f"{name} = {_toml_string(value)}")
    return "\n".join(lines) + "\n"


def write_atomic(path: str, text: str) -> None:
    """Write a whole file or nothing (a temporary file beside it, renamed over it): a
    project or MCP file is never left half-written."""
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".memory-ls-")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def project_values_equal(a: Mapping[str, object], b: Mapping[str, object]) -> bool:
    """Whether two layers' values set the same store (diagnostics compared as mappings)."""
    return {k: dict(v) if isinstance(v, Mapping) else v for k, v in a.items()} == {
        k: dict(v) if isinstance(v, Mapping) else v for k, v in b.items()
    }


__all__ = [
    "DEFAULT_FILE_NAME",
    "PROJECT_FILE_NAMES",
    "ProjectFile",
    "ProjectWatch",
    "find_project_file",
    "load_project",
    "read_project_file",
    "render_project_file",
    "store_root",
    "write_atomic",
]
