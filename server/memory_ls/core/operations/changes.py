"""What changed in the memories since a git revision (`memory-ls changes [REV]`).

The base is the given revision, else the merge base of HEAD with the default branch
(origin/HEAD, else main, else master); with no default branch the base is HEAD. The
working tree counts: staged, unstaged and untracked memories are compared with the base
as they are on disk now. Each added, changed or renamed memory comes with its
diagnostics (checked with the whole store as context, as `check FILE` does) and each
changed or renamed one with a short word diff.

Two findings are the team's guard: a change to a read-only memory (a `:ro` folder, or
Serena's `read_only_memory_patterns`) is a `read-only-changed` error, and a memory git
could not merge (a delete/modify conflict too) has the status "conflict" and a
`merge-conflict` error (changes_guard.py).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory_ls import __version__
from memory_ls.core.operations.changes_guard import (
    MergedSide,
    conflict_diagnostic,
    read_only_diagnostic,
    unmerged_paths,
)
from memory_ls.core.rules.document import split_frontmatter
from memory_ls.core.rules.errors import InvalidArguments
from memory_ls.core.services.diagnostics import Diagnostic, apply_severities
from memory_ls.core.services.formats import (
    JSON_SHAPE_VERSION,
    TOOL_NAME,
    display_path,
    json_row,
    report_base,
    summary,
    text_line,
)
from memory_ls.core.storage.git import git_output
from memory_ls.core.store import Store

# git's empty tree: the base of a repository with no commit yet (everything is added).
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
DEFAULT_BRANCHES = ("main", "master")
# A word diff is a glance, not the diff: this many hunks, each side cut to this length.
WORD_DIFF_HUNKS = 5
WORD_DIFF_CHARS = 80
# Changed lines holding more words than this (either side) are one run, not word-diffed:
# matching word sequences is quadratic at worst, and a rewrite that big is no glance.
WORD_DIFF_MAX_WORDS = 3000
STATUSES = ("added", "changed", "renamed", "deleted", "conflict")
_WORD = re.compile(r"\S+")
_KEY_LINE = re.compile(r"([^\s#:-][^:]*):(?:\s|$)")


@dataclass(frozen=True)
class Base:
    """The revision changes are counted from."""

    rev: str  # as given, or what was derived ("origin/main", "HEAD")
    commit: str  # the commit (or the empty tree) compared with
    how: str  # how it was chosen, in words


@dataclass(frozen=True)
class WordHunk:
    """One run of changed words: where (1-based line of the new text), what went, what came."""

    line: int
    removed: str
    added: str


@dataclass(frozen=True)
class WordDiff:
    """A capped word diff of a memory's body, and which frontmatter keys changed."""

    added_words: int
    removed_words: int
    hunks: tuple[WordHunk, ...]
    more_hunks: int
    frontmatter_keys: tuple[str, ...]


@dataclass(frozen=True)
class MemoryChange:
    """One memory added, changed, renamed, deleted or unmerged (paths absolute)."""

    status: str
    name: str
    path: str
    old_name: str | None = None
    old_path: str | None = None
    diagnostics: tuple[Diagnostic, ...] = ()
    word_diff: WordDiff | None = None
    conflict: str | None = None  # how git left it unmerged ("deleted by us, modified by them")


@dataclass(frozen=True)
class ChangesReport:
    """Every memory change since the base, in path order."""

    base: Base
    top: str  # the work tree's top: paths are shown relative to it
    changes: tuple[MemoryChange, ...] = field(default_factory=tuple)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """The diagnostics of every changed memory, in order."""
        return [d for change in self.changes for d in change.diagnostics]

    @property
    def conflicts(self) -> int:
        """How many memories git left unmerged."""
        return sum(1 for change in self.changes if change.status == "conflict")


# ----- the base ----------------------------------------------------------------------------


def _rev_parse(top: str, rev: str) -> str | None:
    # Callers refuse a revision that starts with "-": git would read it as an option.
    out = git_output(top, ["rev-parse", "--verify", "--quiet", rev])
    return out.decode().strip() if out else None


