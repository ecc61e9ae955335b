"""`memory-ls context`: the files an agent loads when it works on a file, in load order.

For one agent (Claude Code, Codex, Cursor, GitHub Copilot, Serena, AI Coder) and one file
of the repository (or none: a session started at the store's root that has not touched a
file yet), which instruction and memory files reach the agent's context, in the order
the agent reads them, each with its estimated token count (`estimate_tokens`: four
characters a token), where an agent stops reading a file it cuts, and the total against
a budget. Each agent's rules cite its documentation below; what a layout knows (folders,
file names, limits) stays in `memory_ls.core.layouts`.

The budget: 20,000 tokens by default (`DEFAULT_BUDGET`), a tenth of the 200,000-token
context window of the models these agents run on by default, so that nine tenths stay
for the code and the conversation. It is twice the ~10,000 tokens (40,000 characters) at
which Claude Code long warned "Large CLAUDE.md will impact performance" (the threshold
has moved since: anthropics/claude-code#56406, #92980), and above Codex's own 32 KiB
cap on AGENTS.md files (about 8,200 tokens), so a Codex chain that fits its cap never
fails the budget. `--budget` sets another.

Pure where it can be: the planning takes a `read` function; the disk is read at the
edge (`read_text`, the walks and the existence checks).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory_ls.core.layouts import Repository
from memory_ls.core.layouts import aicoder as aicoder_layout
from memory_ls.core.layouts import claude as claude_layout
from memory_ls.core.layouts import codex as codex_layout
from memory_ls.core.layouts import copilot as copilot_layout
from memory_ls.core.layouts import cursor as cursor_layout
from memory_ls.core.rules.agent_syntax import (
    estimate_tokens,
    find_imports,
    glob_regex,
    lenient_frontmatter,
    line_count,
    load_cut,
    looks_like_path,
    split_globs,
)
from memory_ls.core.rules.context_limits import effective_limit
from memory_ls.core.rules.document import parse_document
from memory_ls.core.rules.errors import InvalidArguments
from memory_ls.core.services.agent_checks import import_target
from memory_ls.core.storage.agent_repository import canonical_top
from memory_ls.core.storage.git import work_tree_top
from memory_ls.core.store import Store

DEFAULT_BUDGET = 20_000
AGENTS: Mapping[str, str] = {
    "claude": "Claude Code",
    "codex": "Codex",
    "cursor": "Cursor",
    "copilot": "GitHub Copilot",
    "serena": "Serena",
    "aicoder": "AI Coder",
}
# Claude Code's managed policy file ("Managed policy: /Library/Application Support/
# ClaudeCode/CLAUDE.md on macOS, /etc/claude-code/CLAUDE.md on Linux and WSL",
# https://code.claude.com/docs/en/memory#determine-memory-type).
MANAGED_POLICY = (
    "/Library/Application Support/ClaudeCode/CLAUDE.md"
    if sys.platform == "darwin"
    else "/etc/claude-code/CLAUDE.md"
)
# A file this large is no instruction file: not read (Claude Code skips memory files
# over 4 MiB; the others never meet one).
MAX_READ_BYTES = 4 * 1024 * 1024
# Patterns that apply to every file: the only ones in force before any file is touched.
_EVERY_FILE = frozenset({"**", "**/*", "/**", "./**"})

Reader = Callable[[str], "str | None"]


def read_text(path: str) -> str | None:
    """A file's text as an agent reads it (UTF-8, bad bytes replaced); None when it is
    missing, a folder, unreadable or far too large."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > MAX_READ_BYTES:
            return None
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    return data.decode("utf-8", "replace")


# ----- the result ------------------------------------------------------------------------


@dataclass(frozen=True)
class Cut:
    """Where an agent stops reading a file: what it loads and what it never sees."""

    by: str  # "lines", "bytes" (the file's own limit) or "budget" (Codex's combined cap)
    line: int  # 0-based line of the first character not loaded
    col: int
    loaded_lines: int  # lines loaded whole
    total_lines: int
    loaded_bytes: int
    total_bytes: int

    def describe(self) -> str:
        """The cut for people: "lines 1–200 of 240 loaded; 40 lines not loaded"."""
        if self.by == "lines":
            lost = self.total_lines - self.loaded_lines
            return (
                f"lines 1–{self.loaded_lines} of {self.total_lines} loaded; "
                f"{lost} line{'s' if lost != 1 else ''} not loaded"
            )
        said = f"{self.loaded_bytes:,} of {self.total_bytes:,} bytes loaded"
        if self.col:
            said += f", cut inside line {self.line + 1}"
        first_lost = self.line + (2 if self.col else 1)  # 1-based, the first line lost whole
        if first_lost < self.total_lines:
            said += f"; lines {first_lost}–{self.total_lines} not loaded"
        elif first_lost == self.total_lines:
            said += f"; line {first_lost} not loaded"
        return said

    def to_json(self) -> dict[str, Any]:
        """The JSON form (1-based line)."""
        return {
            "by": self.by,
            "line": self.line + 1,
            "column": self.col,
            "loadedLines": self.loaded_lines,
            "totalLines": self.total_lines,
            "loadedBytes": self.loaded_bytes,
            "totalBytes": self.total_bytes,
            "text": self.describe(),
        }


