"""Store diagnostics (SPEC 3.2) as plain data, shared by the language server and `check`."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

from memory_ls.config import Severity
from memory_ls.core.layouts import find_cut
from memory_ls.core.rules.conflicts import find_conflicts, may_hold_markers
from memory_ls.core.rules.document import Document, decode_memory, parse_document
from memory_ls.core.rules.names import GLOBAL_PREFIX, caps_prefixes, has_topic, name_problem
from memory_ls.core.rules.references import Reference, find_references, references_in_line
from memory_ls.core.rules.secrets import SecretHit, find_secrets, with_article
from memory_ls.core.rules.similarity import KeyTable, Memo, Verdict, near_duplicate
from memory_ls.core.rules.stale_paths import (
    PathMention,
    RepoSnapshot,
    find_path_mentions,
    lexists,
    mentions_in_line,
    stale_paths,
)
from memory_ls.core.rules.supersede import (
    KEY_WORD,
    SUPERSEDED_BY,
    SUPERSEDES,
    Declaration,
    SupersedeGraph,
    declaration,
    declaration_of_text,
)
from memory_ls.core.storage.folders import Folder, StoreConfig
from memory_ls.core.storage.git import list_files
from memory_ls.core.storage.memory import MemoryFile
from memory_ls.core.storage.routing import prefix_folder, unknown_prefix

SEVERITY_ORDER = ("error", "warning", "information", "hint")
# Files over this many times maxMemoryBytes are only reported as too large, never read.
READ_LIMIT_FACTOR = 4


@dataclass(frozen=True)
class Diagnostic:
    """A problem in a file; line and columns are 0-based, columns in code points."""

    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    code: str
    message: str
    severity: Severity = "warning"
    data: Mapping[str, Any] = field(default_factory=dict)
    # The severity is the finding's own, not the code's setting (which can only turn it
    # off): a supersede relation that cannot hold is an error, however quiet its hint.
    fixed: bool = False


class Names(Protocol):
    """Whether a reference resolves: a NameIndex, or a look at the disk for the few names asked."""

    def has(self, name: str, is_global: bool) -> bool:
        """Whether a memory `name` exists in its scope (global or project)."""
        ...


@dataclass
class NameIndex:
    """Which names exist, per scope, to tell broken links from good ones."""

    project: set[str] = field(default_factory=set)
    global_: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, memories: Iterable[MemoryFile]) -> NameIndex:
        """Index the valid names of scanned memories."""
        index = cls()
        for memory in memories:
            if memory.valid:
                (index.global_ if memory.scope == "global" else index.project).add(memory.name)
        return index

    def has(self, name: str, is_global: bool) -> bool:
        """Whether a reference to `name` resolves: in its own scope, never falling back."""
        return name in (self.global_ if is_global else self.project)

    def has_qualified(self, name: str) -> bool:
        """Whether a memory has this name as Serena writes it (`global/x` or `x`)."""
        if name.startswith(GLOBAL_PREFIX):
            return name[len(GLOBAL_PREFIX) :] in self.global_
        return name in self.project

    def names(self) -> list[str]:
        """Every known name as Serena writes it, for "did you mean"."""
        return sorted(self.project | {GLOBAL_PREFIX + name for name in self.global_})


def _folder_list(additional: Sequence[Folder]) -> str:
    return ", ".join(f.label for f in additional) or "none"


def _unknown_prefix_message(prefix: str, additional: Sequence[Folder], subject: str) -> str:
    return (
        f"Prefix {prefix} matches no additional folder (configured: {_folder_list(additional)}); "
        f"{subject} stays in the primary folder. Add a folder named {prefix.lower()} or rename."
    )


def _may_have_prefix(name: str) -> bool:
    """Whether a name can have an ALL-CAPS routing prefix (most names start lowercase)."""
    # The same test caps_prefixes starts with, done first because it is cheap.
    return "A" <= name[:1] <= "Z" and not has_topic(name)


class _UnknownPrefixes:
    """`unknown_prefix` for the many names of one text, the folder labels read once."""

    def __init__(self, additional: Sequence[Folder]) -> None:
        self.labels = {folder.label.lower() for folder in additional}

    def __call__(self, name: str) -> str | None:
        # routing.unknown_prefix: the name's prefix run, unless a prefix routes somewhere.
        if not self.labels:
            return None
        prefixes = caps_prefixes(name)  # longest first
        if not prefixes or any(p.lower() in self.labels for p in prefixes):
            return None
        # names.prefix_run: a name that is all capitals has no prefix (nothing follows).
        if len(prefixes[0]) < len(name):
            return prefixes[0]
        return prefixes[1] if len(prefixes) > 1 else None


def reference_diagnostics(
    path: str, refs: Iterable[Reference], config: StoreConfig, index: Names
) -> list[Diagnostic]:
    """`broken-link` and `unknown-prefix` for the references in one file."""
    found: list[Diagnostic] = []
    unknown = _UnknownPrefixes(config.additional)
    for ref in refs:
        at = (path, ref.line, ref.start, ref.line, ref.end)
        problem = name_problem(ref.name)
        if problem:
            found.append(
                Diagnostic(
                    *at,
                    "broken-link",
                    f"[[{ref.name}]] is not a valid memory name: {problem}.",
                    data={"name": ref.name, "isGlobal": ref.is_global},
                )
            )
            continue
        if config.patterns.ignored and config.patterns.is_ignored(ref.target):
            # Not broken: the memory is hidden on purpose, from agents and from us.
            found.append(
                Diagnostic(
                    *at,
                    "ignored-link",
                    f"{ref.target} matches ignored_memory_patterns ({config.patterns.where}): "
                    "agents and memory-ls cannot read it through this link.",
                    data={"name": ref.name, "isGlobal": ref.is_global},
                )
            )
            continue
        if not index.has(ref.name, ref.is_global):
            where = "the global folder" if ref.is_global else "the project's memory folders"
            found.append(
                Diagnostic(
                    *at,
                    "broken-link",
                    f"No memory named {ref.target} in {where}; create it or fix the name.",
                    data={"name": ref.name, "isGlobal": ref.is_global},
                )
            )
        if not ref.is_global and _may_have_prefix(ref.name):
            prefix = unknown(ref.name)
            if prefix:
                found.append(
                    Diagnostic(
                        *at,
                        "unknown-prefix",
                        _unknown_prefix_message(prefix, config.additional, f"a new {ref.name}"),
                        data={"name": ref.name, "prefix": prefix},
                    )
                )
    return found


def memory_diagnostics(
    memory: MemoryFile,
    doc: Document | None,
    size: int,
    config: StoreConfig,
    shadowed_by: MemoryFile | None = None,
) -> list[Diagnostic]:
    """Diagnostics about a memory file itself (not its references)."""
    found: list[Diagnostic] = []
    at = (memory.path, 0, 0, 0, 0)
    problem = name_problem(memory.name)
    if problem:
        found.append(
            Diagnostic(
                *at,
                "invalid-name",
                f"The file name {memory.name!r} is not a valid memory name ({problem}); "
                "it can be read, edited and renamed, but not created again; rename it.",
            )
        )
    if shadowed_by is not None:
        found.append(
            Diagnostic(
                *at,
                "shadowed",
                f"Hidden by {shadowed_by.path}, which has the same name earlier in lookup "
                "order; rename or delete one of them.",
                data={"by": shadowed_by.path},
            )
        )
    if size > config.max_memory_bytes:
        found.append(
            Diagnostic(
                *at,
                "too-large",
                f"This memory is {size} bytes, over the limit of {config.max_memory_bytes} "
                "(maxMemoryBytes); split it into smaller memories.",
            )
        )
    # A block broken by conflict markers is reported as the conflict (merge-conflict).
    if doc is not None and doc.problem is not None and not _conflicted(doc.raw_frontmatter):
        line = doc.problem.line
        found.append(
            Diagnostic(memory.path, line, 0, line, 0, "invalid-frontmatter", doc.problem.message)
        )
    if problem is None and memory.scope == "project" and _may_have_prefix(memory.name):
        prefix = unknown_prefix(memory.name, config.additional)
        if prefix:
            found.append(
                Diagnostic(
                    *at,
                    "unknown-prefix",
                    _unknown_prefix_message(prefix, config.additional, "this memory"),
                    data={"name": memory.name, "prefix": prefix},
                )
            )
        target = prefix_folder(memory.name, config.additional)
        # By path: after a settings change the index keeps its files (and their folders).
        if target is not None and target.path != memory.folder.path and not target.read_only:
            found.append(
                Diagnostic(
                    *at,
                    "misrouted",
                    f"{memory.name} routes by its prefix to the additional folder {target.label} "
                    f"({target.path}) but is stored in {memory.folder.path}; move it there.",
                    data={"name": memory.name, "target": target.path},
                )
            )
    return found


def _conflicted(raw: str | None) -> bool:
    """Whether a frontmatter block holds merge conflict markers."""
    return raw is not None and may_hold_markers(raw) and bool(find_conflicts(raw))


def conflict_diagnostics(path: str, text: str) -> list[Diagnostic]:
    """`merge-conflict`: one per conflict block (from `<<<<<<<` to `>>>>>>>`), and one per
    marker left outside a complete block."""
    found = find_conflicts(text)
    if not found:
        return []
    lines = text.split("\n")
    diagnostics = []
    for block in found.blocks:
        end_col = len(lines[block.end].rstrip("\r"))
        middle = f"base at line {block.base + 1}, " if block.base is not None else ""
        diagnostics.append(
            Diagnostic(
                path,
                block.start,
                0,
                block.end,
                end_col,
                "merge-conflict",
                f"Unresolved merge conflict (lines {block.start + 1}-{block.end + 1}: "
                f"{middle}theirs after line {block.separator + 1}): agents read both sides as "
                "knowledge. Keep ours, theirs or both and remove the marker lines.",
                data={
                    "start": block.start,
                    "base": block.base,
                    "separator": block.separator,
                    "end": block.end,
                },
            )
        )
    for line in found.stray:
        diagnostics.append(
            Diagnostic(
                path,
                line,
                0,
                line,
                len(lines[line].rstrip("\r")),
                "merge-conflict",
                "A merge conflict marker left behind: finish resolving the conflict and "
                "remove the marker line.",
                data={"stray": line},
            )
        )
    return diagnostics


def apply_severities(
    diagnostics: Iterable[Diagnostic], severities: Mapping[str, Severity]
) -> list[Diagnostic]:
    """Give each diagnostic its configured severity; drop the codes turned off."""
    result = []
    for diagnostic in diagnostics:
        severity = severities.get(diagnostic.code, "warning")
        if severity != "off":
            if diagnostic.fixed:
                severity = diagnostic.severity
            result.append(replace(diagnostic, severity=severity))
    return result


def shadow_map(memories: Sequence[MemoryFile]) -> dict[str, MemoryFile]:
    """Path of each shadowed memory -> the memory that hides it."""
    first: dict[str, MemoryFile] = {}
    shadowed: dict[str, MemoryFile] = {}
    for memory in memories:
        if not memory.valid:
            continue
        winner = first.setdefault(memory.qualified, memory)
        if winner is not memory:
            shadowed[memory.path] = winner
    return shadowed


def store_duplicates(
    table: KeyTable, memories: Sequence[MemoryFile], targets: set[str] | None, max_bytes: int
) -> list[Diagnostic]:
    """`near-duplicate` for the targets (None: every memory) among every memory of the
    store (keys of the targets already in `table`)."""
    known = set(table.paths) if targets is not None else set()
    for memory in memories if targets is not None else ():  # a check of some files only
        if memory.valid and memory.path not in known:
            try:
                text = _checkable_text(memory.path, max_bytes)
            except OSError:
                continue
            table.add(memory.path, memory.qualified, memory.scope == "global", text)
    memos: dict[int, Memo | None] = {}

    def memo(number: int) -> Memo | None:
        if number not in memos:
            path, qualified, global_scope = table.member(number)
            try:
                text = _checkable_text(path, max_bytes) or ""
                memos[number] = Memo.of(path, qualified, global_scope, text)
            except OSError:
                memos[number] = None
        return memos[number]

    others: dict[str, list[tuple[Memo, Verdict]]] = {}
    for first, second in sorted(table.pairs()):
        a, b = memo(first), memo(second)
        if a is None or b is None:
            continue
        if targets is not None and a.path not in targets and b.path not in targets:
            continue
        verdict = near_duplicate(a, b)
        if verdict is not None:
            others.setdefault(a.path, []).append((b, verdict))
            others.setdefault(b.path, []).append((a, verdict))
    return [
        near_duplicate_diagnostic(path, found)
        for path, found in sorted(others.items())
        if targets is None or path in targets
    ]


def _checkable_text(path: str, max_bytes: int) -> str | None:
    """A memory's text, None when it is far too large or not UTF-8."""
    text, _size, problem = read_for_check(path, max_bytes)
    return text if problem is None else None


