"""Diagnostics in the forms CI and code review read: text, GitHub workflow commands,
SARIF 2.1.0 and a stable JSON shape (`memory-ls check --format`, `memory-ls changes`).

Any diagnostic code is rendered, including codes this module has no description for:
those get a generic rule description rather than being dropped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from memory_ls import __version__
from memory_ls.config import DIAGNOSTIC_CODES
from memory_ls.core.services.diagnostics import Diagnostic

FORMATS = ("text", "github", "sarif", "json")
# The version of the `--format json` shape: raised only when a key changes meaning or goes.
JSON_SHAPE_VERSION = 1
TOOL_NAME = "memory-ls"
# Where each rule's help points: the README (the package's page shows it).
DOCS_URL = "https://pypi.org/project/memory-ls/"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
# The base every SARIF artifact location is relative to (GitHub code scanning's convention).
SRCROOT = "%SRCROOT%"
SEVERITIES = ("error", "warning", "information", "hint")
GITHUB_COMMAND = {"error": "error", "warning": "warning", "information": "notice", "hint": "notice"}
SARIF_LEVEL = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}

RULE_DESCRIPTIONS: Mapping[str, str] = {
    "unknown-prefix": "An ALL-CAPS name prefix matches no additional folder.",
    "misrouted": "A memory is stored outside the folder its name's prefix routes to.",
    "broken-link": "A reference names a memory that does not exist.",
    "shadowed": "A memory is hidden by another of the same name earlier in lookup order.",
    "invalid-frontmatter": "Frontmatter does not parse or has values of the wrong type.",
    "invalid-name": "A memory file's name breaks the naming rules.",
    "too-large": "A memory is larger than maxMemoryBytes.",
    "invalid-encoding": "A memory is not UTF-8 text.",
    "possible-secret": "A project memory holds a credential-like string.",
    "ignored-link": "A reference names a memory that Serena's ignored_memory_patterns hide.",
    "context-budget": "An agent will not see all of a file it loads into every prompt.",
    "stale-path": "A memory names a workspace file or folder that does not exist.",
    "near-duplicate": (
        "Another memory has a near-identical name or body, or the same heading and a similar body."
    ),
    "merge-conflict": "A memory holds unresolved git conflict markers.",
    "superseded": "Another memory supersedes this one (or a supersede relation cannot hold).",
    "missing-merge-driver": ".gitattributes names merge=memory-ls; git config lacks the driver.",
    "read-only-changed": "A change adds, edits, deletes or renames a read-only memory.",
    "unindexed-memory": "A Claude Code topic file that the loaded part of MEMORY.md never names.",
    "broken-import": "A CLAUDE.md @import names a file that does not exist.",
    "import-cycle": "A CLAUDE.md @import leads back to a file already being imported.",
    "import-depth": "A CLAUDE.md @import lies past the five hops Claude Code follows.",
    "unmatched-glob": "A rule's paths/globs/applyTo pattern matches no file, or it never applies.",
}
README_SECTION = "diagnostics"


def rule_description(code: str) -> str:
    """A one-sentence description of a diagnostic code (generic for an unknown one)."""
    return RULE_DESCRIPTIONS.get(code, f"memory-ls diagnostic {code}.")


def report_base(root: str) -> str:
    """The directory report paths are relative to: the top of the git work tree holding
    `root` (where CI and GitHub resolve paths), else `root` itself."""
    current = Path(os.path.abspath(root))
    for folder in (current, *current.parents):
        if (folder / ".git").exists():
            return str(folder)
    return str(current)


def display_path(path: str, base: str) -> str:
    """`path` relative to `base` with `/`, or absolute when it lies outside `base`."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, base)
    if relative == ".." or relative.startswith(".." + os.sep):
        return absolute
    return relative.replace(os.sep, "/")


def summary(diagnostics: Iterable[Diagnostic]) -> dict[str, int]:
    """How many diagnostics of each severity, of any severity, and in how many files."""
    counts = dict.fromkeys(SEVERITIES, 0)
    files = set()
    total = 0
    for d in diagnostics:
        counts[d.severity] = counts.get(d.severity, 0) + 1
        files.add(d.path)
        total += 1
    return {**counts, "total": total, "files": len(files)}


def summary_line(diagnostics: Sequence[Diagnostic]) -> str:
    """The closing line `check` prints on standard error."""
    counts = summary(diagnostics)
    notes = counts["total"] - counts["error"] - counts["warning"]
    return f"memory-ls: {counts['error']} error(s), {counts['warning']} warning(s), {notes} note(s)"


def has_findings(diagnostics: Iterable[Diagnostic]) -> bool:
    """Whether `check` exits 1: some warning or error."""
    return any(d.severity in ("error", "warning") for d in diagnostics)


# ----- text ------------------------------------------------------------------------------


def text_line(d: Diagnostic, shown_path: str) -> str:
    """`path:line:col: severity code message` (SPEC 4; 1-based)."""
    return f"{shown_path}:{d.line + 1}:{d.col + 1}: {d.severity} {d.code} {d.message}"


