"""Sorted names per scope: prefix lookups by bisection, substring, in-order and one-typo matches."""

from __future__ import annotations

import bisect
import itertools
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from memory_ls.core.services.backlinks import hold
from memory_ls.core.storage.memory import MemoryFile

# Beyond the prefix matches, typed text is also looked for inside names and as letters
# in order; typos are tried as one-letter edits of the prefix, for texts this long.
TYPO_MIN_CHARS = 3
TYPO_MAX_CHARS = 32
_TYPO_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789_-./ "
# Letters typed in order are looked for in at most this many names per request.
FUZZY_WINDOW_NAMES = 2000
# The joined text the fuzzy scans search is rebuilt after this many names came or went
# (meanwhile the changed names are checked one by one).
FUZZY_REBUILD_CHANGES = 1000
_HIGHEST = "\U0010ffff"


class _FuzzyText:
    """One scope's casefolded names joined by newlines, for C-speed substring scans."""

    def __init__(self, folded: Sequence[str], names: Sequence[str]) -> None:
        self.text = "\n" + "\n".join(folded) + "\n"
        self.names = tuple(names)
        # starts[i] is where name i begins in the text; starts[-1] is the text's end.
        self.starts = list(itertools.accumulate((len(f) + 1 for f in folded), initial=1))

    def hits(self, find: Callable[[str, int, int], int], lines: range) -> Iterator[str]:
        """Names of `lines` (in order) in whose line `find(text, start, end)` finds something."""
        if not lines:
            return
        end = self.starts[lines.stop] - 1
        at = find(self.text, self.starts[lines.start], end)
        while at >= 0:
            line = bisect.bisect_right(self.starts, at) - 1
            yield self.names[line]
            at = find(self.text, self.starts[line + 1], end)


