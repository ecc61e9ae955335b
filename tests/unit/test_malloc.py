"""The server process tunes glibc's malloc (memory_ls/lsp/malloc.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

glibc_only = pytest.mark.skipif(
    sys.platform != "linux" or not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"),
    reason="glibc's malloc only",
)


@glibc_only
def test_the_server_process_caps_glibc_malloc_arenas_unless_the_user_did() -> None:
    probe = "from memory_ls.lsp.malloc import limit_malloc_arenas; print(limit_malloc_arenas())"
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    capped = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert capped.stdout.strip() == "True"
    env["MALLOC_ARENA_MAX"] = "4"
    left = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert left.stdout.strip() == "False", "the user's own setting stands"


# Large blocks freed one after another, with small ones made meanwhile (as a search's
# joined files and the facts learnt beside it): how much the heap grew, in bytes.
_HEAP_PROBE = """
import ctypes, sys
from memory_ls.lsp.malloc import fix_mmap_threshold
class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
        "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
fixed = sys.argv[1] == "fixed" and fix_mmap_threshold()
before = libc.mallinfo2().arena
kept = []
for _ in range(4):
    block = bytes(4 << 20)
    kept += [bytes(600) for _ in range(100)]
    del block
print(fixed, libc.mallinfo2().arena - before)
"""


@glibc_only
def test_freed_large_blocks_leave_no_holes_in_the_heap() -> None:
    """glibc raises its mmap threshold to each mapped block freed: the next 4 MiB came
    from the heap, and small blocks made after it kept the heap that large."""
    grown = {}
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    for mode in ("default", "fixed"):
        done = subprocess.run(
            [sys.executable, "-c", _HEAP_PROBE, mode], env=env, capture_output=True, text=True
        )
        if "mallinfo2" in done.stderr:
            pytest.skip("glibc older than 2.33 (no mallinfo2)")
        assert done.returncode == 0, done.stderr
        fixed, growth = done.stdout.split()
        assert fixed == str(mode == "fixed")
        grown[mode] = int(growth)
    assert grown["default"] >= 4 << 20, "the probe no longer shows the default's growth"
    assert grown["fixed"] < 1 << 20
    # The user's own setting stands.
    env["MALLOC_MMAP_THRESHOLD_"] = str(1 << 20)
    probe = "from memory_ls.lsp.malloc import fix_mmap_threshold; print(fix_mmap_threshold())"
    left = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert left.stdout.strip() == "False"
