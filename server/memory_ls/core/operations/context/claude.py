"""Claude Code: managed policy, CLAUDE.md files, rules, their imports, auto memory."""

from __future__ import annotations

import os

from memory_ls.core.layouts import Repository
from memory_ls.core.layouts import claude as claude_layout
from memory_ls.core.operations.context.plan import (
    _frontmatter,
    _line_cut,
    _loaded_part,
    _matches,
    _Plan,
    _walk,
)
from memory_ls.core.operations.context.result import (
    Headroom,
)
from memory_ls.core.rules.agent_syntax import (
    find_imports,
    line_count,
    looks_like_path,
    split_globs,
)
from memory_ls.core.services.agent_checks import import_target
from memory_ls.core.storage.agent_repository import canonical_top

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
    _claude_file(
        plan,
        os.path.join(home, "CLAUDE.md"),
        "user",
        "your instructions: every project",
    )
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
                plan,
                os.path.join(folder, name),
                "ancestor",
                "a parent folder's: loaded at launch",
            )
    for relative in ("CLAUDE.md", ".claude/CLAUDE.md"):
        _claude_file(
            plan,
            os.path.join(plan.root, relative),
            "project",
            "the project's instructions",
        )
    _claude_file(
        plan,
        os.path.join(plan.root, "CLAUDE.local.md"),
        "local",
        "your notes for this project",
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
            plan.skip(
                target,
                "cycle",
                f"an import cycle ({loop}); Claude Code skips it",
                importer,
            )
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