@dataclass(frozen=True)
class Headroom:
    """How much of a file's own limit a file that is loaded whole uses."""

    lines: int
    max_lines: int | None
    bytes: int
    max_bytes: int

    def describe(self) -> str:
        """For people: "187 of 200 lines, 9,120 of 25,000 bytes: all loaded"."""
        parts = [f"{self.bytes:,} of {self.max_bytes:,} bytes"]
        if self.max_lines is not None:
            parts.insert(0, f"{self.lines} of {self.max_lines} lines")
        return ", ".join(parts) + ": all loaded"

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "lines": self.lines,
            "maxLines": self.max_lines,
            "bytes": self.bytes,
            "maxBytes": self.max_bytes,
            "text": self.describe(),
        }


@dataclass(frozen=True)
class LoadedFile:
    """A file the agent loads (or may choose to load), with what it costs."""

    path: str  # absolute
    shown: str  # for people: relative to the root, `~/...`, or absolute
    kind: str  # "managed", "user", "user-rule", "ancestor", "project", "local", "rule",
    # "subfolder", "import", "memory-index", "instructions", "memory-names", "autoload"
    why: str  # why the agent loads it
    tokens: int  # of the part loaded
    loaded_bytes: int
    total_bytes: int
    depth: int = 0  # import hops from the file that started the chain
    imported_by: str | None = None  # the importing file, as shown
    cut: Cut | None = None
    headroom: Headroom | None = None
    names: tuple[str, ...] = ()  # Serena: the memory names listed

    @property
    def label(self) -> str:
        """The file as listed: imports indented under their importer."""
        indent = "  " * self.depth
        suffix = f" (imported by {self.imported_by})" if self.imported_by else ""
        return f"{indent}{self.shown}{suffix}"

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        found: dict[str, Any] = {
            "path": self.path,
            "shown": self.shown,
            "kind": self.kind,
            "why": self.why,
            "tokens": self.tokens,
            "loadedBytes": self.loaded_bytes,
            "totalBytes": self.total_bytes,
            "depth": self.depth,
            "importedBy": self.imported_by,
            "cut": self.cut.to_json() if self.cut else None,
            "headroom": self.headroom.to_json() if self.headroom else None,
        }
        if self.kind == "memory-names":
            found["names"] = list(self.names)
        return found


@dataclass(frozen=True)
class Skipped:
    """A file the agent would look at but does not load, and why."""

    path: str
    shown: str
    reason: str  # "missing", "cycle", "too-deep", "already-loaded", "unreadable",
    # "empty", "over-budget", "not-matched", "manual", "folder"
    detail: str  # for people
    imported_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "path": self.path,
            "shown": self.shown,
            "reason": self.reason,
            "detail": self.detail,
            "importedBy": self.imported_by,
        }


