"""Folders, layouts and scopes: where memories live (SPEC 2.2)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from memory_ls.config import DEFAULT_SEVERITIES, MeaningSettings, Settings, Severity
from memory_ls.core.layouts import (
    NO_PATTERNS,
    MemoryPatterns,
    detect_layout,
    layout_named,
    store_patterns,
)
from memory_ls.core.rules.names import GLOBAL_PREFIX
from memory_ls.core.storage.git import in_git_work_tree

FolderKind = Literal["primary", "additional", "global"]
Scope = Literal["project", "global"]


@dataclass(frozen=True)
class Folder:
    """A configured memory folder."""

    path: str  # absolute and normalised, as configured (symlinks not resolved)
    real: str  # the real location, for containment checks
    kind: FolderKind
    read_only: bool = False
    # Serena's read-only and ignored patterns, shared by every folder of a store.
    patterns: MemoryPatterns = field(default=NO_PATTERNS, compare=False, repr=False)

    @property
    def scope(self) -> Scope:
        """The scope of the memories in this folder."""
        return "global" if self.kind == "global" else "project"

    @property
    def label(self) -> str:
        """A short name for people: the directory name."""
        return os.path.basename(self.path) or self.path

    def file_for(self, name: str) -> str:
        """The file path a name (within its scope, no `global/`) has in this folder."""
        return os.path.join(self.path, *name.split("/")) + ".md"

    def qualified(self, name: str) -> str:
        """A name in this folder as Serena writes it: `global/NAME` in the global folder."""
        return GLOBAL_PREFIX + name if self.kind == "global" else name


@dataclass(frozen=True)
class StoreConfig:
    """The resolved folders and limits of one store."""

    root: str
    layout: str
    primary: Folder
    additional: tuple[Folder, ...] = ()
    global_folder: Folder | None = None
    missing_additional: tuple[str, ...] = ()
    max_memory_bytes: int = 524288
    severities: Mapping[str, Severity] = field(default_factory=lambda: dict(DEFAULT_SEVERITIES))
    patterns: MemoryPatterns = NO_PATTERNS
    # Whether agents' writes holding a possible secret are refused or written with a warning.
    secrets: str = "refuse"
    # The project file that defined this store (memory_ls/project_file.py), if any.
    project_file: str | None = None
    # Search by meaning (core/services/meaning/): None, the default, is off.
    meaning: MeaningSettings | None = None

    @property
    def folders(self) -> tuple[Folder, ...]:
        """Every folder in lookup order: primary, additional in order, global."""
        tail = (self.global_folder,) if self.global_folder is not None else ()
        return (self.primary, *self.additional, *tail)

    def folders_in(self, scope: str | None) -> tuple[Folder, ...]:
        """The folders searched for a scope (None or "all" is every folder)."""
        if scope == "project":
            return (self.primary, *self.additional)
        if scope == "global":
            return (self.global_folder,) if self.global_folder is not None else ()
        return self.folders

    def owner_of(self, path: str) -> Folder | None:
        """The configured folder a file belongs to: the deepest one that contains it."""
        absolute = os.path.abspath(path)
        best: Folder | None = None
        for folder in self.folders:
            if absolute.startswith(folder.path.rstrip(os.sep) + os.sep) and (
                best is None or len(folder.path) > len(best.path)
            ):
                best = folder
        return best

    def name_of(self, path: str) -> tuple[Folder, str] | None:
        """(folder, name as written on disk) for a `.md` file inside a configured folder."""
        folder = self.owner_of(path)
        if folder is None or not path.endswith(".md"):
            return None
        relative = os.path.relpath(os.path.abspath(path), folder.path)
        return folder, relative[:-3].replace(os.sep, "/")

    def qualified_name_of(self, path: str) -> str | None:
        """The name Serena gives the memory at a path (`global/` for the global folder)."""
        owned = self.name_of(path)
        return None if owned is None else owned[0].qualified(owned[1])


def _absolute(path: str, root: str) -> str:
    expanded = os.path.expanduser(path)
    return os.path.normpath(expanded if os.path.isabs(expanded) else os.path.join(root, expanded))


def _folder(
    path: str,
    root: str,
    kind: FolderKind,
    read_only: bool = False,
    patterns: MemoryPatterns = NO_PATTERNS,
) -> Folder:
    absolute = _absolute(path, root)
    return Folder(absolute, os.path.realpath(absolute), kind, read_only, patterns)


def default_global_folder(layout: str, environ: Mapping[str, str]) -> str:
    """The global folder of a layout; Serena's honours SERENA_HOME."""
    return layout_named(layout).global_folder(environ)


def resolve_store_config(
    settings: Settings,
    root: str,
    environ: Mapping[str, str] | None = None,
    project_file: str | None = None,
) -> StoreConfig:
    """Turn settings into absolute folders; missing additional folders are skipped and listed."""
    env = os.environ if environ is None else environ
    root = os.path.abspath(os.path.expanduser(root))
    layout = settings.layout or detect_layout(root)
    patterns = store_patterns(root, env)
    primary = _folder(
        settings.primary_folder or layout_named(layout).primary_path(root, env),
        root,
        "primary",
        False,
        patterns,
    )
    additional: list[Folder] = []
    missing: list[str] = []
    for entry in settings.additional_folders:
        folder = _folder(entry.path, root, "additional", entry.read_only, patterns)
        if os.path.isdir(folder.path):
            additional.append(folder)
        else:
            missing.append(folder.path)
    global_folder: Folder | None = None
    # A layout with no global folder (Claude Code's) has one only where one is configured.
    if settings.global_enabled and (settings.global_folder or layout_named(layout).has_global):
        global_path = settings.global_folder or default_global_folder(layout, env)
        global_folder = _folder(global_path, root, "global", False, patterns)
    return StoreConfig(
        root=root,
        layout=layout,
        primary=primary,
        additional=tuple(additional),
        global_folder=global_folder,
        missing_additional=tuple(missing),
        max_memory_bytes=settings.max_memory_bytes,
        severities=_workspace_severities(settings, root),
        patterns=patterns,
        secrets=settings.secrets,
        project_file=project_file,
        meaning=settings.meaning,
    )


def _workspace_severities(settings: Settings, root: str) -> dict[str, Severity]:
    """The configured severities; `stale-path` is off by default outside git repositories."""
    severities = dict(settings.diagnostics)
    # Without git there is no telling a repository path from any other: only on request.
    if "stale-path" not in settings.configured_diagnostics and not in_git_work_tree(root):
        severities["stale-path"] = "off"
    return severities
