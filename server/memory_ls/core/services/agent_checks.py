"""Diagnostics of other agents' files: imports, MEMORY.md's index and cut, rules' globs.

Claude Code's CLAUDE.md imports (`broken-import`, `import-cycle`, `import-depth`), its
auto memory index (`context-budget` where MEMORY.md stops being loaded, `broken-link` for
an entry naming a missing file, `unindexed-memory` for a topic file no loaded entry
names), the globs that scope Claude Code's, Cursor's and Copilot's rules
(`unmatched-glob`), and the checks every memory gets (`merge-conflict`,
`possible-secret`, `stale-path`, `invalid-frontmatter`) on all of these files.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory_ls.core.layouts import AgentFile, Repository
from memory_ls.core.layouts import claude as claude_layout
from memory_ls.core.layouts import cursor as cursor_layout
from memory_ls.core.rules.agent_syntax import (
    Span,
    find_imports,
    glob_matches_any,
    index_links,
    lenient_frontmatter,
    load_cut,
    looks_like_path,
    split_globs,
)
from memory_ls.core.rules.document import parse_document
from memory_ls.core.rules.stale_paths import lexists, stale_paths
from memory_ls.core.services.diagnostics import (
    Diagnostic,
    conflict_diagnostics,
    read_for_check,
    secret_diagnostics,
    stale_path_diagnostic,
)
from memory_ls.core.storage.folders import StoreConfig

AGENT_CODES = (
    "broken-import",
    "import-cycle",
    "import-depth",
    "unindexed-memory",
    "unmatched-glob",
)
# The scope keys of each agent's rules: Claude Code `paths`, Copilot `applyTo`, Cursor `globs`.
_SCOPE_KEYS = {"claude": "paths", "copilot": "applyTo", "cursor": "globs"}
_AGENT_NAMES = {
    "claude": "Claude Code",
    "codex": "Codex",
    "cursor": "Cursor",
    "copilot": "GitHub Copilot",
    "cline": "Cline",
}

Reader = Callable[[str], "str | None"]


@dataclass
class _Run:
    """One check of agent files: the texts read so far and what was found."""

    config: StoreConfig
    repository: Repository
    read: Reader
    texts: dict[str, str | None] = field(default_factory=dict)
    found: dict[tuple[str, int, int, str], Diagnostic] = field(default_factory=dict)

    def text(self, path: str) -> str | None:
        if path not in self.texts:
            self.texts[path] = self.read(path)
        return self.texts[path]

    def add(self, diagnostic: Diagnostic) -> None:
        key = (diagnostic.path, diagnostic.line, diagnostic.col, diagnostic.code)
        self.found.setdefault(key, diagnostic)

    def enabled(self, code: str) -> bool:
        return self.config.severities.get(code) != "off"


def reader(max_memory_bytes: int) -> Reader:
    """Read a file's text for checking: None when it is missing, not text or far too large."""

    def read(path: str) -> str | None:
        try:
            text, _size, problem = read_for_check(path, max_memory_bytes)
        except OSError:
            return None
        return text if problem is None else None

    return read


def agent_diagnostics(
    config: StoreConfig,
    repository: Repository,
    files: Sequence[AgentFile],
    read: Reader | None = None,
) -> list[Diagnostic]:
    """Every diagnostic of these agent files (their imports followed where they lead)."""
    run = _Run(config, repository, read or reader(config.max_memory_bytes))
    for agent_file in files:
        text = run.text(agent_file.path)
        if text is None:
            continue
        _common(run, agent_file, text)
        if agent_file.layout == "claude" and agent_file.kind == "instructions":
            _imports(run, agent_file.path, text)
        if agent_file.kind == "memory-index":
            _memory_index(run, agent_file, text, files)
        if agent_file.kind == "rule" and agent_file.scope == "project":
            _rule_scope(run, agent_file, text)
    return list(run.found.values())


def _common(run: _Run, agent_file: AgentFile, text: str) -> None:
    """The checks every memory gets, on an agent's file."""
    path = agent_file.path
    for diagnostic in conflict_diagnostics(path, text):
        run.add(diagnostic)
    if agent_file.scope != "project":
        return
    if run.enabled("possible-secret"):
        for diagnostic in secret_diagnostics(path, text):
            run.add(diagnostic)
    inside = not os.path.relpath(path, run.config.root).startswith("..")
    if inside and run.enabled("stale-path"):
        # Auto memory (MEMORY.md and its topic files) lies outside the repository: its
        # links name topic files beside it, and relative mentions have no base there.
        for stale in stale_paths(text, path, run.config.root, lexists):
            run.add(stale_path_diagnostic(path, stale))
    if agent_file.path.endswith(".md") and text.startswith("---"):
        doc = parse_document(text)
        if doc.problem is not None and "YAML" in doc.problem.message:
            line = doc.problem.line
            run.add(Diagnostic(path, line, 0, line, 0, "invalid-frontmatter", doc.problem.message))