class SortedNames:
    """The valid names of one scope, sorted by (casefolded, exact) for prefix lookups."""

    def __init__(
        self, pairs: Sequence[tuple[str, str]] = (), exact: list[str] | None = None
    ) -> None:
        # `pairs` are (casefolded, name), sorted; `exact` the same names sorted, if known.
        self.folded = [folded for folded, _ in pairs]
        self.names = [name for _, name in pairs]
        # The same names in code-point order: how many match a prefix with its exact case.
        self.exact = sorted(self.names) if exact is None else exact
        self._fuzzy: _FuzzyText | None = None
        self._added: list[str] = []  # since the fuzzy text was built
        self._removed: set[str] = set()

    def __len__(self) -> int:
        return len(self.names)

    def _position(self, name: str) -> tuple[int, bool]:
        folded = name.casefold()
        low = bisect.bisect_left(self.folded, folded)
        high = bisect.bisect_right(self.folded, folded, low)
        at = bisect.bisect_left(self.names, name, low, high)
        return at, at < high and self.names[at] == name

    def add(self, name: str) -> None:
        """Add a name (no-op when present)."""
        at, present = self._position(name)
        if present:
            return
        self.folded.insert(at, _folded(name))
        self.names.insert(at, name)
        bisect.insort(self.exact, name)
        if self._fuzzy is not None:
            if name in self._removed:
                self._removed.discard(name)
            else:
                self._added.append(name)

    def discard(self, name: str) -> None:
        """Remove a name (no-op when absent)."""
        at, present = self._position(name)
        if not present:
            return
        del self.folded[at]
        del self.names[at]
        del self.exact[bisect.bisect_left(self.exact, name)]
        if self._fuzzy is not None:
            if name in self._added:
                self._added.remove(name)
            else:
                self._removed.add(name)

    def with_prefix(self, prefix: str, limit: int) -> tuple[list[str], int]:
        """Up to `limit` names starting with `prefix` ignoring case, exact-case ones first,
        and how many there are in all."""
        folded = prefix.casefold()
        low = bisect.bisect_left(self.folded, folded)
        high = bisect.bisect_left(self.folded, folded + _HIGHEST, low)
        total = high - low
        exact = bisect.bisect_left(self.exact, prefix + _HIGHEST) - bisect.bisect_left(
            self.exact, prefix
        )
        if exact in (0, total):  # one kind only: sorted order is the ranked order
            return self.names[low : min(high, low + limit)], total
        # Mixed cases: exact-case matches first, each kind in sorted order (C-level filters
        # that stop as soon as they have enough).
        window = self.names[low:high]
        exact_case = operator.methodcaller("startswith", prefix)
        first = list(itertools.islice(filter(exact_case, window), min(limit, exact)))
        other = itertools.islice(itertools.filterfalse(exact_case, window), limit - len(first))
        return first + list(other), total

    def fuzzy(self, typed: str, limit: int, skip: set[str]) -> list[str]:
        """Up to `limit` names (none of `skip`) holding `typed` ignoring case: as a
        substring, then as letters in order, then as a prefix with one typo."""
        folded = typed.casefold()
        if "\n" in folded:
            return []
        found: list[str] = []
        seen = set(skip)

        def take(names: Iterable[str]) -> bool:
            for name in names:
                if name not in seen and name not in self._removed:
                    seen.add(name)
                    found.append(name)
                    if len(found) >= limit:
                        return True
            return False

        text = self._fuzzy_text()
        added = list(self._added)
        everything = range(len(text.names))
        if take(text.hits(lambda t, at, end: t.find(folded, at, end), everything)):
            return found
        if take(n for n in added if folded in n.casefold()):
            return found
        # Letters in order: a regex, much slower per name than a substring search, so it
        # runs over a window of names from where the typed text sorts (then wrapping).
        in_order = re.compile(
            re.escape(folded[0])
            + "".join(f"[^\\n{re.escape(c)}]*{re.escape(c)}" for c in folded[1:])
        )
        # (The text may predate names added since: positions are clamped to it.)
        first = min(bisect.bisect_left(self.folded, folded), len(everything))
        last = first + FUZZY_WINDOW_NAMES
        for window in (
            range(first, min(last, len(everything))),
            range(min(first, max(0, last - len(everything)))),  # wrapped round
        ):
            if take(
                text.hits(lambda t, at, end: _match_start(in_order.search(t, at, end)), window)
            ):
                return found
        if take(n for n in added if in_order.search(n.casefold())):
            return found
        # Typos are looked for when no name starts with the typed text. One at position i
        # keeps the letters before it: no name starts with those, no variant changing
        # position i or later can match.
        keep = len(folded)
        while keep and not self._folded_count(folded[:keep]):
            keep -= 1
        if TYPO_MIN_CHARS <= len(folded) <= TYPO_MAX_CHARS and keep < len(folded):
            for variant in _one_typo(folded, keep):
                if take(self._with_folded_prefix(variant, limit - len(found))):
                    break
        return found

    def _folded_count(self, folded: str) -> int:
        low = bisect.bisect_left(self.folded, folded)
        return bisect.bisect_left(self.folded, folded + _HIGHEST, low) - low

    def _with_folded_prefix(self, folded: str, limit: int) -> list[str]:
        """Up to `limit` names whose casefolded form starts with `folded`, in sorted order."""
        low = bisect.bisect_left(self.folded, folded)
        high = bisect.bisect_left(self.folded, folded + _HIGHEST, low, min(low + limit, len(self)))
        return self.names[low:high]

    def _fuzzy_text(self) -> _FuzzyText:
        if self._fuzzy is None or len(self._added) + len(self._removed) > FUZZY_REBUILD_CHANGES:
            self._fuzzy = _FuzzyText(self.folded, self.names)
            self._added, self._removed = [], set()
        return self._fuzzy


def _folded(name: str) -> str:
    """A name casefolded, as the name itself where that changes nothing (most names are
    lowercase already: one string, not two, per memory)."""
    folded = name.casefold()
    return name if folded == name else folded


def _match_start(match: re.Match[str] | None) -> int:
    return -1 if match is None else match.start()


def _one_typo(word: str, keep: int) -> Iterator[str]:
    """`word` with one letter dropped, two neighbours swapped, or one letter changed, at
    position `keep` or before."""
    seen = {word}
    positions = range(min(keep + 1, len(word)))
    candidates = itertools.chain(
        (word[:i] + word[i + 1 :] for i in positions),
        (word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in positions if i + 1 < len(word)),
        (word[:i] + c + word[i + 1 :] for i in positions for c in _TYPO_ALPHABET),
    )
    for candidate in candidates:
        if candidate and candidate not in seen:
            seen.add(candidate)
            yield candidate