@dataclass(frozen=True)
class AgentContext:
    """What an agent loads working on a file, in load order, against a budget."""

    agent: str
    root: str
    file: str | None  # relative to the root, `/`-separated; None: no file touched yet
    budget: int
    loaded: tuple[LoadedFile, ...]
    optional: tuple[LoadedFile, ...] = ()  # Cursor: rules the agent may choose
    skipped: tuple[Skipped, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def agent_name(self) -> str:
        """The agent's name for people."""
        return AGENTS[self.agent]

    @property
    def total(self) -> int:
        """Estimated tokens of everything loaded (the optional rules left out)."""
        return sum(item.tokens for item in self.loaded)

    @property
    def over_budget(self) -> bool:
        """Whether the total exceeds the budget (`memory-ls context` exits 1)."""
        return self.total > self.budget

    def to_json(self) -> dict[str, Any]:
        """The JSON form printed by `memory-ls context --json`."""
        return {
            "agent": self.agent,
            "agentName": self.agent_name,
            "root": self.root,
            "file": self.file,
            "budget": self.budget,
            "total": self.total,
            "overBudget": self.over_budget,
            "tokensPerCharacter": 0.25,
            "loaded": [item.to_json() for item in self.loaded],
            "optional": [item.to_json() for item in self.optional],
            "skipped": [item.to_json() for item in self.skipped],
            "notes": list(self.notes),
        }


def render_text(context: AgentContext) -> str:
    """The human-readable form printed by `memory-ls context`."""
    where = (
        f"working on {context.file}"
        if context.file is not None
        else "at the start of a session in the store's root, before any file is touched"
    )
    lines = [f"{context.agent_name} loads, {where} (estimated tokens, 4 characters each):"]
    rows = list(context.loaded)
    width = min(max((len(item.label) for item in (*rows, *context.optional)), default=0), 60)
    digits = max((len(f"{item.tokens:,}") for item in (*rows, *context.optional)), default=1)
    number = len(str(len(rows)))
    for position, item in enumerate(rows, start=1):
        lines.append(_row(f"{position:>{number}}.", item, width, digits))
    if not rows:
        lines.append("   (nothing)")
    percent = round(100 * context.total / context.budget) if context.budget else 0
    total = f"Total: {context.total:,} of a {context.budget:,}-token budget ({percent}%)"
    if context.over_budget:
        total += f": {context.total - context.budget:,} over"
    lines.append(total + ".")
    if context.optional:
        lines += ["", "May be chosen by the agent (not counted in the total):"]
        lines += [_row("-", item, width, digits) for item in context.optional]
    if context.skipped:
        lines += ["", "Not loaded:"]
        for skipped in context.skipped:
            by = f" (imported by {skipped.imported_by})" if skipped.imported_by else ""
            lines.append(f"   - {skipped.shown}{by}: {skipped.detail}")
    if context.notes:
        lines.append("")
        lines += [f"Note: {note}" for note in context.notes]
    return "\n".join(lines)


def _row(marker: str, item: LoadedFile, width: int, digits: int) -> str:
    remark = item.cut.describe() if item.cut else item.headroom.describe() if item.headroom else ""
    row = f"   {marker} {item.label:<{width}}  {item.tokens:>{digits},}"
    return f"{row}  ({remark})" if remark else row


# ----- the entry point -----------------------------------------------------------------


def relative_file(root: str, file: str) -> str:
    """FILE relative to the root (`/`-separated); refused when it lies outside the root."""
    root = os.path.abspath(root)
    absolute = os.path.normpath(file if os.path.isabs(file) else os.path.join(root, file))
    relative = os.path.relpath(absolute, root)
    if relative == "." or relative.startswith(".." + os.sep) or relative == "..":
        raise InvalidArguments(
            f"{file} is not a file of the repository rooted at {root}; give a path inside it"
        )
    return relative.replace(os.sep, "/")


def agent_context(
    agent: str,
    root: str,
    file: str | None = None,
    *,
    budget: int = DEFAULT_BUDGET,
    environ: Mapping[str, str] | None = None,
    store: Store | None = None,
    managed_policy: str = MANAGED_POLICY,
    read: Reader = read_text,
) -> AgentContext:
    """The files `agent` loads working on `file` (absolute, or relative to the root), or
    at the start of a session at the root when `file` is None.

    Serena's answer needs the store (its memories' names); the others read the disk.
    """
    if agent not in AGENTS:
        raise InvalidArguments(f"unknown agent {agent!r}; one of {', '.join(AGENTS)}")
    if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
        raise InvalidArguments(f"the budget must be a positive number of tokens, not {budget!r}")
    env = os.environ if environ is None else environ
    root = os.path.abspath(root)
    relative = relative_file(root, file) if file is not None else None
    plan = _Plan(root, relative, env, read)
    if agent == "claude":
        _claude(plan, managed_policy)
    elif agent == "codex":
        _codex(plan)
    elif agent == "cursor":
        _cursor(plan)
    elif agent == "copilot":
        _copilot(plan)
    elif agent == "serena":
        if store is None:
            raise InvalidArguments("Serena's context needs the store to list its memories")
        _serena(plan, store)
    else:
        _aicoder(plan)
    return AgentContext(
        agent=agent,
        root=root,
        file=relative,
        budget=budget,
        loaded=tuple(plan.loaded),
        optional=tuple(plan.optional),
        skipped=tuple(plan.skipped),
        notes=tuple(plan.notes),
    )


@dataclass
class _Plan:
    """One answer being built: what is loaded so far, in order."""

    root: str
    file: str | None  # relative to the root
    environ: Mapping[str, str]
    read: Reader
    loaded: list[LoadedFile] = field(default_factory=list)
    optional: list[LoadedFile] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)  # real paths loaded

    @property
    def home(self) -> str:
        return self.environ.get("HOME") or os.path.expanduser("~")

    def shown(self, path: str) -> str:
        """A path for people: relative to the root inside it, `~/...` in the home."""
        relative = os.path.relpath(path, self.root)
        if not relative.startswith(".."):
            return relative.replace(os.sep, "/")
        home = self.home.rstrip(os.sep)
        if home and path.startswith(home + os.sep):
            return "~/" + path[len(home) + 1 :].replace(os.sep, "/")
        return path

    def file_folders(self) -> list[str]:
        """The folders from the root (excluded) down to FILE's folder (included)."""
        if self.file is None:
            return []
        parts = self.file.split("/")[:-1]
        return [os.path.join(self.root, *parts[: end + 1]) for end in range(len(parts))]

    def whole(self, path: str, text: str, kind: str, why: str, **extra: Any) -> LoadedFile:
        """A file loaded whole."""
        size = len(text.encode("utf-8", "surrogatepass"))
        item = LoadedFile(
            path, self.shown(path), kind, why, estimate_tokens(text), size, size, **extra
        )
        self.loaded.append(item)
        self.seen.add(os.path.realpath(path))
        return item

    def skip(self, path: str, reason: str, detail: str, imported_by: str | None = None) -> None:
        self.skipped.append(Skipped(path, self.shown(path), reason, detail, imported_by))