# ----- Claude Code's imports -----------------------------------------------------------


def import_target(written: str, importing: str, home: str) -> str:
    """The file an `@path` names: `~` is the home, a relative path the importing file's folder."""
    if written == "~" or written.startswith("~/"):
        return os.path.normpath(os.path.join(home, written[2:]))
    if os.path.isabs(written):
        return os.path.normpath(written)
    return os.path.normpath(os.path.join(os.path.dirname(importing), written))


def _imports(run: _Run, root_file: str, text: str) -> None:
    """Follow a CLAUDE.md's imports as Claude Code does: five hops at most, no cycles."""
    home = run.repository.home

    def follow(path: str, body: str, chain: tuple[str, ...]) -> None:
        for span in find_imports(body):
            target = import_target(span.written, path, home)
            if target in chain:
                if run.enabled("import-cycle"):
                    run.add(_import_cycle(path, span, chain, target))
                continue
            if not os.path.exists(target):
                if looks_like_path(span.written) and run.enabled("broken-import"):
                    run.add(_broken_import(path, span, target, run.config.root))
                continue
            if len(chain) > claude_layout.MAX_IMPORT_HOPS:
                if run.enabled("import-depth"):
                    run.add(_too_deep(path, span, chain))
                continue
            if os.path.isdir(target):
                continue
            imported = run.text(target)
            if imported is not None and "@" in imported:
                follow(target, imported, (*chain, target))

    follow(root_file, text, (root_file,))


def _at_import(
    path: str, span: Span, code: str, message: str, data: Mapping[str, Any]
) -> Diagnostic:
    """A diagnostic on an `@path` import: the `@` and the path."""
    return Diagnostic(
        path, span.line, span.start - 1, span.line, span.end, code, message, data=data
    )


def _import_cycle(path: str, span: Span, chain: tuple[str, ...], target: str) -> Diagnostic:
    loop = [*chain[chain.index(target) :], target]
    shown = " → ".join(os.path.basename(p) for p in loop)
    return _at_import(
        path,
        span,
        "import-cycle",
        f"@{span.written} imports a file already being imported ({shown}); Claude Code "
        "skips it. Remove one of the imports.",
        {"cycle": loop},
    )


def _broken_import(path: str, span: Span, target: str, root: str) -> Diagnostic:
    relative = os.path.relpath(target, root)
    shown = target if relative.startswith("..") else relative.replace(os.sep, "/")
    return _at_import(
        path,
        span,
        "broken-import",
        f"@{span.written} imports {shown}, which does not exist; Claude Code skips it "
        "without a word, so these instructions never reach the agent. Fix the path or "
        "remove the import.",
        {"import": span.written, "resolved": target},
    )


def _too_deep(path: str, span: Span, chain: tuple[str, ...]) -> Diagnostic:
    hops = claude_layout.MAX_IMPORT_HOPS
    shown = " → ".join(os.path.basename(p) for p in chain)
    return _at_import(
        path,
        span,
        "import-depth",
        f"@{span.written} is import number {len(chain)} in a chain ({shown}); Claude Code "
        f"follows imports {hops} hops deep at most, so this file is never loaded. Import "
        "it from a file nearer CLAUDE.md.",
        {"import": span.written, "depth": len(chain), "limit": hops},
    )


# ----- Claude Code's auto memory index -------------------------------------------------


