"""Who links to whom: each file's link keys and, per key, the files that hold it.

A file's keys are the target of each of its references (`find_references`: `[[x]]`,
`[[global/x]]`, `` `mem:x` ``, outside frontmatter and fenced code), and, for renames,
one key per bare `mem:` that Serena's rename_memory could rewrite (anywhere in the file):
the run of name characters that follows it, marked with SERENA_MARK. The index only says
which files to read: callers read those files again and parse them, so a stale or
over-wide key costs a read, never a wrong answer.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence

from memory_ls.core.names import MEM_PREFIX
from memory_ls.core.references import find_references

# Keys of Serena's `mem:` mentions start with a character no reference target holds
# (targets never span lines), so the two kinds of key cannot meet.
SERENA_MARK = "\n"
# Serena's name characters (core/references.py): a `mem:` preceded by one is no mention.
_NAME_CHARS = "A-Za-z0-9_\\-/"
_SERENA_MENTION = re.compile(rf"(?<![{_NAME_CHARS}]){re.escape(MEM_PREFIX)}([{_NAME_CHARS}]*)")
_NAME_RUN = re.compile(rf"[{_NAME_CHARS}]*")


def link_keys(text: str) -> tuple[str, ...]:
    """The keys a Markdown text is indexed under, each once."""
    keys = dict.fromkeys(ref.target for ref in find_references(text))
    if MEM_PREFIX in text:
        for match in _SERENA_MENTION.finditer(text):
            keys.setdefault(SERENA_MARK + match.group(1))
    return tuple(keys)


def serena_key(qualified: str) -> str:
    """The key under which every `mem:NAME` that Serena's rename of `qualified` rewrites is
    found: a mention of the name is followed by a character that ends the run of name
    characters, so the run is the name's own leading run."""
    run = _NAME_RUN.match(qualified)
    return SERENA_MARK + (run.group(0) if run else "")


class LinkIndex:
    """Key -> the paths of the files that hold it (the owner holds a lock around every call).

    Keys are interned, so a name linked from a thousand files is one string, and the
    key tuples kept per file share them.
    """

    def __init__(self) -> None:
        self._sources: dict[str, list[str]] = {}

    def add(self, path: str, keys: Sequence[str]) -> tuple[str, ...]:
        """Record that `path` holds `keys`; return the keys as the shared strings to keep."""
        if not keys:
            return ()
        shared = tuple(sys.intern(key) for key in keys)
        for key in shared:
            paths = self._sources.get(key)
            if paths is None:
                self._sources[key] = [path]
            else:
                paths.append(path)
        return shared

    def remove(self, path: str, keys: Iterable[str]) -> None:
        """Forget that `path` holds `keys`."""
        for key in keys:
            paths = self._sources.get(key)
            if paths is None:
                continue
            try:
                paths.remove(path)
            except ValueError:
                continue
            if not paths:
                del self._sources[key]

    def sources(self, key: str) -> list[str]:
        """The paths that hold `key`."""
        return list(self._sources.get(key, ()))

    def count(self, key: str) -> int:
        """How many files hold `key`."""
        return len(self._sources.get(key, ()))

    def clear(self) -> None:
        """Forget everything."""
        self._sources = {}