def _matches(patterns: Sequence[str], relative: str | None) -> str | None:
    """The first pattern matching the file (relative, `/`-separated), if one does.

    Before any file is touched, only the patterns that match every file apply.
    """
    for pattern in patterns:
        if relative is None:
            if pattern.strip() in _EVERY_FILE:
                return pattern
        elif glob_regex(pattern).match(relative):
            return pattern
    return None


def _frontmatter(text: str) -> Mapping[str, Any]:
    """Frontmatter keys: YAML where it parses, else read leniently (as Cursor writes it)."""
    front = lenient_frontmatter(text)
    if front is None:
        return {}
    doc = parse_document(text)
    if doc.problem is None and doc.metadata:
        return doc.metadata
    return front[0]


def _walk(folder: str, suffix: str) -> list[str]:
    """Files under a folder ending in `suffix`, sorted, symlinked folders followed once."""
    found: list[str] = []
    visited: set[str] = set()
    for directory, dirs, files in os.walk(folder, followlinks=True):
        real = os.path.realpath(directory)
        if real in visited:
            dirs[:] = []
            continue
        visited.add(real)
        dirs.sort()
        found.extend(
            os.path.join(directory, name) for name in sorted(files) if name.endswith(suffix)
        )
    return found


def _under(folder: str, relative: str | None) -> str | None:
    """FILE relative to a folder inside the root ("" for the root itself), or None when
    FILE is not under it."""
    if relative is None or not folder:
        return relative
    if relative.startswith(folder + "/"):
        return relative[len(folder) + 1 :]
    return None


# ----- Claude Code ----------------------------------------------------------------------
#
# From https://code.claude.com/docs/en/memory: "Claude Code reads CLAUDE.md files by
# walking up the directory tree from your current working directory" (parents load in
# full at launch); "CLAUDE.md files in subdirectories ... are included when Claude reads
# files in those subdirectories"; the managed policy, the user's `~/.claude/CLAUDE.md`
# and `~/.claude/rules/`, the project's `./CLAUDE.md` or `./.claude/CLAUDE.md`,
# `./CLAUDE.local.md` and `.claude/rules/**/*.md` ("rules without paths frontmatter are
# loaded at launch"; with `paths`, "only when Claude works with files matching the
# specified patterns"); "@path/to/import" imports, "relative paths resolve relative to
# the file containing the import", "a maximum depth of five hops"; auto memory: "the
# first 200 lines of MEMORY.md, or the first 25KB, whichever comes first, are loaded at
# the start of every conversation".