def _memory_index(run: _Run, index: AgentFile, text: str, files: Sequence[AgentFile]) -> None:
    """MEMORY.md: where its loading stops, its entries, and the topic files none names."""
    folder = os.path.dirname(index.path)
    cut = load_cut(text, claude_layout.INDEX_MAX_LINES, claude_layout.INDEX_MAX_BYTES)
    if cut is not None and run.enabled("context-budget"):
        lines = text.split("\n")
        lost = cut.total_lines - cut.loaded_lines
        limit = (
            f"the first {claude_layout.INDEX_MAX_LINES} lines"
            if cut.by == "lines"
            else f"the first {claude_layout.INDEX_MAX_BYTES:,} bytes (25 KB)"
        )
        run.add(
            Diagnostic(
                index.path,
                cut.line,
                cut.col,
                len(lines) - 1,
                len(lines[-1]),
                "context-budget",
                f"Claude Code loads only {limit} of MEMORY.md at the start of a conversation; "
                f"this index has {cut.total_lines} lines ({cut.total_bytes:,} bytes), so "
                f"everything from here on ({lost} line{'s' if lost != 1 else ''}) is never "
                "loaded and the topic files it names are never found. Shorten the entries "
                "or move detail into topic files.",
                data={
                    "agent": "Claude Code",
                    "loadedLines": cut.loaded_lines,
                    "totalLines": cut.total_lines,
                    "limitLines": claude_layout.INDEX_MAX_LINES,
                    "limitBytes": claude_layout.INDEX_MAX_BYTES,
                    "size": cut.total_bytes,
                },
            )
        )
    loaded: set[str] = set()
    late: dict[str, int] = {}
    for span in index_links(text):
        target = os.path.normpath(os.path.join(folder, span.written))
        if cut is None or span.line < cut.line:
            loaded.add(target)
        else:
            late.setdefault(target, span.line)
        if not os.path.exists(target) and run.enabled("broken-link"):
            run.add(
                Diagnostic(
                    index.path,
                    span.line,
                    span.start,
                    span.line,
                    span.end,
                    "broken-link",
                    f"{span.written} does not exist; Claude Code would look for this topic "
                    "and find nothing. Fix the link or remove the entry.",
                    data={"target": span.written, "resolved": target},
                )
            )
    if not run.enabled("unindexed-memory"):
        return
    for topic in files:
        if topic.kind != "topic" or os.path.dirname(topic.path) != folder:
            continue
        if topic.path in loaded:
            continue
        name = os.path.basename(topic.path)
        if topic.path in late:
            why = (
                f"MEMORY.md names it only on line {late[topic.path] + 1}, past what Claude "
                "Code loads"
            )
        else:
            why = "MEMORY.md does not link to it"
        run.add(
            Diagnostic(
                topic.path,
                0,
                0,
                0,
                0,
                "unindexed-memory",
                f"{name} is never loaded: {why}, and Claude Code finds topic files only "
                f"through the index. Add a line such as `- [{name[:-3]}]({name}): …` near "
                "the top of MEMORY.md.",
                data={"index": index.path, "linkedAt": late.get(topic.path)},
            )
        )


# ----- the globs that scope rules -------------------------------------------------------


def _rule_scope(run: _Run, rule: AgentFile, text: str) -> None:
    """A rule whose globs match nothing, or a Cursor rule that can never apply."""
    key = _SCOPE_KEYS.get(rule.layout)
    if key is None or not run.enabled("unmatched-glob"):
        return
    front = lenient_frontmatter(text)
    values: Mapping[str, Any]
    if rule.layout == "cursor":
        values = front[0] if front is not None else {}
    else:
        doc = parse_document(text) if front is not None else None
        values = doc.metadata if doc is not None and doc.problem is None else {}
    patterns = split_globs(values.get(key))
    if rule.layout == "cursor":
        always = str(values.get("alwaysApply", "")).strip().lower() == "true"
        described = bool(str(values.get("description", "") or "").strip())
        if not always and not patterns and not described:
            run.add(
                Diagnostic(
                    rule.path,
                    0,
                    0,
                    0,
                    3 if front is not None else 0,
                    "unmatched-glob",
                    "This rule can never apply on its own: it has no `alwaysApply: true`, no "
                    "`globs` and no `description` for the agent to choose it by. Add one, "
                    "or it is only used when attached by hand.",
                    data={"agent": "Cursor", "rule": os.path.basename(rule.path)},
                )
            )
    if not patterns:
        return
    base = cursor_layout.rule_base(rule.path) if rule.layout == "cursor" else run.repository.root
    files = _files_under(run.repository, base)
    lines = text.split("\n")
    for pattern in patterns:
        if pattern in ("*", "**", "**/*") or glob_matches_any(pattern, files):
            continue
        line, start, end = _pattern_place(lines, key, pattern)
        agent = _AGENT_NAMES.get(rule.layout, rule.layout)
        run.add(
            Diagnostic(
                rule.path,
                line,
                start,
                line,
                end,
                "unmatched-glob",
                f"{key} pattern {pattern!r} matches no file of the repository (what git "
                f"ignores left out), so {agent} never applies this rule through it. Fix the "
                "pattern or remove it.",
                data={"agent": agent, "key": key, "pattern": pattern},
            )
        )


def _files_under(repository: Repository, base: str) -> list[str]:
    """The repository's files relative to `base` (a folder inside the root)."""
    if os.path.normpath(base) == os.path.normpath(repository.root):
        return list(repository.files)
    prefix = os.path.relpath(base, repository.root).replace(os.sep, "/") + "/"
    return [f[len(prefix) :] for f in repository.files if f.startswith(prefix)]


def _pattern_place(lines: Sequence[str], key: str, pattern: str) -> tuple[int, int, int]:
    """The line and columns of a pattern in the frontmatter (its key's line if not found)."""
    key_line = 0
    for number, line in enumerate(lines[1:], start=1):
        if line.rstrip() == "---":
            break
        if line.startswith(f"{key}:"):
            key_line = number
        column = line.find(pattern)
        if column != -1 and number >= key_line > 0:
            return number, column, column + len(pattern)
    return key_line, 0, len(lines[key_line]) if key_line < len(lines) else 0
