"""The same fact kept in two places: a CLAUDE.md line also in AGENTS.md, in auto memory or
in a memory (`near-duplicate` on agents' files).

Claude Code's users report facts duplicated between auto memory and CLAUDE.md
(anthropics/claude-code#38402): two copies drift apart and the agent reads both. A fact
is a list item or line of prose (`rules.agent_syntax.fact_lines`); two are the same when
their normalised words are. Only the agents' files are reported, each occurrence naming
the others; the memories they match are named, not flagged (their own near-duplicate
check is by whole memory).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable

from memory_ls.core.rules.agent_syntax import fact_lines
from memory_ls.core.services.diagnostics import Diagnostic

SHOWN_PLACES = 3


class SharedFacts:
    """The facts of agents' files, and where else each one is written."""

    def __init__(self) -> None:
        self._facts: dict[str, list[tuple[str, int]]] = defaultdict(list)
        self._agent_paths: set[str] = set()
        self._elsewhere: dict[str, list[tuple[str, int]]] = defaultdict(list)

    def add_agent_file(self, path: str, text: str) -> None:
        """An agent's file: its facts are the ones looked for."""
        if path in self._agent_paths:
            return
        self._agent_paths.add(path)
        for line, fact in fact_lines(text):
            self._facts[fact].append((path, line))

    def see(self, path: str, text: str) -> None:
        """A memory: where it repeats an agent file's fact."""
        if not self._facts or path in self._agent_paths:
            return
        for line, fact in fact_lines(text):
            if fact in self._facts:
                self._elsewhere[fact].append((path, line))

    def diagnostics(self, shown: Callable[[str], str]) -> list[Diagnostic]:
        """`near-duplicate` on every agent-file line whose fact is written elsewhere too."""
        found: list[Diagnostic] = []
        for fact, places in self._facts.items():
            others = self._elsewhere.get(fact, [])
            if len(places) + len(others) < 2:
                continue
            for path, line in places:
                rest = [p for p in places if p != (path, line)] + others
                named = ", ".join(f"{shown(p)} line {n + 1}" for p, n in rest[:SHOWN_PLACES])
                more = len(rest) - SHOWN_PLACES
                if more > 0:
                    named += f" and {more} more"
                found.append(
                    Diagnostic(
                        path,
                        line,
                        0,
                        line,
                        0,
                        "near-duplicate",
                        f"The same fact is also written in {named}; the agent reads every "
                        "copy and they drift apart. Keep it in one place.",
                        data={"places": [{"path": p, "line": n + 1} for p, n in rest]},
                    )
                )
        return found


def display_path(root: str) -> Callable[[str], str]:
    """Paths for messages: relative to the root inside it, `~/…` in the home, else whole."""
    home = os.path.expanduser("~")

    def shown(path: str) -> str:
        relative = os.path.relpath(path, root)
        if not relative.startswith(".."):
            return relative.replace(os.sep, "/")
        if path.startswith(home + os.sep):
            return "~" + path[len(home) :]
        return path

    return shown