def _claude(plan: _Plan, managed_policy: str) -> None:
    repository = Repository(
        root=plan.root,
        top=canonical_top(plan.root) or plan.root,
        files=(),
        home=plan.home,
        environ=plan.environ,
    )
    home = claude_layout.claude_home(repository)
    _claude_file(plan, managed_policy, "managed", "managed policy: every session on this machine")
    _claude_file(plan, os.path.join(home, "CLAUDE.md"), "user", "your instructions: every project")
    for path in _walk(os.path.join(home, "rules"), ".md"):
        _claude_rule(plan, path, "user-rule")
    # Ancestors: from the outermost folder (the file system's root itself excluded) down
    # to the root's parent.
    ancestors: list[str] = []
    current = os.path.dirname(plan.root)
    while os.path.dirname(current) != current:
        ancestors.append(current)
        current = os.path.dirname(current)
    for folder in reversed(ancestors):
        for name in claude_layout.INSTRUCTION_NAMES:
            _claude_file(
                plan, os.path.join(folder, name), "ancestor", "a parent folder's: loaded at launch"
            )
    for relative in ("CLAUDE.md", ".claude/CLAUDE.md"):
        _claude_file(
            plan, os.path.join(plan.root, relative), "project", "the project's instructions"
        )
    _claude_file(
        plan, os.path.join(plan.root, "CLAUDE.local.md"), "local", "your notes for this project"
    )
    for path in _walk(os.path.join(plan.root, *claude_layout.RULES_FOLDER.split("/")), ".md"):
        _claude_rule(plan, path, "rule")
    for folder in plan.file_folders():
        _claude_file(
            plan,
            os.path.join(folder, "CLAUDE.md"),
            "subfolder",
            f"loaded when Claude reads {plan.file}",
        )
    _claude_auto_memory(plan, repository)


def _claude_file(plan: _Plan, path: str, kind: str, why: str) -> None:
    """A CLAUDE.md-like file, if it exists, then its imports right after it."""
    if os.path.realpath(path) in plan.seen or not os.path.isfile(path):
        return
    text = plan.read(path)
    if text is None:
        plan.skip(path, "unreadable", "not readable as text (or over 4 MiB)")
        return
    plan.whole(path, text, kind, why)
    _claude_imports(plan, path, text, (path,))


def _claude_rule(plan: _Plan, path: str, kind: str) -> None:
    """A rule: loaded at launch without `paths`, else only when FILE matches one."""
    if os.path.realpath(path) in plan.seen:
        return
    text = plan.read(path)
    if text is None:
        plan.skip(path, "unreadable", "not readable as text (or over 4 MiB)")
        return
    patterns = split_globs(_frontmatter(text).get("paths"))
    whose = "your rule" if kind == "user-rule" else "a project rule"
    if not patterns:
        why = f"{whose} without `paths`: loaded at launch"
    else:
        matched = _matches(patterns, plan.file)
        if matched is None:
            shown = ", ".join(patterns)
            plan.skip(
                path,
                "not-matched",
                f"paths {shown} match no file touched yet"
                if plan.file is None
                else f"paths {shown} do not match {plan.file}",
            )
            return
        why = f"{whose}: paths {matched} matches {plan.file or 'every file'}"
    plan.whole(path, text, kind, why)
    _claude_imports(plan, path, text, (path,))


def _claude_imports(plan: _Plan, path: str, text: str, chain: tuple[str, ...]) -> None:
    """`@path` imports, depth first, each right after its importer: at most five hops,
    cycles and missing files skipped, a file loaded once."""
    importer = plan.shown(path)
    for span in find_imports(text):
        target = import_target(span.written, path, plan.home)
        if target in chain:
            loop = " → ".join(os.path.basename(p) for p in (*chain[chain.index(target) :], target))
            plan.skip(target, "cycle", f"an import cycle ({loop}); Claude Code skips it", importer)
            continue
        if not os.path.exists(target):
            if looks_like_path(span.written):
                plan.skip(target, "missing", f"@{span.written} does not exist", importer)
            continue
        if os.path.isdir(target):
            continue
        if len(chain) > claude_layout.MAX_IMPORT_HOPS:
            plan.skip(
                target,
                "too-deep",
                f"import number {len(chain)} in a chain; Claude Code follows "
                f"{claude_layout.MAX_IMPORT_HOPS} hops at most",
                importer,
            )
            continue
        if os.path.realpath(target) in plan.seen:
            plan.skip(target, "already-loaded", "already loaded above", importer)
            continue
        imported = plan.read(target)
        if imported is None:
            plan.skip(target, "unreadable", "not readable as text (or over 4 MiB)", importer)
            continue
        plan.whole(
            target,
            imported,
            "import",
            f"@{span.written} in {importer}",
            depth=len(chain),
            imported_by=importer,
        )
        _claude_imports(plan, target, imported, (*chain, target))


