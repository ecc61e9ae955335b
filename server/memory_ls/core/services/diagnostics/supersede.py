"""Supersede relations on a memory: the memories that replace it, and relations that cannot hold."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from memory_ls.core.rules.supersede import (
    SUPERSEDED_BY,
    SUPERSEDES,
    Declaration,
    SupersedeGraph,
    declaration_of_text,
)
from memory_ls.core.services.diagnostics.base import Diagnostic, read_for_check
from memory_ls.core.storage.memory import MemoryFile


def supersede_counts(memory: MemoryFile, shadowed: Mapping[str, MemoryFile]) -> bool:
    """Whether a file's supersede relations count: a valid name's memory, not a file it hides."""
    return memory.valid and memory.path not in shadowed


def read_declaration(memory: MemoryFile, max_memory_bytes: int) -> Declaration | None:
    """What a memory file's frontmatter declares (None: nothing, or unreadable)."""
    try:
        text, _size, problem = read_for_check(memory.path, max_memory_bytes)
    except OSError:
        return None
    if text is None or problem is not None:
        return None
    return declaration_of_text(memory.qualified, text)


def supersede_diagnostics(
    memory: MemoryFile, own: Declaration | None, graph: SupersedeGraph
) -> list[Diagnostic]:
    """`superseded`: a hint on a memory others replace; an error where a relation cannot
    hold (a cycle, a name no memory has, a value that is no name), on the key's line."""
    name = memory.qualified
    if own is None and not graph.touches(name):
        return []
    found: list[Diagnostic] = []

    def at_key(key: str, message: str, data: dict[str, Any]) -> Diagnostic:
        line = own.line_of(key) if own is not None else 0
        return Diagnostic(
            memory.path,
            line,
            0,
            line,
            len(key) if line else 0,
            "superseded",
            message,
            severity="error",
            data=data,
            fixed=True,
        )

    if own is not None:
        for problem in own.relations.problems:
            key = SUPERSEDES if own.supersedes_line else SUPERSEDED_BY
            found.append(
                at_key(
                    key,
                    f"`{key}`: {problem}; write a memory name or a list of names.",
                    {"kind": "invalid"},
                )
            )
        for key, targets in (
            (SUPERSEDES, own.relations.supersedes),
            (SUPERSEDED_BY, own.relations.superseded_by),
        ):
            for target in targets:
                if target == name or graph.exists(target):
                    continue
                found.append(
                    at_key(
                        key,
                        f"`{key}: {target}` names no memory; fix the name or remove it "
                        + (
                            "(agents reading it are not pointed here)."
                            if key == SUPERSEDES
                            else "(agents reading this memory are pointed at nothing)."
                        ),
                        {"kind": "missing", "name": target},
                    )
                )
    cycle = graph.cycle(name, own)
    if cycle is not None:
        declared = own.relations if own is not None else None
        if declared is not None and cycle[1] in declared.superseded_by:
            key = SUPERSEDED_BY
        elif declared is not None and cycle[-2] in declared.supersedes:
            key = SUPERSEDES
        else:
            key = ""
        chain = ", which is superseded by ".join(cycle[1:])
        diagnostic = at_key(
            key or SUPERSEDES,
            f"Supersede cycle: {name} is superseded by {chain}; so none of them is current. "
            "Decide which memory is the newest and remove the keys that say otherwise.",
            {"kind": "cycle", "cycle": cycle},
        )
        found.append(diagnostic if key else replace(diagnostic, line=0, end_line=0, end_col=0))
        return found
    successors = graph.successors(name, own)
    if successors:
        names = " and ".join(s.name for s in successors)
        said = "; ".join(s.said_by(name) for s in successors)
        line = own.superseded_by_line if own is not None and own.relations.superseded_by else 0
        found.append(
            Diagnostic(
                memory.path,
                line,
                0,
                line,
                len(SUPERSEDED_BY) if line else 0,
                "superseded",
                f"Superseded by {names}: read that one; this memory is kept for its history "
                f"({said}). Agents that read it are pointed there; delete it when nothing "
                "here is needed any more.",
                data={"kind": "superseded", "by": [s.name for s in successors]},
            )
        )
    return found