def find_base(top: str, rev: str | None) -> Base:
    """The given revision's commit, else the merge base with the default branch."""
    if rev is not None:
        if rev.startswith("-"):
            raise InvalidArguments(f"not a revision: {rev}")
        commit = _rev_parse(top, f"{rev}^{{commit}}")
        if commit is None:
            raise InvalidArguments(f"unknown revision {rev} (git rev-parse does not know it)")
        return Base(rev, commit, "given")
    head = _rev_parse(top, "HEAD^{commit}")
    if head is None:
        return Base("(no commit yet)", EMPTY_TREE, "the repository has no commit yet")
    branch = default_branch(top)
    if branch is None:
        return Base(
            "HEAD",
            head,
            "no default branch (origin/HEAD, main, master): since HEAD, so uncommitted "
            "changes only",
        )
    merge_base = git_output(top, ["merge-base", "HEAD", branch])
    if not merge_base:
        return Base("HEAD", head, f"HEAD and {branch} share no history: since HEAD")
    return Base(branch, merge_base.decode().strip(), f"merge base of HEAD and {branch}")


def default_branch(top: str) -> str | None:
    """origin/HEAD's branch, else main or master (local, then origin's); None without."""
    out = git_output(top, ["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"])
    if out and out.strip():
        return out.decode().strip()
    for name in DEFAULT_BRANCHES:
        for ref in (f"refs/heads/{name}", f"refs/remotes/origin/{name}"):
            if _rev_parse(top, ref) is not None:
                return name if ref.startswith("refs/heads/") else f"origin/{name}"
    return None


# ----- what changed ------------------------------------------------------------------------


def memory_changes(store: Store, rev: str | None = None) -> ChangesReport:
    """Memories added, changed, renamed and deleted since `rev` (see the module docstring)."""
    config = store.config
    root = config.root
    if git_output(root, ["rev-parse", "--is-inside-work-tree"]) is None:
        raise InvalidArguments(f"{root} is not in a git work tree: changes needs git")
    top = report_base(root)
    base = find_base(top, rev)
    pathspecs = memory_pathspecs(store, top)
    if not pathspecs:
        return ChangesReport(base, top)
    compare = ["diff", "-M", "--name-status", "-z", "--no-ext-diff", "--no-textconv"]
    diff = git_output(top, [*compare, base.commit, *pathspecs])
    untracked = git_output(top, ["ls-files", "-z", "--others", "--exclude-standard", *pathspecs])
    if diff is None or untracked is None:
        raise InvalidArguments(f"git could not compare the working tree with {base.rev}")
    entries = [*parse_name_status(diff), *(("A", path, None) for path in _split_z(untracked))]
    changes = _unmerged(store, top, pathspecs, classify(store, top, entries))
    return ChangesReport(base, top, tuple(_complete(store, top, base, changes)))


def memory_pathspecs(store: Store, top: str) -> list[str]:
    """git's pathspecs (after `--`) of the store's project folders inside the work tree;
    empty when there is none."""
    specs = [
        display_path(folder.path, top)
        for folder in store.config.folders
        if folder.scope != "global" and not os.path.isabs(display_path(folder.path, top))
    ]
    return ["--", *(f":(literal){spec}" for spec in specs)] if specs else []


def _unmerged(
    store: Store, top: str, pathspecs: list[str], changes: list[MemoryChange]
) -> list[MemoryChange]:
    """The changes with each memory git left unmerged as a conflict: against the base,
    the version left in the working tree of a delete/modify conflict looks added."""
    conflicts = unmerged_paths(top, pathspecs)
    if not conflicts:
        return changes
    found = {change.path: change for change in changes}
    for path, how in conflicts.items():
        absolute = os.path.join(top, path)
        name = store.config.qualified_name_of(absolute)
        if name is not None:
            found[absolute] = MemoryChange("conflict", name, absolute, conflict=how)
    return [found[path] for path in sorted(found)]


