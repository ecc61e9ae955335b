"""Cursor's and GitHub Copilot's rules: always applied, or applied by their globs."""

from __future__ import annotations

import os

from memory_ls.core.layouts import copilot as copilot_layout
from memory_ls.core.layouts import cursor as cursor_layout
from memory_ls.core.operations.context.plan import (
    _frontmatter,
    _matches,
    _Plan,
    _under,
    _walk,
)
from memory_ls.core.operations.context.result import (
    LoadedFile,
)
from memory_ls.core.rules.agent_syntax import (
    estimate_tokens,
    lenient_frontmatter,
    split_globs,
)

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
