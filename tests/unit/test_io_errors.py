"""`io-error` (SPEC 3.3): the file system refuses; nothing is half-written; front ends say so.

Real failures where this machine allows them: an immutable folder (`chattr +i`, EPERM), a
full tmpfs (ENOSPC) and a read-only remount (EROFS), which need root; those tests are
skipped elsewhere. Failures no test can provoke as root (EACCES on a read, EIO from
fsync) are injected at the system-call boundary with monkeypatch.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_helpers import Workspace

from memory_ls.core.rules.errors import IoError, MemoryStoreError
from memory_ls.core.storage import fsio
from memory_ls.lsp.commands import refusal


def _run(*command: str) -> bool:
    """Run a system command; whether it worked."""
    try:
        return subprocess.run(command, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@contextlib.contextmanager
def immutable(path: Path) -> Iterator[None]:
    """The folder made immutable (no file created, replaced or removed in it)."""
    if os.geteuid() != 0 or not _run("chattr", "+i", str(path)):
        pytest.skip("needs root and chattr +i on this file system")
    try:
        yield
    finally:
        _run("chattr", "-i", str(path))


@contextlib.contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A small tmpfs mounted at path."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or not _run(
        "mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)
    ):
        pytest.skip("needs root and mount")
    try:
        yield path
    finally:
        _run("umount", "-l", str(path))


def _temp_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if fsio.is_temp_file(p.name)]


def test_an_immutable_folder_refuses_every_write(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "notes.md", "---\ntags: [a]\n---\nnotes\n")
    ws.write(ws.primary / "other.md", "see `mem:notes`\n")
    with immutable(ws.primary):
        for call in (
            lambda: store.save("new", "x"),
            lambda: store.save("notes", "changed"),
            lambda: store.save("topic/deep", "x"),
            lambda: store.edit("notes", needle="notes", replacement="x"),
            lambda: store.edit("notes", content="x"),
            lambda: store.delete("notes"),
            lambda: store.move("notes", "renamed"),
        ):
            with ws.refuses("io-error") as refused:
                call()
            assert "Operation not permitted (EPERM)" in refused.value.message
            assert str(ws.primary) in refused.value.message
            assert isinstance(refused.value, OSError) and refused.value.errno == errno.EPERM
        assert store.read("notes")["content"] == "notes\n"


def test_a_full_disk_leaves_the_old_file_and_no_temp_file(ws: Workspace) -> None:
    with tmpfs(ws.primary, "64k"):
        store = ws.store()
        store.save("notes", "small\n")
        with ws.refuses("io-error") as refused:
            store.save("notes", "x" * 200_000)
        assert "No space left on device (ENOSPC)" in refused.value.message
        assert "nothing was written" in refused.value.message
        assert (ws.primary / "notes.md").read_bytes() == b"small\n"
        with ws.refuses("io-error"):
            store.save("topic/sub/big", "x" * 200_000)
        assert not (ws.primary / "topic").exists(), "the folders made for it are removed"
        assert _temp_files(ws.primary) == []


def test_a_read_only_file_system_refuses_writes_and_still_reads(ws: Workspace) -> None:
    with tmpfs(ws.primary, "1m"):
        store = ws.store()
        store.save("notes", "notes\n")
        assert _run("mount", "-o", "remount,ro", str(ws.primary))
        with ws.refuses("io-error") as refused:
            store.edit("notes", content="new\n")
        assert "Read-only file system (EROFS)" in refused.value.message
        assert store.read("notes")["content"] == "notes\n"


def test_a_lock_that_cannot_be_taken_is_an_io_error(ws: Workspace) -> None:
    store = ws.store()
    store.save("notes", "notes\n")  # makes the lock folder in the user's cache
    locks = ws.cache / "memory-ls" / "locks"
    fsio._locks.clear()  # forget the open lock objects: the next write opens the lock file
    for lock_file in locks.iterdir():
        lock_file.unlink()
    with immutable(locks), ws.refuses("io-error") as refused:
        store.save("notes", "changed\n")
    assert "refused to lock the folder" in refused.value.message
    assert str(locks) in refused.value.message


def test_a_read_refused_is_an_io_error_and_a_listing_skips_it(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ws.store()
    ws.write(ws.primary / "secret.md", "body\n")
    real_open = builtins.open

    def refusing_open(file: object, *args: object, **kwargs: object) -> object:
        if str(file).endswith("secret.md"):
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(builtins, "open", refusing_open)
    with ws.refuses("io-error") as refused:
        store.read("secret")
    assert "refused to read" in refused.value.message
    assert "Permission denied (EACCES)" in refused.value.message
    assert "nothing was written" not in refused.value.message
    assert [m["name"] for m in store.list_memories()["memories"]] == ["secret"]


def test_a_failed_fsync_removes_the_temp_file(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ws.store()
    store.save("notes", "old\n")

    def failing_fsync(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with ws.refuses("io-error") as refused:
        store.save("notes", "new\n")
    assert "Input/output error (EIO)" in refused.value.message
    assert (ws.primary / "notes.md").read_bytes() == b"old\n"


def test_a_file_that_is_gone_stays_an_os_error_for_readers(tmp_path: Path) -> None:
    # Readers decide on a missing file or a refused link themselves: not an io-error.
    with pytest.raises(FileNotFoundError) as caught:
        fsio.read_text(str(tmp_path / "missing.md"))
    assert not isinstance(caught.value, MemoryStoreError)


def test_the_lsp_answers_with_the_code() -> None:
    error = IoError("The file system refused to write /m/x.md: Disk quota exceeded (EDQUOT).")
    answer = refusal(error)
    assert answer.data == {"code": "io-error"}
    assert answer.message == error.message


def test_the_cli_exits_3_with_the_code(ws: Workspace) -> None:
    store = ws.store()
    store.save("notes", "notes\n")
    env = {**os.environ, "HOME": str(ws.home), "XDG_CACHE_HOME": str(ws.cache)}
    with immutable(ws.primary):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "memory_ls.cli",
                "edit",
                "notes",
                "--needle",
                "notes",
                "--replacement",
                "x",
            ],
            cwd=ws.root,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith("memory-ls: error: [io-error] The file system refused to write ")


def test_the_mcp_server_answers_with_the_code(ws: Workspace) -> None:
    pytest.importorskip("mcp")
    from memory_ls.mcp.answers import refusal as _refusal

    result = _refusal(IoError("The file system refused to delete /m/x.md: (EROFS)."))
    assert result.is_error
    assert result.content[0].text.startswith("[io-error] The file system refused")  # type: ignore[union-attr]