_REASONS = {
    "name": "the names are the same once case, separators, plurals and words such as "
    "'notes' are set aside",
    "body": "their bodies are {score:.0f}% alike",
}
# A near-duplicate diagnostic names at most this many of the others.
NEAR_DUPLICATES_NAMED = 3


def near_duplicate_diagnostic(path: str, found: Sequence[tuple[Memo, Verdict]]) -> Diagnostic:
    """`near-duplicate` on a memory: the others it nearly duplicates, best first."""
    ranked = sorted(found, key=lambda pair: (-pair[1].score, pair[0].qualified))
    other, verdict = ranked[0]
    why = _REASONS[verdict.reason].format(score=verdict.score)
    if verdict.reason == "name" and verdict.score >= 50:
        why += f", and their bodies are {verdict.score:.0f}% alike"
    more = [memo.qualified for memo, _v in ranked[1:NEAR_DUPLICATES_NAMED]]
    also = ""
    if more:
        rest = len(ranked) - 1 - len(more)
        also = f" Also near: {', '.join(more)}" + (f" and {rest} more." if rest else ".")
    return Diagnostic(
        path,
        0,
        0,
        0,
        0,
        "near-duplicate",
        f"Near-duplicate of {other.qualified} ({why}). Merge them into one memory, delete "
        f"one, or link them ([[{other.qualified}]]) if both should stay.{also}",
        data={
            "others": [memo.qualified for memo, _v in ranked],
            "paths": [memo.path for memo, _v in ranked],
            "reason": verdict.reason,
            "score": round(verdict.score, 1),
        },
    )


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