class NameTable:
    """The valid names of an index's files, each with its files in lookup order, and the
    names per scope, sorted (the index's lock is held around every use)."""

    def __init__(
        self,
        order: Mapping[str, int],
        by_name: dict[str, MemoryFile | list[MemoryFile]] | None = None,
        in_scope: dict[str, set[str]] | None = None,
    ) -> None:
        # Folder path -> its rank in lookup order.
        self._order = order
        # Valid names -> their files in lookup order: the file itself when it is the only
        # one, as nearly every name has (a list each costs 10 MB at 100,000 memories).
        self.by_name: dict[str, MemoryFile | list[MemoryFile]] = {} if by_name is None else by_name
        # Names per scope: every name sorted; per scope, the set of names and (built on
        # first use, then kept current) the scope's own sorted names.
        self.views: dict[str | None, SortedNames | None] = {
            None: SortedNames(sorted((_folded(name), name) for name in self.by_name)),
            "project": None,
            "global": None,
        }
        self.in_scope = {"project": set(), "global": set()} if in_scope is None else in_scope
        self.shadowed: dict[str, MemoryFile] = {
            hidden.path: held[0]
            for held in self.by_name.values()
            if isinstance(held, list)
            for hidden in held[1:]
        }

    @classmethod
    def of(cls, order: Mapping[str, int], found: Iterable[MemoryFile]) -> NameTable:
        """The names of the files a scan found (folder by folder in lookup order)."""
        by_name: dict[str, MemoryFile | list[MemoryFile]] = {}
        in_scope: dict[str, set[str]] = {"project": set(), "global": set()}
        for memory in found:  # folder by folder in lookup order, so each list is ranked
            if memory.valid:
                # Keyed by Serena's name: `x` and `global/x` are two memories.
                qualified = memory.qualified
                hold(by_name, qualified, memory)
                in_scope[memory.folder.scope].add(qualified)
        return cls(order, by_name, in_scope)

    def add(self, name: str, memory: MemoryFile) -> None:
        """A valid file came: its name gets it in lookup order."""
        before = self.named(name)
        self._set_named(name, sorted((*before, memory), key=self._rank))
        self._name_changed(name, before)

    def remove(self, name: str, path: str) -> None:
        """A file went: its name loses it."""
        before = self.named(name)
        if before:
            self._set_named(name, [f for f in before if f.path != path])
            self._name_changed(name, before)

    def _rank(self, memory: MemoryFile) -> int:
        return self._order.get(memory.folder.path, len(self._order))

    def named(self, name: str) -> Sequence[MemoryFile]:
        """The files of a valid name, in lookup order (lock held)."""
        held = self.by_name.get(name)
        if held is None:
            return ()
        return (held,) if isinstance(held, MemoryFile) else tuple(held)

    def _set_named(self, name: str, files: Sequence[MemoryFile]) -> None:
        """Record the files of a valid name, in lookup order (lock held)."""
        if not files:
            self.by_name.pop(name, None)
        else:
            self.by_name[name] = files[0] if len(files) == 1 else list(files)

    def _name_changed(self, name: str, before: Sequence[MemoryFile]) -> None:
        """Bring the views, scopes and shadows of one name up to date (lock held)."""
        after = self.named(name)
        for hidden in before[1:]:
            self.shadowed.pop(hidden.path, None)
        for hidden in after[1:]:
            self.shadowed[hidden.path] = after[0]
        for scope in (None, "project", "global"):
            was = any(scope is None or f.scope == scope for f in before)
            now = any(scope is None or f.scope == scope for f in after)
            if was == now:
                continue
            if scope is not None:
                (self.in_scope[scope].add if now else self.in_scope[scope].discard)(name)
            view = self.views[scope]
            if view is not None:
                (view.add if now else view.discard)(name)

    def view(self, scope: str | None) -> SortedNames:
        """The sorted names of a scope (lock held); a scope's own is made on first use."""
        view = self.views[scope]
        if view is None:
            every = self.views[None]
            assert every is not None and scope is not None
            wanted = self.in_scope[scope]
            view = SortedNames(
                [pair for pair in zip(every.folded, every.names, strict=True) if pair[1] in wanted],
                [name for name in every.exact if name in wanted],
            )
            self.views[scope] = view
        return view

    def complete(self, typed: str, scope: str | None, limit: int) -> tuple[list[str], bool]:
        """`MemoryIndex.complete_names` (lock held)."""
        view = self.view(scope)
        if not typed:
            return view.names[:limit], len(view) > limit
        found, total = view.with_prefix(typed, limit)
        if total > limit:
            return found, True
        if len(typed) > 1:
            found += view.fuzzy(typed, limit + 1 - len(found), set(found))
        return found[:limit], len(found) > limit

    def winners(
        self, names: Iterable[str], scope: str | None
    ) -> list[tuple[MemoryFile, int] | None]:
        """`MemoryIndex.winners` (lock held)."""
        found: list[tuple[MemoryFile, int] | None] = []
        for name in names:
            files = self.named(name)
            if scope is not None:
                files = [f for f in files if f.scope == scope]
            found.append((files[0], len(files) - 1) if files else None)
        return found
