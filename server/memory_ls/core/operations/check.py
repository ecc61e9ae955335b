"""`memory-ls check`'s run over a store: the diagnostics of every memory (or of the files
and folders given), the store-wide ones (supersede relations, near duplicates) and, for the
whole store, the repository's merge-driver setup; `check --staged` (the pre-commit hook)
adds what the staged changes do to other memories and to read-only ones."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace

from memory_ls.core.layouts import find_agent_files
from memory_ls.core.rules.errors import InvalidArguments
from memory_ls.core.rules.references import find_references
from memory_ls.core.rules.similarity import KeyTable
from memory_ls.core.rules.supersede import Declaration, SupersedeGraph, declaration_of_text
from memory_ls.core.services.agent_checks import agent_diagnostics, reader
from memory_ls.core.services.agent_facts import SharedFacts, display_path
from memory_ls.core.services.diagnostics import (
    Diagnostic,
    NameIndex,
    apply_severities,
    expand_paths,
    read_declaration,
    read_for_check,
    repository_snapshot,
    shadow_map,
    store_duplicates,
    supersede_counts,
    supersede_diagnostics,
    text_diagnostics,
)
from memory_ls.core.services.formats import report_base
from memory_ls.core.services.merge_driver_check import merge_driver_diagnostics
from memory_ls.core.storage.agent_repository import repository_of
from memory_ls.core.storage.git import git_output
from memory_ls.core.storage.memory import MemoryFile
from memory_ls.core.store import Store


def check_store(store: Store, paths: Sequence[str] = ()) -> list[Diagnostic]:
    """Diagnostics for the whole store, or for the given files and folders only."""
    memories = store.scan()
    index = NameIndex.of(memories)
    # One `git ls-files` for the whole run rather than a stat per path (see stale_paths).
    exists = repository_snapshot(store.config)
    shadowed = shadow_map(memories)
    by_path = {m.path: m for m in memories}
    targets = expand_paths(paths) if paths else [m.path for m in memories]
    agents = _AgentFilesCheck(store, targets if paths else None)
    found: list[Diagnostic] = []
    duplicates = KeyTable() if store.config.severities.get("near-duplicate") != "off" else None
    declarations: dict[str, Declaration] = {}
    checked: list[MemoryFile] = []
    for path in targets:
        memory = by_path.get(os.path.abspath(path))
        try:
            text, size, encoding_problem = read_for_check(path, store.config.max_memory_bytes)
        except OSError:
            continue
        if duplicates is not None and memory is not None and memory.valid:
            duplicates.add(memory.path, memory.qualified, memory.scope == "global", text)
        if memory is not None and encoding_problem is None:
            agents.see(memory.path, text)
        found.extend(
            text_diagnostics(
                store.config,
                index,
                path,
                text,
                memory,
                shadowed,
                size,
                encoding_problem,
                exists=exists,
            )
        )
        if memory is not None:
            checked.append(memory)
            if text is not None and encoding_problem is None and supersede_counts(memory, shadowed):
                declared = declaration_of_text(memory.qualified, text)
                if declared is not None:
                    declarations[memory.path] = declared
    # Whether a memory is superseded depends on every memory's frontmatter: the files
    # not checked are read for their declarations only.
    if paths:
        for memory in memories:
            if memory.path not in declarations and supersede_counts(memory, shadowed):
                declared = read_declaration(memory, store.config.max_memory_bytes)
                if declared is not None:
                    declarations[memory.path] = declared
    graph = SupersedeGraph(declarations.values(), index.has_qualified)
    for memory in checked:
        if supersede_counts(memory, shadowed):
            found.extend(supersede_diagnostics(memory, graph.declaration(memory.qualified), graph))
    if duplicates is not None:
        found.extend(
            store_duplicates(
                duplicates,
                memories,
                {os.path.abspath(t) for t in targets} if paths else None,
                store.config.max_memory_bytes,
            )
        )
    # A file both a memory and an agent's (Claude Code's topic files in a "claude" store)
    # is checked both ways: each finding once.
    seen = {(d.path, d.line, d.col, d.code) for d in found}
    found.extend(d for d in agents.diagnostics() if (d.path, d.line, d.col, d.code) not in seen)
    if not paths and store.config.severities.get("missing-merge-driver") != "off":
        # The repository's git setup (its .gitattributes): a check of the whole store only.
        found.extend(merge_driver_diagnostics(store.config.root))
    return apply_severities(found, store.config.severities)


def check_staged(store: Store, paths: Sequence[str] = ()) -> list[Diagnostic]:
    """The given files' diagnostics, plus what the staged changes (the index against HEAD)
    do: each memory linking to a memory they delete or rename is checked for those links
    (pre-commit passes no deleted file), and each change to a read-only memory is a
    `read-only-changed` error. The staged files are read from the working tree, as
    pre-commit leaves it (unstaged changes put aside)."""
    from memory_ls.core.operations.changes import (
        EMPTY_TREE,
        classify,
        memory_pathspecs,
        parse_name_status,
    )
    from memory_ls.core.operations.changes_guard import MergedSide, read_only_diagnostic

    root = store.config.root
    if git_output(root, ["rev-parse", "--is-inside-work-tree"]) is None:
        raise InvalidArguments(f"{root} is not in a git work tree: --staged needs git")
    top = report_base(root)
    pathspecs = memory_pathspecs(store, top)
    staged = b""
    if pathspecs:
        head = git_output(top, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])
        base = head.decode().strip() if head else EMPTY_TREE
        compare = ["diff", "--cached", "-M", "--name-status", "-z", "--no-ext-diff"]
        found_diff = git_output(top, [*compare, base, *pathspecs])
        if found_diff is None:
            raise InvalidArguments("git could not compare the index with HEAD")
        staged = found_diff
    changes = classify(store, top, parse_name_status(staged))
    # Concluding a merge: what the merged branch changed is staged too, and not this commit's.
    merged = MergedSide(top, staged=True)
    guard = [
        d
        for c in changes
        if (
            d := read_only_diagnostic(
                store.config,
                top,
                (c.status, c.name, c.path, c.old_name, c.old_path),
                "the staged changes",
                merged,
            )
        )
        is not None
    ]
    # Each name the staged changes take away, with what became of it.
    removed = {c.name: "is deleted" for c in changes if c.status == "deleted"}
    removed.update(
        {c.old_name: f"is renamed to {c.name}" for c in changes if c.old_name is not None}
    )
    given = {os.path.abspath(p) for p in expand_paths(paths)}
    linking = [p for p in _linking(store, removed) if p not in given]
    found = apply_severities(guard, store.config.severities)
    if not given and not linking:
        return found  # check_store of no path would check the whole store
    for d in check_store(store, [*paths, *linking]):
        target = _link_target(d) if d.code == "broken-link" else None
        how = removed.get(target) if target is not None else None
        if how is not None:
            d = replace(d, message=f"{d.message} ({target} {how} by the staged changes)")
        # A memory checked for its links only: the links the staged changes broke.
        if how is not None or os.path.abspath(d.path) in given:
            found.append(d)
    return found


def _link_target(d: Diagnostic) -> str | None:
    """The name a link diagnostic is about, `global/` included."""
    name = d.data.get("name")
    if not isinstance(name, str):
        return None
    return ("global/" if d.data.get("isGlobal") else "") + name


def _linking(store: Store, names: dict[str, str]) -> list[str]:
    """The project memories whose references name one of `names`."""
    if not names:
        return []
    found = []
    for memory in store.scan():
        if memory.scope == "global":  # not the repository's: a commit cannot fix them
            continue
        try:
            text, _size, problem = read_for_check(memory.path, store.config.max_memory_bytes)
        except OSError:
            continue
        if text is None or problem is not None or not any(name in text for name in names):
            continue
        if any(ref.target in names for ref in find_references(text)):
            found.append(memory.path)
    return found


class _AgentFilesCheck:
    """Other agents' files (CLAUDE.md, AGENTS.md, rules, auto memory): all, or those given;
    their facts looked for in the memories as the memories are read."""

    def __init__(self, store: Store, targets: Sequence[str] | None) -> None:
        self.config = store.config
        self.repository = repository_of(store.config.root)
        # The user's own files (~/.claude/CLAUDE.md) are not the repository's: a check of
        # the repository must not fail on them. Auto memory is this project's, though in
        # the home folder.
        files = [f for f in find_agent_files(self.repository) if f.scope == "project"]
        if targets is not None:
            wanted = {os.path.abspath(t) for t in targets}
            files = [f for f in files if f.path in wanted]
        self.files = files
        self.read = reader(store.config.max_memory_bytes)
        self.facts: SharedFacts | None = None
        if files and store.config.severities.get("near-duplicate") != "off":
            self.facts = SharedFacts()
            for agent_file in files:
                text = self.read(agent_file.path)
                if text is not None:
                    self.facts.add_agent_file(agent_file.path, text)

    def see(self, path: str, text: str | None) -> None:
        """A memory read by the check: does it repeat an agent file's fact?"""
        if self.facts is not None and text is not None:
            self.facts.see(path, text)

    def diagnostics(self) -> list[Diagnostic]:
        """What the agents' files hold that their agents would trip on."""
        if not self.files:
            return []
        found = agent_diagnostics(self.config, self.repository, self.files, self.read)
        if self.facts is not None:
            found.extend(self.facts.diagnostics(display_path(self.config.root)))
        return found