def repository_snapshot(config: StoreConfig) -> Callable[[str], bool] | None:
    """`exists` for many stale-path questions at once, when git can list the workspace."""
    if config.severities.get("stale-path") == "off":
        return None
    files = list_files(config.root)
    return None if files is None else RepoSnapshot(config.root, files).exists


def read_for_check(path: str, max_memory_bytes: int) -> tuple[str | None, int, str | None]:
    """(text or None when too big to read, size, encoding problem) of a file to check."""
    size = os.path.getsize(path)
    # A file far over the limit is reported as too large without reading it (bounded memory).
    if size > READ_LIMIT_FACTOR * max_memory_bytes:
        return None, size, None
    with open(path, "rb") as handle:
        data = handle.read()
    text, problem = decode_memory(data)
    return text, len(data), problem


def text_diagnostics(
    config: StoreConfig,
    index: Names,
    path: str,
    text: str | None,
    memory: MemoryFile | None,
    shadowed: Mapping[str, MemoryFile],
    size: int | None = None,
    encoding_problem: str | None = None,
    scans: LineScans | None = None,
    refs: Sequence[Reference] | None = None,
    exists: Callable[[str], bool] | None = None,
    supersedes: SupersedeGraph | None = None,
) -> list[Diagnostic]:
    """Diagnostics of one Markdown text: memory-file checks when it is a memory, then references.

    `text` is None for a file too large to read; binary text is not searched for links.
    `scans` carries an open document's line-by-line scans from one version to the next;
    `refs` are the text's references when the caller has found them already; `exists`
    answers whether a repository path exists (`stale-path`; default: on disk);
    `supersedes` is every memory's supersede relations (`superseded`; default: not checked).
    """
    found: list[Diagnostic] = []
    limit = READ_LIMIT_FACTOR * config.max_memory_bytes
    if text is not None and size is None and len(text) * 4 > limit:
        size = len(text.encode("utf-8", "surrogatepass"))
    if size is not None and size > limit:
        text = None  # far too large: only `too-large`, as `check` reports it (bounded work)
    readable = text is not None and encoding_problem is None
    if memory is not None:
        doc = parse_document(text) if readable and text is not None else None
        real_size = len((text or "").encode("utf-8")) if size is None else size
        found.extend(memory_diagnostics(memory, doc, real_size, config, shadowed.get(memory.path)))
        if encoding_problem is not None:
            found.append(
                Diagnostic(
                    memory.path,
                    0,
                    0,
                    0,
                    0,
                    "invalid-encoding",
                    f"This memory is not UTF-8 text ({encoding_problem}); agents and editors "
                    "cannot read it reliably. Re-save it as UTF-8 or remove it.",
                )
            )
        if readable and text is not None:
            found.extend(conflict_diagnostics(memory.path, text))
        if readable and text is not None and memory.scope == "project":
            found.extend(secret_diagnostics(memory.path, text, scans.secrets if scans else None))
        if supersedes is not None and doc is not None and supersede_counts(memory, shadowed):
            raw = doc.raw_frontmatter
            own = (
                declaration(memory.qualified, doc.metadata, raw)
                if raw is not None and KEY_WORD in raw
                else None
            )
            found.extend(supersede_diagnostics(memory, own, supersedes))
    if readable and text is not None:
        if refs is None:
            refs = scans.references.find(text) if scans else find_references(text)
        found.extend(reference_diagnostics(path, refs, config, index))
        found.extend(
            repository_diagnostics(
                config, path, text, memory, exists, scans.paths if scans else None
            )
        )
    return found