def _claude_auto_memory(plan: _Plan, repository: Repository) -> None:
    """MEMORY.md, up to 200 lines or 25 KB, whichever comes first."""
    folder = claude_layout.auto_memory_folder(repository)
    if folder is None:
        plan.notes.append(
            "Auto memory is turned off (autoMemoryEnabled or CLAUDE_CODE_DISABLE_AUTO_MEMORY)."
        )
        return
    path = os.path.join(folder, claude_layout.INDEX)
    text = plan.read(path) if os.path.isfile(path) else None
    if text is None:
        plan.notes.append(f"No auto memory index yet ({plan.shown(path)}).")
        return
    max_lines, max_bytes = claude_layout.INDEX_MAX_LINES, claude_layout.INDEX_MAX_BYTES
    why = f"auto memory index: the first {max_lines} lines or {max_bytes:,} bytes at start"
    found = _line_cut(text, max_lines, max_bytes)
    if found is None:
        size = len(text.encode("utf-8", "surrogatepass"))
        headroom = Headroom(line_count(text), max_lines, size, max_bytes)
        plan.whole(path, text, "memory-index", why, headroom=headroom)
    else:
        _loaded_part(plan, path, *found, "memory-index", why)
    plan.notes.append(
        "Claude Code reads the topic files beside MEMORY.md only when it needs them, "
        "through the index's links."
    )


def _loaded_part(plan: _Plan, path: str, loaded: str, cut: Cut, kind: str, why: str) -> None:
    """A file loaded up to a cut: tokens of the loaded part only."""
    plan.loaded.append(
        LoadedFile(
            path,
            plan.shown(path),
            kind,
            why,
            estimate_tokens(loaded),
            cut.loaded_bytes,
            cut.total_bytes,
            cut=cut,
        )
    )
    plan.seen.add(os.path.realpath(path))


def _line_cut(text: str, max_lines: int, max_bytes: int) -> tuple[str, Cut] | None:
    """The part of a text loaded up to `max_lines` lines or `max_bytes` bytes, and the cut."""
    found = load_cut(text, max_lines, max_bytes)
    if found is None:
        return None
    lines = text.split("\n")
    offset = sum(len(line) + 1 for line in lines[: found.line]) + found.col
    loaded = text[:offset]
    size = len(loaded.encode("utf-8", "surrogatepass"))
    cut = Cut(
        found.by,
        found.line,
        found.col,
        found.loaded_lines,
        found.total_lines,
        size,
        found.total_bytes,
    )
    return loaded, cut


