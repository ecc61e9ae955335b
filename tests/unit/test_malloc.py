"""The server process caps glibc's malloc arenas (memory_ls/lsp/malloc.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.skipif(
    sys.platform != "linux" or not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"),
    reason="glibc's malloc only",
)
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
