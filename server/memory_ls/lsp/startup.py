"""The server's start, made shorter: generated code is compiled once, not at every start.

lsprotocol defines some 570 attrs classes. For each one attrs writes its methods
(`__init__`, `__repr__`, `__eq__`, ...) as source text and compiles it while the module is
imported, and cattrs does the same for the converters the first messages need. The text
is the same at every start, and compiling it took 0.3 s of the server's 1 s start on the
2-core machine. Between `begin()` and `end()`, `compile()` of source text is answered from
a cache of code objects in the user's cache folder (marshal, the format of `.pyc`
files); `end()` writes back the entries this start used, so the file holds exactly what
one start needs and follows library upgrades.

Cyclic garbage collection is off for the same span: imports make hundreds of thousands
of objects and nothing to collect, and the collector walked them again and again.
"""

from __future__ import annotations
import __future__

import builtins
import contextlib
import gc
import hashlib
import importlib.util
import logging
import marshal
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import CodeType
from typing import Any

from memory_ls.core.storage.fsio import user_cache_dir

logger = logging.getLogger(__name__)

# The flags `compile()` takes over from the code that calls it (its `__future__` imports).
_FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag

_real_compile: Callable[..., Any] = builtins.compile
_active: _CompileCache | None = None


def cache_path() -> Path:
    """The cache file, one per bytecode format (it is marshal data, like a `.pyc`)."""
    tag = sys.implementation.cache_tag or "python"
    return user_cache_dir() / f"compiled-{tag}-{importlib.util.MAGIC_NUMBER.hex()}.marshal"


class _CompileCache:
    """Code objects by what was compiled (text, file name, mode, flags, optimisation)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.known: dict[bytes, CodeType] = _load(path)
        self.used: dict[bytes, CodeType] = {}
        self.compiled = 0
        self.lock = threading.Lock()

    def compile(
        self,
        source: Any,
        filename: Any,
        mode: str,
        flags: int = 0,
        dont_inherit: bool = False,
        optimize: int = -1,
        **more: Any,
    ) -> Any:
        """`compile()` as the caller would have had it, from the cache where it can be."""
        if not dont_inherit:
            # Called from here, compile() would take over this module's `__future__`
            # imports instead of the caller's: pass the caller's on explicitly.
            flags |= sys._getframe(1).f_code.co_flags & _FUTURE_FLAGS
        if more or not isinstance(source, str) or flags & ~_FUTURE_FLAGS:
            # Bytes, ASTs, or flags such as "give me an AST": not what this cache is for.
            return _real_compile(source, filename, mode, flags, True, optimize, **more)
        key = _key(source, filename, mode, flags, optimize)
        code = self.known.get(key)
        if code is None:
            code = _real_compile(source, filename, mode, flags, True, optimize)
            with self.lock:
                self.compiled += 1
        self.used[key] = code
        return code

    def save(self) -> None:
        """Write what this start used, if that differs from what the file held."""
        if not self.compiled and self.used.keys() == self.known.keys():
            return
        data = marshal.dumps(self.used)
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(prefix=self.path.name, dir=self.path.parent)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                os.replace(temporary, self.path)
            except OSError:
                os.unlink(temporary)
                raise


def _key(source: str, filename: Any, mode: str, flags: int, optimize: int) -> bytes:
    digest = hashlib.blake2b(digest_size=20)
    digest.update(f"{os.fspath(filename)}\0{mode}\0{flags}\0{optimize}\0".encode())
    digest.update(source.encode("utf-8", "surrogatepass"))
    return digest.digest()


def _load(path: Path) -> dict[bytes, CodeType]:
    """The cached code objects; none when the file is missing, foreign or damaged."""
    try:
        data = marshal.loads(path.read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, EOFError, TypeError) as exc:
        logger.info("compile cache %s unreadable (%s); it is made again", path, exc)
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, bytes) and isinstance(v, CodeType)}


def begin(path: Path | None = None) -> None:
    """Answer `compile()` from the cache and pause cyclic garbage collection."""
    global _active
    if _active is not None:
        return
    _active = _CompileCache(path or cache_path())
    builtins.compile = _active.compile
    pause_collection()


def end() -> None:
    """Restore `compile()` and garbage collection; write the cache in the background."""
    global _active
    cache, _active = _active, None
    if cache is None:
        return
    builtins.compile = _real_compile
    # What is alive now (modules, classes) lives as long as the server: collections
    # need not walk it again (frozen when the last pause ends).
    resume_collection()
    threading.Thread(target=cache.save, name="memory-ls-compile-cache", daemon=True).start()


_collection_lock = threading.Lock()
_collection_pauses = 0
_collection_was_enabled = False


def pause_collection() -> None:
    """Stop cyclic garbage collection until as many `resume_collection` calls: the start,
    and each indexing of every file's facts, make hundreds of thousands of objects that
    hold no cycles, and each full collection walks them all with the GIL held (58 of
    them, 60 to 180 ms each, in a first minute at 100,000 memories: a keystroke or a
    search waited behind each). Pauses from several threads overlap."""
    global _collection_pauses, _collection_was_enabled
    with _collection_lock:
        if _collection_pauses == 0:
            _collection_was_enabled = gc.isenabled()
            gc.disable()
        _collection_pauses += 1


def resume_collection() -> None:
    """End one pause; at the last, freeze what lives now (it lives as long as the server:
    collections need not walk it again) and collect again as before the first."""
    global _collection_pauses
    with _collection_lock:
        if _collection_pauses == 0:
            return
        _collection_pauses -= 1
        if _collection_pauses == 0:
            gc.freeze()
            if _collection_was_enabled:
                gc.enable()


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """`pause_collection` for a block."""
    pause_collection()
    try:
        yield
    finally:
        resume_collection()