def repository_diagnostics(
    config: StoreConfig,
    path: str,
    text: str,
    memory: MemoryFile | None,
    exists: Callable[[str], bool] | None = None,
    memo: PathMemo | None = None,
) -> list[Diagnostic]:
    """`context-budget` (an agent reads only part of the file) and `stale-path`."""
    found: list[Diagnostic] = []
    severities = config.severities
    cut = find_cut(text, path, config.root) if severities.get("context-budget") != "off" else None
    if cut is not None:
        limit = cut.limit
        found.append(
            Diagnostic(
                path,
                cut.line,
                cut.col,
                cut.end_line,
                cut.end_col,
                "context-budget",
                f"{limit.agent} reads only the first {cut.limit_bytes} bytes of this file "
                f"({limit.use}; {cut.setting}); it is {cut.size} bytes, so everything from "
                f"here on (byte {cut.limit_bytes}, line {cut.line + 1}, column {cut.col + 1}) "
                "is cut off. Keep what agents must always see above this point; move the rest "
                "to other memories.",
                data={"agent": limit.agent, "limit": cut.limit_bytes, "size": cut.size},
            )
        )
    if memory is None or memory.scope != "project" or severities.get("stale-path") == "off":
        return found
    mentions = memo.find(text) if memo is not None else None
    for stale in stale_paths(text, memory.path, config.root, exists or lexists, mentions):
        mention = stale.mention
        found.append(
            Diagnostic(
                path,
                mention.line,
                mention.start,
                mention.line,
                mention.end,
                "stale-path",
                f"{mention.written} names nothing in the workspace (looked for "
                f"{' and '.join(stale.resolved)}); the code has moved on or the path is wrong. "
                "Fix the path or remove it: agents act on what memories say.",
                data={
                    "path": mention.written,
                    "kind": mention.kind,
                    "resolved": list(stale.resolved),
                    "bases": list(stale.bases),
                },
            )
        )
    return found