# ----- GitHub workflow commands ------------------------------------------------------------


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as the Actions toolkit does."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value, escaped as the Actions toolkit does."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_line(d: Diagnostic, shown_path: str) -> str:
    """One `::error file=…,line=…::message` annotation (columns only within one line)."""
    properties = [("file", shown_path), ("line", str(d.line + 1))]
    if d.end_line == d.line:
        # GitHub takes columns only on a one-line annotation; its end column is inclusive.
        properties.append(("col", str(d.col + 1)))
        properties.append(("endColumn", str(max(d.end_col, d.col + 1))))
    properties.append(("endLine", str(d.end_line + 1)))
    properties.append(("title", f"{TOOL_NAME} {d.code}"))
    joined = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    command = GITHUB_COMMAND.get(d.severity, "notice")
    return f"::{command} {joined}::{escape_data(d.message)}"


# ----- SARIF 2.1.0 -------------------------------------------------------------------------


def sarif_rules(codes: Iterable[str]) -> list[dict[str, Any]]:
    """One reportingDescriptor per code: the known codes, then any others, in order."""
    ordered = list(dict.fromkeys([*DIAGNOSTIC_CODES, *RULE_DESCRIPTIONS, *codes]))
    return [
        {
            "id": code,
            "name": code,
            "shortDescription": {"text": rule_description(code)},
            "helpUri": f"{DOCS_URL}#{README_SECTION}",
        }
        for code in ordered
    ]


def sarif_log(diagnostics: Sequence[Diagnostic], base: str) -> dict[str, Any]:
    """A SARIF 2.1.0 log of one run; locations relative to `base` (%SRCROOT%)."""
    rules = sarif_rules(d.code for d in diagnostics)
    rule_index = {rule["id"]: index for index, rule in enumerate(rules)}
    results = []
    for d in diagnostics:
        shown = display_path(d.path, base)
        if os.path.isabs(shown):
            artifact: dict[str, Any] = {"uri": Path(shown).as_uri()}
        else:
            artifact = {"uri": _uri_path(shown), "uriBaseId": SRCROOT}
        results.append(
            {
                "ruleId": d.code,
                "ruleIndex": rule_index[d.code],
                "level": SARIF_LEVEL.get(d.severity, "note"),
                "message": {"text": d.message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": artifact,
                            "region": {
                                "startLine": d.line + 1,
                                "startColumn": d.col + 1,
                                "endLine": d.end_line + 1,
                                # SARIF's end column is the one after the region.
                                "endColumn": d.end_col + 1,
                            },
                        }
                    }
                ],
            }
        )
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": TOOL_NAME,
                        "version": __version__,
                        "informationUri": DOCS_URL,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": Path(base).as_uri() + "/"}},
                # Diagnostics count columns in code points, as the language server does.
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def _uri_path(relative: str) -> str:
    """A relative path as a URI reference (spaces and the like percent-encoded)."""
    return quote(relative, safe="/")


# ----- JSON --------------------------------------------------------------------------------


def json_row(d: Diagnostic, shown_path: str, name: str | None) -> dict[str, Any]:
    """One diagnostic of the JSON shape (1-based; endCol is the column after the range)."""
    return {
        "path": shown_path,
        "name": name,
        "line": d.line + 1,
        "col": d.col + 1,
        "endLine": d.end_line + 1,
        "endCol": d.end_col + 1,
        "severity": d.severity,
        "code": d.code,
        "message": d.message,
    }


def json_report(
    diagnostics: Sequence[Diagnostic], base: str, name_of: Callable[[str], str | None]
) -> dict[str, Any]:
    """The `--format json` object: shape version, tool, root (of the paths), diagnostics,
    summary."""
    return {
        "version": JSON_SHAPE_VERSION,
        "tool": {"name": TOOL_NAME, "version": __version__},
        "root": base,
        "diagnostics": [
            json_row(d, display_path(d.path, base), name_of(d.path)) for d in diagnostics
        ],
        "summary": summary(diagnostics),
    }


def render(
    diagnostics: Sequence[Diagnostic],
    fmt: str,
    *,
    root: str,
    name_of: Callable[[str], str | None],
) -> str:
    """Diagnostics in one of FORMATS (text paths relative to the store root, as before;
    the others relative to the git work tree's top, else the root); ends with a newline
    unless empty."""
    if fmt == "text":
        lines = [text_line(d, _text_path(d.path, root)) for d in diagnostics]
    elif fmt == "github":
        base = report_base(root)
        lines = [github_line(d, display_path(d.path, base)) for d in diagnostics]
    elif fmt == "sarif":
        lines = [
            json.dumps(sarif_log(diagnostics, report_base(root)), ensure_ascii=False, indent=2)
        ]
    elif fmt == "json":
        report = json_report(diagnostics, report_base(root), name_of)
        lines = [json.dumps(report, ensure_ascii=False, indent=2)]
    else:
        raise ValueError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    return "".join(line + "\n" for line in lines)


def _text_path(path: str, root: str) -> str:
    """As `check` always printed it: relative to the root where inside it, else absolute."""
    relative = os.path.relpath(path, root)
    return path if relative.startswith("..") else relative