def _byte_cut(text: str, max_bytes: int, by: str) -> tuple[str, Cut] | None:
    """The part of a text loaded up to `max_bytes` bytes (a character cut in half is not
    loaded), and the cut."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return None
    loaded = data[:max_bytes].decode("utf-8", "ignore")
    line = loaded.count("\n")
    col = len(loaded) - (loaded.rfind("\n") + 1)
    size = len(loaded.encode("utf-8", "surrogatepass"))
    return loaded, Cut(by, line, col, line, line_count(text), size, len(data))


# ----- Codex -----------------------------------------------------------------------------
#
# From https://developers.openai.com/codex/guides/agents-md: "In your Codex home
# directory (defaults to ~/.codex, unless you set CODEX_HOME), Codex reads
# AGENTS.override.md if it exists. Otherwise, Codex reads AGENTS.md. Codex uses only the
# first non-empty file at this level"; "starting at the project root (typically the Git
# root), Codex walks down to your current working directory ... In each directory along
# the path, it checks for AGENTS.override.md, then AGENTS.md ... at most one file per
# directory"; "Codex skips empty files and stops adding files once the combined size
# reaches the limit defined by project_doc_max_bytes (32 KiB by default)". The cap is
# one budget over the project chain, the file that crosses it cut to what is left
# (openai/codex#36371, codex-rs/core/src/agents_md.rs); the home file is not counted.
# Working on FILE, the chain runs down to FILE's folder (the nearest AGENTS.md to the
# edited file applies, https://agents.md).


def _codex(plan: _Plan) -> None:
    repository = Repository(plan.root, plan.root, (), plan.home, plan.environ)
    home = codex_layout.codex_home(repository)
    for name in codex_layout.FILE_NAMES:
        path = os.path.join(home, name)
        text = plan.read(path) if os.path.isfile(path) else None
        if text is None:
            continue
        if not text.strip():
            plan.skip(path, "empty", "empty: Codex skips it")
            continue
        plan.whole(path, text, "user", "your instructions: every project")
        break
    top = work_tree_top(plan.root)
    if top is None:
        # "If Codex cannot find a project root, it only checks the current directory."
        folders = [plan.root]
        plan.notes.append("No git repository: Codex checks only the folder it starts in.")
    else:
        folders = _folders_between(top, plan.root)
    folders += plan.file_folders()
    remaining = codex_layout.MAX_BYTES
    for folder in folders:
        for name in codex_layout.FILE_NAMES:
            path = os.path.join(folder, name)
            if not os.path.isfile(path):
                continue
            text = plan.read(path)
            if text is None:
                plan.skip(path, "unreadable", "not readable as text (or over 4 MiB)")
                break
            if not text.strip():
                plan.skip(path, "empty", "empty: Codex skips it and reads no other file here")
                break
            why = (
                "overrides AGENTS.md in its folder"
                if name == "AGENTS.override.md"
                else "the folder's instructions"
            )
            if remaining <= 0:
                plan.skip(
                    path,
                    "over-budget",
                    f"after the {codex_layout.MAX_BYTES:,}-byte cap (project_doc_max_bytes)",
                )
                break
            size = len(text.encode("utf-8", "surrogatepass"))
            found = _byte_cut(text, remaining, "budget")
            if found is None:
                plan.whole(path, text, "instructions", why)
            else:
                _loaded_part(plan, path, *found, "instructions", why)
            remaining -= size
            break
    used = codex_layout.MAX_BYTES - max(remaining, 0)
    plan.notes.append(
        f"Project AGENTS.md files: {used:,} of {codex_layout.MAX_BYTES:,} bytes "
        "(project_doc_max_bytes); your own file in CODEX_HOME is not counted against it."
    )


def _folders_between(top: str, root: str) -> list[str]:
    """The folders from `top` down to `root`, both included."""
    folders = [root]
    current = root
    while os.path.normpath(current) != os.path.normpath(top):
        parent = os.path.dirname(current)
        if parent == current:
            return [root]
        current = parent
        folders.append(current)
    return list(reversed(folders))


# ----- Cursor ----------------------------------------------------------------------------
#
# From https://cursor.com/docs/context/rules: project rules in `.cursor/rules`, one
# `.mdc` file each; "Always Apply" (`alwaysApply: true`) rules in every chat, "Apply to
# Specific Files" when a file matches `globs`, "Apply Intelligently" when the agent
# decides from the `description` that the rule is relevant, "Apply Manually" when
# @-mentioned; nested `.cursor/rules` folders apply to their folder's files; the legacy
# `.cursorrules` in the root is still read. The order among rules is not documented:
# always-applied first, then those attached by globs, then `.cursorrules`.


def _cursor(plan: _Plan) -> None:
    bases = [plan.root, *plan.file_folders()]
    always: list[tuple[str, str, str]] = []
    attached: list[tuple[str, str, str]] = []
    for base in bases:
        rules = os.path.join(base, ".cursor", "rules")
        for path in _walk(rules, ".mdc"):
            text = plan.read(path)
            if text is None:
                plan.skip(path, "unreadable", "not readable as text (or over 4 MiB)")
                continue
            _cursor_rule(plan, path, text, always, attached)
    for path, text, why in always:
        plan.whole(path, text, "rule", why)
    for path, text, why in attached:
        plan.whole(path, text, "rule", why)
    legacy = os.path.join(plan.root, cursor_layout.LEGACY_FILE)
    if os.path.isfile(legacy):
        text = plan.read(legacy)
        if text is not None:
            plan.whole(legacy, text, "instructions", "the legacy rules file: every chat")


def _cursor_rule(
    plan: _Plan,
    path: str,
    text: str,
    always: list[tuple[str, str, str]],
    attached: list[tuple[str, str, str]],
) -> None:
    front = lenient_frontmatter(text)
    values = front[0] if front is not None else {}
    base = cursor_layout.rule_base(path)
    folder = os.path.relpath(base, plan.root).replace(os.sep, "/")
    folder = "" if folder == "." else folder
    nested = f" (nested rules of {folder}/)" if folder else ""
    if str(values.get("alwaysApply", "")).strip().lower() == "true":
        always.append((path, text, f"alwaysApply: true{nested}"))
        return
    patterns = split_globs(values.get("globs"))
    matched = _matches(patterns, _under(folder, plan.file)) if patterns else None
    if matched is not None:
        attached.append((path, text, f"globs {matched} matches {plan.file or 'every file'}"))
        return
    description = str(values.get("description", "") or "").strip()
    if description:
        size = len(text.encode("utf-8", "surrogatepass"))
        plan.optional.append(
            LoadedFile(
                path,
                plan.shown(path),
                "rule",
                f"may be chosen by the agent from its description: {description}",
                estimate_tokens(text),
                size,
                size,
            )
        )
        return
    if patterns:
        shown = ", ".join(patterns)
        detail = (
            f"globs {shown} match no file touched yet"
            if plan.file is None
            else f"globs {shown} do not match {plan.file}"
        )
        plan.skip(path, "not-matched", detail)
    else:
        plan.skip(path, "manual", "applied only when attached by hand (@rule)")


# ----- GitHub Copilot --------------------------------------------------------------------
#
# From https://docs.github.com/en/copilot/how-tos/configure-custom-instructions:
# repository-wide instructions in `.github/copilot-instructions.md` "apply to all
# requests made in the context of a repository"; path-specific instructions in
# `.github/instructions/**/NAME.instructions.md` "apply to requests made in the context
# of files that match a specified path" (`applyTo`, comma-separated globs); "if the path
# you specify matches a file Copilot is working on, and a repository-wide custom
# instructions file also exists, then the instructions from both files are used".


def _copilot(plan: _Plan) -> None:
    path = os.path.join(plan.root, *copilot_layout.REPOSITORY_FILE.split("/"))
    if os.path.isfile(path):
        text = plan.read(path)
        if text is not None:
            plan.whole(path, text, "instructions", "repository-wide: every request")
    folder = os.path.join(plan.root, *copilot_layout.INSTRUCTIONS_FOLDER.strip("/").split("/"))
    for path in _walk(folder, copilot_layout.SUFFIX):
        text = plan.read(path)
        if text is None:
            plan.skip(path, "unreadable", "not readable as text (or over 4 MiB)")
            continue
        patterns = split_globs(_frontmatter(text).get("applyTo"))
        matched = _matches(patterns, plan.file)
        if matched is None:
            shown = ", ".join(patterns) if patterns else "(none)"
            detail = (
                f"applyTo {shown} matches no file touched yet"
                if plan.file is None
                else f"applyTo {shown} does not match {plan.file}"
            )
            plan.skip(path, "not-matched", detail)
            continue
        plan.whole(path, text, "rule", f"applyTo {matched} matches {plan.file or 'every file'}")


# ----- Serena ----------------------------------------------------------------------------
#
# Serena loads no memory's content on its own: activating a project answers with
# "Available project memories: [names...] Use the `read_memory` tool to read these
# memories later if they are relevant to the task" (oraios/serena, src/serena/project.py,
# Project.get_activation_message), and its system prompt says "You infer whether memories
# are relevant based on their names" and lists the global memories' names
# (src/serena/resources/config/prompt_templates/system_prompt.yml). What is loaded is the
# list of names; each memory is read on demand.


def _serena(plan: _Plan, store: Store) -> None:
    config = store.config
    project = _names(store, "project")
    if project:
        message = (
            f"Available project memories: {json.dumps(project)}\n"
            "Use the `read_memory` tool to read these memories later if they are relevant "
            "to the task."
        )
        _names_entry(plan, config.primary.path, project, message, "project memories' names")
    if config.global_folder is not None:
        shared = _names(store, "global")
        if shared:
            message = (
                "The following global (not project-specific) memories are available to you: "
                + ", ".join(shared)
            )
            _names_entry(plan, config.global_folder.path, shared, message, "global memories' names")
    plan.notes.append(
        "Serena loads the memories' names only; the agent reads a memory (read_memory) "
        "when its name seems relevant, so those tokens are spent on demand."
    )


def _names(store: Store, scope: str) -> list[str]:
    listed = store.list_memories(scope=scope)
    return [str(memory["name"]) for memory in listed["memories"]]


def _names_entry(plan: _Plan, folder: str, names: list[str], message: str, what: str) -> None:
    size = len(message.encode("utf-8", "surrogatepass"))
    count = len(names)
    plan.loaded.append(
        LoadedFile(
            folder,
            f"{plan.shown(folder)} ({count} name{'s' if count != 1 else ''})",
            "memory-names",
            f"{what}, listed when the project is activated",
            estimate_tokens(message),
            size,
            size,
            names=tuple(names),
        )
    )


# ----- AI Coder --------------------------------------------------------------------------
#
# AI Coder loads `.aicoder/memory/autoload.md` into every prompt and truncates it past
# its limit (2,048 bytes, `AICODER_MEMORY_AUTOLOAD_LIMIT`): the layout's ContextLimit.


def _aicoder(plan: _Plan) -> None:
    for limit in aicoder_layout.AICODER.context_limits:
        path = os.path.join(plan.root, *limit.pattern.split("/"))
        if not os.path.isfile(path):
            plan.notes.append(f"No {limit.pattern} yet: AI Coder loads nothing at start.")
            continue
        text = plan.read(path)
        if text is None:
            plan.skip(path, "unreadable", "not readable as text (or over 4 MiB)")
            continue
        limit_bytes, setting = effective_limit(limit, plan.environ)
        why = f"{limit.use}, up to {limit_bytes:,} bytes ({setting})"
        found = _byte_cut(text, limit_bytes, "bytes")
        if found is None:
            size = len(text.encode("utf-8", "surrogatepass"))
            headroom = Headroom(line_count(text), None, size, limit_bytes)
            plan.whole(path, text, "autoload", why, headroom=headroom)
        else:
            _loaded_part(plan, path, *found, "autoload", why)