def editor_encoding_problem(path: str, text: str, max_memory_bytes: int) -> str | None:
    """What is wrong with the encoding of the file behind an editor's text, if anything.

    Editors show bytes that are not UTF-8 as U+FFFD and keep NULs, so the file is read
    only when its text holds one of those.
    """
    if "\ufffd" not in text and "\x00" not in text:
        return None
    try:
        return read_for_check(path, max_memory_bytes)[2]
    except OSError:
        return None


class ReferenceMemo:
    """`find_references` for successive versions of one open document.

    In a plain note (no frontmatter, no fenced code) the lines before and after an edit
    keep their references (moved by the lines added or removed); only the changed lines
    are read again. Anything else is read whole, as find_references reads it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lines: list[str] | None = None  # of the last version, when it was plain
        self._refs: list[Reference] = []

    def find(self, text: str) -> list[Reference]:
        """`find_references(text)`, reading only the lines changed since the last call."""
        with self._lock:
            old = self._lines
            if not _is_plain(text):
                self._lines = None
                return find_references(text)
            lines = text.split("\n")
            if old is None:
                refs = find_references(text)
            else:
                start, old_end, new_end = _changed_lines(old, lines)
                fresh: list[Reference] = []
                for number in range(start, new_end):
                    line = lines[number]
                    if "[[" in line or "mem:" in line:
                        fresh.extend(references_in_line(line, number))
                refs = _splice(self._refs, start, old_end, new_end, fresh)
            self._lines, self._refs = lines, refs
            return list(refs)


class SecretMemo:
    """`find_secrets` for successive versions of one open document.

    Findings are per line: the lines before and after an edit keep theirs (moved by the
    lines added or removed) and only the changed lines are scanned again.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lines: list[str] = []
        self._hits: list[SecretHit] = []

    def find(self, text: str) -> list[SecretHit]:
        """`list(find_secrets(text))`, scanning only the lines changed since the last call."""
        lines = text.split("\n")
        with self._lock:
            start, old_end, new_end = _changed_lines(self._lines, lines)
            fresh = list(find_secrets("\n".join(lines[start:new_end]), start))
            hits = _splice(self._hits, start, old_end, new_end, fresh)
            self._lines, self._hits = lines, hits
            return list(hits)


