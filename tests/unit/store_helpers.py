"""Helpers of the core unit tests: a real workspace in tmp_path, never the real home.

HOME (so `~` and the default global folder) and XDG_CACHE_HOME (where the store keeps
its cross-process lock files) both point into tmp_path; SERENA_HOME is cleared.
`Workspace.snapshot()` records every directory, file (bytes) and symlink under
tmp_path so a test can prove that an operation changed nothing at all.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memory_ls.config import FolderSetting, Settings
from memory_ls.core import MemoryStoreError, Store, resolve_store_config

FolderSpec = str | tuple[str, bool]
"""An additional folder: a path (relative to the root, absolute or `~/...`), or (path, readOnly)."""

Snapshot = dict[str, tuple[Any, ...]]


def snapshot_tree(base: Path, exclude: Iterable[Path] = ()) -> Snapshot:
    """Every directory, file (with its bytes) and symlink (with its target) under base."""
    skipped = {os.path.abspath(p) for p in exclude}
    state: Snapshot = {}
    for directory, dirnames, filenames in os.walk(base):
        keep = []
        for name in sorted(dirnames):
            path = os.path.join(directory, name)
            if os.path.abspath(path) in skipped:
                continue
            rel = os.path.relpath(path, base)
            if os.path.islink(path):
                state[rel] = ("link", os.readlink(path))
            else:
                state[rel] = ("dir",)
                keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            path = os.path.join(directory, name)
            rel = os.path.relpath(path, base)
            if os.path.islink(path):
                state[rel] = ("link", os.readlink(path))
            else:
                state[rel] = ("file", Path(path).read_bytes())
    return state


def changed_paths(before: Snapshot, after: Snapshot) -> set[str]:
    """Relative paths created, removed or changed between two snapshots."""
    return {key for key in before.keys() | after.keys() if before.get(key) != after.get(key)}


@dataclass
class Workspace:
    """A workspace root, a home and a lock cache, all inside tmp_path."""

    tmp: Path
    root: Path
    home: Path
    cache: Path

    @property
    def primary(self) -> Path:
        """The default (serena layout) primary folder."""
        return self.root / ".serena" / "memories"

    @property
    def global_dir(self) -> Path:
        """The default (serena layout) global folder under the fake home."""
        return self.home / ".serena" / "memories" / "global"

    def path_of(self, spec: str, root: Path | None = None) -> Path:
        """The absolute path of a folder given as in the settings."""
        expanded = os.path.expanduser(spec)
        return Path(expanded) if os.path.isabs(expanded) else (root or self.root) / expanded

    def write(self, path: Path | str, text: str) -> Path:
        """Write a file (creating its folders), exactly these UTF-8 bytes."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))
        return target

    def settings(
        self,
        additional: Iterable[FolderSpec] = (),
        *,
        create: bool = True,
        root: Path | None = None,
        **values: Any,
    ) -> Settings:
        """Settings with these additional folders (created on disk unless create=False)."""
        folders = []
        for entry in additional:
            path, read_only = (entry, False) if isinstance(entry, str) else entry
            if create:
                self.path_of(path, root).mkdir(parents=True, exist_ok=True)
            folders.append(FolderSetting(path=path, read_only=read_only))
        return Settings(additional_folders=tuple(folders), **values)

    def store(
        self,
        additional: Iterable[FolderSpec] = (),
        *,
        create: bool = True,
        root: Path | None = None,
        environ: Mapping[str, str] | None = None,
        **values: Any,
    ) -> Store:
        """A store over this workspace (or another root), with the given settings."""
        base = root or self.root
        base.mkdir(parents=True, exist_ok=True)
        settings = self.settings(additional, create=create, root=base, **values)
        env = {} if environ is None else dict(environ)
        return Store(resolve_store_config(settings, str(base), environ=env))

    def snapshot(self) -> Snapshot:
        """The whole tmp tree, except the lock cache (lock files are not memories)."""
        return snapshot_tree(self.tmp, exclude=[self.cache])

    @contextlib.contextmanager
    def refuses(self, code: str) -> Iterator[pytest.ExceptionInfo[MemoryStoreError]]:
        """Expect a MemoryStoreError with this code that leaves every file as it was."""
        before = self.snapshot()
        with pytest.raises(MemoryStoreError) as info:
            yield info
        assert info.value.code == code, f"expected {code}, got {info.value.code}: {info.value}"
        assert str(info.value).strip(), "the error must say what went wrong"
        after = self.snapshot()
        assert after == before, f"refused {code} but changed {sorted(changed_paths(before, after))}"
