"""`broken-link` for a `[[note#Heading]]` whose memory has no such heading (SPEC 3.2)."""

from __future__ import annotations

import collections
import os
import threading

from memory_ls.core.rules.headings import (
    Heading,
    closest_heading,
    find_heading,
    headings,
    wanted_heading,
)
from memory_ls.core.rules.references import Reference
from memory_ls.core.services.diagnostics.base import Diagnostic
from memory_ls.core.storage.folders import StoreConfig
from memory_ls.core.storage.fsio import read_utf8

# Headings of the memories links point into, kept while a file's size and time stay.
_CACHED_FILES = 256


class HeadingCache:
    """The headings of files by path, read again only when the file changed; thread-safe."""

    def __init__(self, size: int = _CACHED_FILES) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._files: collections.OrderedDict[str, tuple[tuple[int, int], list[Heading]]] = (
            collections.OrderedDict()
        )

    def of(self, path: str) -> list[Heading] | None:
        """The headings of a file on disk; None when it is gone or not UTF-8."""
        try:
            info = os.stat(path)
            stamp = (info.st_mtime_ns, info.st_size)
            with self._lock:
                known = self._files.get(path)
                if known is not None and known[0] == stamp:
                    self._files.move_to_end(path)
                    return known[1]
            text = read_utf8(path)
        except OSError:
            return None
        if text is None:
            return None
        found = headings(text)
        with self._lock:
            self._files[path] = (stamp, found)
            self._files.move_to_end(path)
            while len(self._files) > self.size:
                self._files.popitem(last=False)
        return found


HEADINGS = HeadingCache()


def memory_file(config: StoreConfig, name: str, is_global: bool) -> str | None:
    """The file a memory name resolves to: the first folder of its scope in lookup order
    that has it (SPEC 2.3; no fallback), as the Store finds it."""
    for folder in config.folders_in("global" if is_global else "project"):
        path = folder.file_for(name)
        if not os.path.normpath(path).startswith(folder.path.rstrip(os.sep) + os.sep):
            continue
        # A topic folder that is itself another configured folder belongs to that one.
        if os.path.isfile(path) and config.owner_of(path) is folder:
            return path
    return None


def heading_diagnostic(
    path: str, ref: Reference, config: StoreConfig, cache: HeadingCache = HEADINGS
) -> Diagnostic | None:
    """A `broken-link` on the fragment of a link to an existing memory that lacks the
    heading it names; None when the heading is there, or the link names no heading."""
    fragment = ref.fragment
    wanted = wanted_heading(fragment) if fragment else None
    if fragment is None or wanted is None:
        return None  # no fragment, an empty one, or a block reference (`#^id`)
    target = memory_file(config, ref.name, ref.is_global)
    found = cache.of(target) if target is not None else None
    if found is None or find_heading(found, fragment) is not None:
        return None
    close = closest_heading(found, fragment)
    hint = f' Did you mean "{close}"?' if close else " Fix the heading or drop the #part."
    data: dict[str, object] = {"name": ref.name, "isGlobal": ref.is_global, "heading": wanted}
    if close:
        data["suggestion"] = close
    return Diagnostic(
        path,
        ref.line,
        ref.fragment_start,
        ref.line,
        ref.fragment_end,
        "broken-link",
        f'Memory {ref.target} has no heading "{wanted}"; the link opens the top of the note.'
        + hint,
        data=data,
    )