class PathMemo:
    """`find_path_mentions` for successive versions of one open document, reading only
    the lines changed since the last call where the text is plain (as ReferenceMemo)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lines: list[str] | None = None  # of the last version, when it was plain
        self._mentions: list[PathMention] = []

    def find(self, text: str) -> list[PathMention]:
        """`find_path_mentions(text)`, reading only the lines changed since the last call."""
        with self._lock:
            old = self._lines
            if not _is_plain(text):
                self._lines = None
                return find_path_mentions(text)
            lines = text.split("\n")
            if old is None:
                mentions = find_path_mentions(text)
            else:
                start, old_end, new_end = _changed_lines(old, lines)
                fresh = [
                    mention
                    for number in range(start, new_end)
                    for mention in mentions_in_line(lines[number], number)
                ]
                mentions = _splice(self._mentions, start, old_end, new_end, fresh)
            self._lines, self._mentions = lines, mentions
            return list(mentions)


def _is_plain(text: str) -> bool:
    """Whether every line of a text is outside frontmatter and fenced code."""
    # A fence line holds ``` or ~~~; frontmatter starts the text (after a BOM) with ---.
    return "```" not in text and "~~~" not in text and not text.lstrip("\ufeff").startswith("---")


Lined = TypeVar("Lined", Reference, SecretHit, PathMention)


def _splice(
    old: list[Lined], start: int, old_end: int, new_end: int, fresh: list[Lined]
) -> list[Lined]:
    """Per-line findings once lines start..old_end became start..new_end (found: `fresh`)."""
    shift = new_end - old_end
    after = [
        item if not shift else replace(item, line=item.line + shift)
        for item in old
        if item.line >= old_end
    ]
    return [item for item in old if item.line < start] + fresh + after


def _changed_lines(old: list[str], new: list[str]) -> tuple[int, int, int]:
    """(start, old end, new end): the lines that differ between two versions of a text."""
    start, limit = 0, min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    old_end, new_end = len(old), len(new)
    while old_end > start and new_end > start and old[old_end - 1] == new[new_end - 1]:
        old_end -= 1
        new_end -= 1
    return start, old_end, new_end


@dataclass
class LineScans:
    """An open document's line-by-line scans, carried from one version to the next."""

    secrets: SecretMemo = field(default_factory=SecretMemo)
    references: ReferenceMemo = field(default_factory=ReferenceMemo)
    paths: PathMemo = field(default_factory=PathMemo)


def secret_diagnostics(path: str, text: str, memo: SecretMemo | None = None) -> list[Diagnostic]:
    """`possible-secret` for lines of a project memory that look like credentials."""
    hits = memo.find(text) if memo is not None else find_secrets(text)
    return [
        Diagnostic(
            path,
            hit.line,
            hit.start,
            hit.line,
            hit.end,
            "possible-secret",
            f"This looks like {with_article(hit.kind)}. Project memories are committed to git: "
            "remove it, keep it in a secret store, and rotate it if it was real.",
            data={"kind": hit.kind},
        )
        for hit in hits
    ]


def expand_paths(paths: Sequence[str]) -> list[str]:
    """Files named on the command line; folders give their Markdown files."""
    files: list[str] = []
    for path in paths:
        absolute = os.path.abspath(path)
        if os.path.isdir(absolute):
            for directory, dirs, names in os.walk(absolute):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                files.extend(os.path.join(directory, n) for n in sorted(names) if n.endswith(".md"))
        else:
            files.append(absolute)
    return files
