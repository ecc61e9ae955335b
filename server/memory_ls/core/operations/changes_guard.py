"""What `changes` and `check --staged` refuse in a team's memories: changes to read-only
memories (a `:ro` folder, Serena's `read_only_memory_patterns`), and unmerged memories
(a delete/modify conflict has no conflict markers to find)."""

from __future__ import annotations

import os
from functools import cached_property

from memory_ls.core.services.diagnostics import Diagnostic
from memory_ls.core.services.formats import display_path
from memory_ls.core.storage.folders import StoreConfig
from memory_ls.core.storage.git import git_output

READ_ONLY_CODE = "read-only-changed"
# What a change did, as the message says it (status -> verb).
_VERBS = {"added": "add", "changed": "edit", "deleted": "delete"}
# git's stages of an unmerged path (1 base, 2 ours, 3 theirs), worded as `git status` words them.
_UNMERGED = {
    frozenset("123"): "both modified",
    frozenset("23"): "both added",
    frozenset("13"): "deleted by us, modified by them",
    frozenset("12"): "modified by us, deleted by them",
    frozenset("1"): "both deleted",
    frozenset("2"): "added by us",
    frozenset("3"): "added by them",
}


def read_only_rule(config: StoreConfig, top: str, path: str, name: str) -> str | None:
    """The rule that makes the memory at `path` (named `name`) read-only, in words; None
    when it is writable."""
    folder = config.owner_of(path)
    if folder is not None and folder.read_only:
        return f"the folder {display_path(folder.path, top)} is read-only (`:ro`)"
    for pattern in config.patterns.read_only:
        if pattern.fullmatch(name):
            shown = [display_path(source, top) for source in config.patterns.sources]
            where = " and ".join(shown) or "Serena's configuration"
            return (
                f"it matches the pattern {pattern.pattern!r} of read_only_memory_patterns ({where})"
            )
    return None


class MergedSide:
    """During a merge, whether a file is as the merged branch (MERGE_HEAD) has it: such a
    change is the other branch's (made where it was allowed), not this one's."""

    def __init__(self, top: str, *, staged: bool) -> None:
        self.top = top
        self.staged = staged  # the index's version, else the working tree's

    @cached_property
    def active(self) -> bool:
        """Whether a merge is under way (asked only once a read-only memory changed)."""
        head = git_output(self.top, ["rev-parse", "--verify", "--quiet", "MERGE_HEAD^{commit}"])
        return bool(head and head.strip())

    def theirs(self, path: str) -> bool:
        """Whether `path` (absolute) is as MERGE_HEAD has it, absent included."""
        if not self.active:
            return False
        rel = os.path.relpath(path, self.top).replace(os.sep, "/")
        theirs = git_output(self.top, ["rev-parse", "--verify", "--quiet", f"MERGE_HEAD:{rel}"])
        if self.staged:
            ours = git_output(self.top, ["rev-parse", "--verify", "--quiet", f":0:{rel}"])
        elif os.path.isfile(path):
            ours = git_output(self.top, ["hash-object", "--", rel])
        else:
            ours = None
        return (theirs or b"").strip() == (ours or b"").strip()


def read_only_diagnostic(
    config: StoreConfig,
    top: str,
    change: tuple[str, str, str, str | None, str | None],
    by: str,
    merged: MergedSide | None = None,
) -> Diagnostic | None:
    """A `read-only-changed` error for a change (status, name, path, old name, old path)
    to a read-only memory; `by` says whose change it is ("the changes since main"). During
    a merge (`merged`), a file left as the merged branch has it is not this branch's change."""
    status, name, path, old_name, old_path = change
    rule = read_only_rule(config, top, path, name)
    what = f"{name} is read-only: {rule}; {by} {_VERBS.get(status, 'change')} it"
    if status == "renamed" and old_name is not None and old_path is not None:
        # Moving a memory out of a read-only folder deletes it there: the old side counts.
        old_rule = read_only_rule(config, top, old_path, old_name)
        if old_rule is not None:
            what, rule = f"{old_name} is read-only: {old_rule}; {by} rename it to {name}", old_rule
        else:
            what = f"{name} is read-only: {rule}; {by} rename {old_name} to it"
    if rule is None:
        return None
    if merged is not None and merged.theirs(path) and (old_path is None or merged.theirs(old_path)):
        return None
    return Diagnostic(
        path,
        0,
        0,
        0,
        0,
        READ_ONLY_CODE,
        f"{what}. Read-only memories change only where they are owned (like CODEOWNERS): "
        "undo the change, or change the rule if the memory is no longer read-only.",
        severity="error",
        data={"name": name, "status": status, "rule": rule},
    )


def unmerged_paths(top: str, pathspecs: list[str]) -> dict[str, str]:
    """The paths (relative to `top`) git could not merge, each with how (`git status`'s
    words: "deleted by us, modified by them"); empty outside a merge."""
    out = git_output(top, ["ls-files", "-u", "-z", *pathspecs])
    stages: dict[str, set[str]] = {}
    for entry in (out or b"").decode("utf-8", "surrogateescape").split("\0"):
        meta, tab, path = entry.partition("\t")
        fields = meta.split()
        if tab and len(fields) == 3:
            stages.setdefault(path, set()).add(fields[2])
    return {path: _UNMERGED.get(frozenset(s), "unmerged") for path, s in stages.items()}


def conflict_diagnostic(path: str, shown: str, how: str) -> Diagnostic:
    """A `merge-conflict` error for an unmerged memory, with what resolves it."""
    if "deleted" in how and how != "both deleted":
        fix = f"keep this version (git add {shown}) or delete it (git rm {shown})"
    elif how == "both deleted":
        fix = f"confirm the delete (git rm {shown})"
    else:
        fix = f"edit it to the merged text, then git add {shown}"
    return Diagnostic(
        path,
        0,
        0,
        0,
        0,
        "merge-conflict",
        f"Unmerged ({how}): git could not merge this memory. Resolve it: {fix}; then "
        "commit the merge.",
        severity="error",
        data={"conflict": how},
    )