def parse_name_status(output: bytes) -> list[tuple[str, str, str | None]]:
    """(status letter, path, new path of a rename or copy) from `--name-status -z`."""
    tokens = _split_z(output)
    entries: list[tuple[str, str, str | None]] = []
    index = 0
    while index < len(tokens):
        status = tokens[index][:1]
        if status in ("R", "C") and index + 2 < len(tokens):
            entries.append((status, tokens[index + 1], tokens[index + 2]))
            index += 3
        elif index + 1 < len(tokens):
            entries.append((status, tokens[index + 1], None))
            index += 2
        else:
            break
    return entries


def _split_z(output: bytes) -> list[str]:
    return [p for p in output.decode("utf-8", "surrogateescape").split("\0") if p]


def classify(
    store: Store, top: str, entries: Iterable[tuple[str, str, str | None]]
) -> list[MemoryChange]:
    """The memory changes among git's entries (status letter, path, new path)."""
    config = store.config

    def name_of(path: str) -> str | None:
        # Serena's ignored_memory_patterns leave a memory out of everything, this too.
        name = config.qualified_name_of(path)
        ignored = name is not None and bool(config.patterns.ignored)
        return None if ignored and config.patterns.is_ignored(name or "") else name

    found: dict[str, MemoryChange] = {}
    for status, path, new_path in entries:
        absolute = os.path.join(top, path)
        name = name_of(absolute)
        if new_path is not None:  # a rename (R) or a copy (C): the new path is the memory
            new_absolute = os.path.join(top, new_path)
            new_name = name_of(new_absolute)
            if status == "R" and name is not None and new_name is not None:
                found[new_absolute] = MemoryChange(
                    "renamed", new_name, new_absolute, name, absolute
                )
            elif new_name is not None:
                found[new_absolute] = MemoryChange("added", new_name, new_absolute)
            if status == "R" and name is not None and new_name is None:
                found[absolute] = MemoryChange("deleted", name, absolute)
        elif name is None:
            continue
        elif status == "A":
            found[absolute] = MemoryChange("added", name, absolute)
        elif status == "D":
            found[absolute] = MemoryChange("deleted", name, absolute)
        else:  # M, T (type), U (unmerged), X
            found[absolute] = MemoryChange("changed", name, absolute)
    return [found[path] for path in sorted(found)]


def _complete(
    store: Store, top: str, base: Base, changes: Sequence[MemoryChange]
) -> Iterable[MemoryChange]:
    """Each change with its diagnostics and word diff."""
    from memory_ls.core.operations.check import check_store

    present = [c.path for c in changes if c.status != "deleted" and os.path.isfile(c.path)]
    by_path: dict[str, list[Diagnostic]] = {}
    if present:  # check_store of no path would check the whole store
        for d in check_store(store, present):
            by_path.setdefault(os.path.abspath(d.path), []).append(d)
    for d in _guard(store, top, base, changes, by_path):
        by_path.setdefault(d.path, []).append(d)
    compared = [c for c in changes if c.status in ("changed", "renamed")]
    old_texts = _old_texts(top, base, [c.old_path or c.path for c in compared])
    for change in changes:
        word_diff = None
        if change.status in ("changed", "renamed"):
            old = old_texts.get(change.old_path or change.path)
            new = _read_text(change.path)
            if old is not None and new is not None and old != new:
                word_diff = word_diff_of(old, new)
        yield MemoryChange(
            change.status,
            change.name,
            change.path,
            change.old_name,
            change.old_path,
            tuple(by_path.get(change.path, ())),
            word_diff,
            change.conflict,
        )


def _guard(
    store: Store,
    top: str,
    base: Base,
    changes: Sequence[MemoryChange],
    found: dict[str, list[Diagnostic]],
) -> list[Diagnostic]:
    """`read-only-changed` for each change to a read-only memory, `merge-conflict` for
    each unmerged memory whose check found no conflict markers."""
    by = f"the changes since {base.rev}"
    merged = MergedSide(top, staged=False)
    guarded: list[Diagnostic] = []
    for change in changes:
        if change.status == "conflict":
            if not any(d.code == "merge-conflict" for d in found.get(change.path, ())):
                shown = display_path(change.path, top)
                guarded.append(conflict_diagnostic(change.path, shown, change.conflict or ""))
            continue
        read_only = read_only_diagnostic(
            store.config,
            top,
            (change.status, change.name, change.path, change.old_name, change.old_path),
            by,
            merged,
        )
        if read_only is not None:
            guarded.append(read_only)
    return apply_severities(guarded, store.config.severities)


