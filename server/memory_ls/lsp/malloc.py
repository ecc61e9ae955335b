"""Fewer C heaps for the server process: resident memory that follows the live data.

glibc's malloc gives each thread that meets contention a heap (an "arena") of its own, up
to eight per CPU, and memory freed in one is not handed back while anything else lives
in it. The server runs the event loop, indexing, the disk check and a file watcher on
threads of their own, and at 100,000 memories the extra arenas held some 20 MiB of freed
memory (bench/run.py, RSS 239 -> 218 MiB). Two arenas keep the threads from queuing on
one lock, as the `MALLOC_ARENA_MAX=2` that long-running Python services set.
"""

from __future__ import annotations

import logging
import os

logger = logging.getLogger(__name__)

ARENAS = 2
_M_ARENA_MAX = -8  # malloc.h


def limit_malloc_arenas(arenas: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas (before the process starts threads); whether it took.

    A no-op elsewhere (macOS, Windows, musl) and where MALLOC_ARENA_MAX is set already.
    """
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        if not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"):
            return False
    except (ValueError, OSError, AttributeError):  # no such name on this system
        return False
    import ctypes  # only here: a few milliseconds of import on other paths

    try:
        return bool(ctypes.CDLL(None).mallopt(_M_ARENA_MAX, arenas))
    except (OSError, AttributeError) as exc:
        logger.debug("mallopt unavailable: %s", exc)
        return False
