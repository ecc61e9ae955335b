"""Who links to whom: each file's link keys and, per key, the files that hold it.

A file's keys are the target of each of its references (`find_references`: `[[x]]`,
`[[global/x]]`, `` `mem:x` ``, outside frontmatter and fenced code), and, for renames,
one key per bare `mem:` that Serena's rename_memory could rewrite (anywhere in the file):
the run of name characters that follows it, marked with SERENA_MARK. The index only says
which files to read: callers read those files again and parse them, so a stale or
over-wide key costs a read, never a wrong answer.
"""

from __future__ import annotations

import operator
import re
import sys
from collections.abc import Iterable, Sequence
from typing import TypeVar

from memory_ls.core.rules.names import MEM_PREFIX
from memory_ls.core.rules.references import reference_targets

# Keys of Serena's `mem:` mentions start with a character no reference target holds
# (targets never span lines), so the two kinds of key cannot meet.
SERENA_MARK = "\n"
# Serena's name characters (core/rules/references.py): a `mem:` preceded by one is no mention.
_NAME_CHARS = "A-Za-z0-9_\\-/"
_SERENA_MENTION = re.compile(rf"(?<![{_NAME_CHARS}]){re.escape(MEM_PREFIX)}([{_NAME_CHARS}]*)")
_NAME_RUN = re.compile(rf"[{_NAME_CHARS}]*")


def link_keys(text: str) -> tuple[str, ...]:
    """The keys a Markdown text is indexed under, each once."""
    keys = dict.fromkeys(reference_targets(text))
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


K = TypeVar("K")
V = TypeVar("V")


def hold(table: dict[K, V | list[V]], key: K, value: V) -> None:
    """Add `value` to the values of `key`: the value itself while it is the only one (most
    keys have one: a list each costs 10 MB at 100,000 of them), else a list, in order."""
    held = table.get(key)
    if held is None:
        table[key] = value
    elif isinstance(held, list):
        held.append(value)
    else:
        table[key] = [held, value]


class LinkIndex:
    """Key -> the paths of the files that hold it (the owner holds a lock around every call).

    Keys are interned, so a name linked from a thousand files is one string, and the
    key tuples kept per file share them.
    """

    def __init__(self) -> None:
        # A key held by one file maps to its path itself, by several to a list: most keys
        # are held by one file, and a list each costs 10 MB at 100,000 memories.
        self._sources: dict[str, str | list[str]] = {}

    def add(self, path: str, keys: Sequence[str]) -> tuple[str, ...]:
        """Record that `path` holds `keys`; return the keys as the shared strings to keep
        (`keys` itself when it is a tuple of them already)."""
        if not keys:
            return ()
        shared = tuple(map(sys.intern, keys))
        if isinstance(keys, tuple) and all(map(operator.is_, shared, keys)):
            shared = keys
        for key in shared:
            hold(self._sources, key, path)
        return shared

    def remove(self, path: str, keys: Iterable[str]) -> None:
        """Forget that `path` holds `keys`."""
        sources = self._sources
        for key in keys:
            held = sources.get(key)
            if held is None:
                continue
            if isinstance(held, str):
                if held == path:
                    del sources[key]
                continue
            try:
                held.remove(path)
            except ValueError:
                continue
            if len(held) == 1:
                sources[key] = held[0]

    def sources(self, key: str) -> list[str]:
        """The paths that hold `key`."""
        held = self._sources.get(key)
        if held is None:
            return []
        return [held] if isinstance(held, str) else list(held)

    def count(self, key: str) -> int:
        """How many files hold `key`."""
        held = self._sources.get(key)
        if held is None:
            return 0
        return 1 if isinstance(held, str) else len(held)

    def clear(self) -> None:
        """Forget everything."""
        self._sources = {}