def _old_texts(top: str, base: Base, paths: Sequence[str]) -> dict[str, str]:
    """Each path's text at the base (one `git cat-file --batch` for all)."""
    if not paths or base.commit == EMPTY_TREE:
        return {}
    relative = [os.path.relpath(path, top).replace(os.sep, "/") for path in paths]
    feed = "".join(f"{base.commit}:{rel}\n" for rel in relative).encode("utf-8", "surrogateescape")
    out = git_output(top, ["cat-file", "--batch"], feed)
    if out is None:
        return {}
    texts: dict[str, str] = {}
    position = 0
    for path in paths:
        header_end = out.find(b"\n", position)
        if header_end == -1:
            break
        header = out[position:header_end].split()
        position = header_end + 1
        if len(header) == 3 and header[1] == b"blob":
            size = int(header[2])
            texts[path] = out[position : position + size].decode("utf-8", "replace")
            position += size + 1  # the content is followed by a newline
    return texts


def _read_text(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return None


# ----- word diff ---------------------------------------------------------------------------


def word_diff_of(old: str, new: str) -> WordDiff:
    """Changed words of the body (lines compared first, then the words of changed lines),
    and the frontmatter keys whose lines changed."""
    old_front, old_body, _old_line = split_frontmatter(old)
    new_front, new_body, new_line = split_frontmatter(new)
    old_lines = old_body.splitlines()
    new_lines = new_body.splitlines()
    hunks: list[WordHunk] = []
    added = removed = 0
    lines = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, o1, o2, n1, n2 in lines.get_opcodes():
        if tag == "equal":
            continue
        old_words = _words(old_lines[o1:o2], o1)
        new_words = _words(new_lines[n1:n2], n1)
        runs: Sequence[tuple[str, int, int, int, int]]
        if max(len(old_words), len(new_words)) > WORD_DIFF_MAX_WORDS:
            runs = [("replace", 0, len(old_words), 0, len(new_words))]
        else:
            words = difflib.SequenceMatcher(
                None, [w for w, _ in old_words], [w for w, _ in new_words], autojunk=False
            )
            runs = words.get_opcodes()
        for wtag, w1, w2, v1, v2 in runs:
            if wtag == "equal":
                continue
            removed += w2 - w1
            added += v2 - v1
            if v1 < len(new_words):
                line = new_words[v1][1]
            elif new_words:
                line = new_words[-1][1]
            else:
                line = n1 if n1 < len(new_lines) or not new_lines else len(new_lines) - 1
            hunks.append(
                WordHunk(
                    new_line + line + 1,
                    _cut(" ".join(w for w, _ in old_words[w1:w2])),
                    _cut(" ".join(w for w, _ in new_words[v1:v2])),
                )
            )
    return WordDiff(
        added,
        removed,
        tuple(hunks[:WORD_DIFF_HUNKS]),
        max(0, len(hunks) - WORD_DIFF_HUNKS),
        frontmatter_keys_changed(old_front, new_front),
    )


def _words(lines: Sequence[str], first: int) -> list[tuple[str, int]]:
    """Each word of the lines with its 0-based line number in the body."""
    return [
        (match.group(), first + offset)
        for offset, line in enumerate(lines)
        for match in _WORD.finditer(line)
    ]


def _cut(text: str) -> str:
    return text if len(text) <= WORD_DIFF_CHARS else text[: WORD_DIFF_CHARS - 1] + "…"


def frontmatter_keys_changed(old: str | None, new: str | None) -> tuple[str, ...]:
    """Top-level frontmatter keys added, removed or with other lines (no YAML parsing:
    broken frontmatter still compares)."""
    before = _key_blocks(old or "")
    after = _key_blocks(new or "")
    keys = dict.fromkeys([*after, *before])
    return tuple(key for key in keys if before.get(key) != after.get(key))


def _key_blocks(raw: str) -> dict[str, str]:
    """Each top-level key with its lines (continuation lines included)."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in raw.splitlines():
        key = _KEY_LINE.match(line)
        if key is not None:
            current = blocks.setdefault(key.group(1).strip(), [])
        if current is not None:
            current.append(line.rstrip())
    return {key: "\n".join(lines) for key, lines in blocks.items()}


# ----- rendering -------------------------------------------------------------------------------


def changes_json(report: ChangesReport) -> dict[str, Any]:
    """The JSON object of `changes --format json` and of the `memory.changes` command."""
    top = report.top
    rows = []
    for change in report.changes:
        row: dict[str, Any] = {
            "status": change.status,
            "name": change.name,
            "path": display_path(change.path, top),
        }
        if change.old_path is not None:
            row["oldName"] = change.old_name
            row["oldPath"] = display_path(change.old_path, top)
        if change.conflict is not None:
            row["conflict"] = change.conflict
        row["diagnostics"] = [
            json_row(d, display_path(d.path, top), change.name) for d in change.diagnostics
        ]
        row["wordDiff"] = _word_diff_json(change.word_diff)
        rows.append(row)
    counts = {status: 0 for status in STATUSES}
    for change in report.changes:
        counts[change.status] += 1
    return {
        "version": JSON_SHAPE_VERSION,
        "tool": {"name": TOOL_NAME, "version": __version__},
        "base": {"rev": report.base.rev, "commit": report.base.commit, "how": report.base.how},
        "root": top,
        "workingTree": True,
        "changes": rows,
        "summary": {**counts, "diagnostics": summary(report.diagnostics)},
    }


def _word_diff_json(diff: WordDiff | None) -> dict[str, Any] | None:
    if diff is None:
        return None
    return {
        "addedWords": diff.added_words,
        "removedWords": diff.removed_words,
        "hunks": [
            {"line": hunk.line, "removed": hunk.removed, "added": hunk.added} for hunk in diff.hunks
        ],
        "moreHunks": diff.more_hunks,
        "frontmatterKeys": list(diff.frontmatter_keys),
    }


def changes_text(report: ChangesReport) -> str:
    """The human-readable form: a heading, then each change with its findings and words."""
    top = report.top
    counts = {status: 0 for status in STATUSES}
    for change in report.changes:
        counts[change.status] += 1
    base = report.base
    since = (
        "in a repository with no commit yet"
        if base.commit == EMPTY_TREE
        else f"since {base.rev} ({base.commit[:10]}; {base.how})"
    )
    # Conflicts are counted only during a merge that left some.
    counted = ", ".join(
        f"{counts[status]} {status}"
        for status in STATUSES
        if status != "conflict" or counts[status]
    )
    lines = [f"Memories changed {since}, working tree included: {counted}"]
    for change in report.changes:
        shown = display_path(change.path, top)
        title = (
            f"{change.old_name} -> {change.name}" if change.old_name is not None else change.name
        )
        diff = change.word_diff
        extra = ""
        if diff is not None:
            extra = f"  (+{diff.added_words} -{diff.removed_words} words"
            if diff.frontmatter_keys:
                extra += f"; frontmatter: {', '.join(diff.frontmatter_keys)}"
            extra += ")"
        if change.conflict is not None:
            extra = f"  ({change.conflict})"
        lines.append(f"{change.status:<8} {title}  {shown}{extra}")
        lines += [f"    {text_line(d, display_path(d.path, top))}" for d in change.diagnostics]
        if diff is not None:
            for hunk in diff.hunks:
                removed = f"[-{hunk.removed}-]" if hunk.removed else ""
                added = f"{{+{hunk.added}+}}" if hunk.added else ""
                lines.append(f"    line {hunk.line}: {removed}{added}")
            if diff.more_hunks:
                lines.append(f"    ... {diff.more_hunks} more change(s)")
    return "\n".join(lines) + "\n"
