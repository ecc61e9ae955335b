"""glibc's malloc tuned for the server process: resident memory that follows the live data.

glibc's malloc gives each thread that meets contention a heap (an "arena") of its own, up
to eight per CPU, and memory freed in one is not handed back while anything else lives
in it. The server runs the event loop, indexing, the disk check and a file watcher on
threads of their own, and at 100,000 memories the extra arenas held some 20 MiB of freed
memory (bench/run.py, RSS 239 -> 218 MiB). Two arenas keep the threads from queuing on
one lock, as the `MALLOC_ARENA_MAX=2` that long-running Python services set. And large
blocks are always mapped on their own (`fix_mmap_threshold`), so that freeing them gives
the memory back.
"""

from __future__ import annotations

import logging
import os

logger = logging.getLogger(__name__)

ARENAS = 2
_M_ARENA_MAX = -8  # malloc.h
_M_MMAP_THRESHOLD = -3
# Blocks this large or larger are mapped on their own and unmapped when freed (glibc's
# starting value, kept: see `fix_mmap_threshold`).
MMAP_THRESHOLD = 128 * 1024


def limit_malloc_arenas(arenas: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas (before the process starts threads); whether it took.

    A no-op elsewhere (macOS, Windows, musl) and where MALLOC_ARENA_MAX is set already.
    """
    return _mallopt("MALLOC_ARENA_MAX", _M_ARENA_MAX, arenas)


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> bool:
    """Keep glibc from raising its mmap threshold; whether it took.

    glibc raises the threshold to the size of each mapped block freed, so after one
    search's 4 MiB of joined files (core/services/relevance.py) the next came from the heap, and
    the holes they left among small blocks stayed resident: at 100,000 memories the first
    minute ended with 36 MiB free in a 76 MiB heap, and the server's peak was 244 to 259
    MiB. With the threshold fixed, 1 to 3 MiB free, and the peak 237 (bench/first_run.py).
    A no-op elsewhere and where MALLOC_MMAP_THRESHOLD_ is set already.
    """
    return _mallopt("MALLOC_MMAP_THRESHOLD_", _M_MMAP_THRESHOLD, threshold)


def _mallopt(variable: str, option: int, value: int) -> bool:
    """glibc's `mallopt(option, value)` unless the user set `variable`; whether it took."""
    if variable in os.environ:
        return False
    try:
        if not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"):
            return False
    except (ValueError, OSError, AttributeError):  # no such name on this system
        return False
    import ctypes  # only here: a few milliseconds of import on other paths

    try:
        return bool(ctypes.CDLL(None).mallopt(option, value))
    except (OSError, AttributeError) as exc:
        logger.debug("mallopt unavailable: %s", exc)
        return False
