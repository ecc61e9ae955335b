"""Keep the extension's settings schema (package.json) in line with the server's settings.

The server's list of diagnostic codes, their default severities, the severities and the
choices of the enumerated settings live in `memory_ls.config`; this script writes them
into `contributes.configuration` of package.json, so that the Settings UI accepts every
code the server obeys. A description already written by hand is kept (its "(default …)"
is brought up to date); a new code gets one from DESCRIPTIONS, else a plain one.

    python client-vscode/scripts/settings_schema.py           # rewrite package.json
    python client-vscode/scripts/settings_schema.py --check   # exit 1 when it is stale

tests/packaging/test_settings_schema.py runs the check (`python3 tasks.py test`). It needs
the server's libraries (cattrs, attrs), so `npm run package`, which needs only a bare
Python with pip, does not run it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, get_args

from memory_ls.config import (
    DEFAULT_SEVERITIES,
    DIAGNOSTIC_CODES,
    DiagnosticsScope,
    LayoutName,
    SecretsPolicy,
    Severity,
)

MANIFEST = Path(__file__).resolve().parents[2] / "package.json"
PREFIX = "memoryLs."

# For codes whose description is not in package.json yet (SPEC 3.2's "when").
DESCRIPTIONS = {
    "invalid-encoding": "A memory that is not UTF-8 (it is never rewritten)",
    "possible-secret": "A credential-like string (a key, a token, a password) in a project memory",
    "ignored-link": "A reference to a memory that Serena's ignored_memory_patterns hide",
    "context-budget": (
        "An agent will not see all of a file it loads into every prompt "
        "(AI Coder's autoload.md, 2048 bytes; Claude Code's MEMORY.md, 200 lines or 25 KB)"
    ),
    "stale-path": (
        "A project memory names a workspace file or folder that does not exist "
        "(off outside a git repository unless configured)"
    ),
    "near-duplicate": "Another memory has a near-identical name or body",
    "merge-conflict": "A memory holds git conflict markers",
    "unindexed-memory": (
        "A Claude Code auto-memory topic file that the loaded part of MEMORY.md never links "
        "to (never read)"
    ),
    "broken-import": "A CLAUDE.md @path import of a file that does not exist",
    "import-cycle": "A CLAUDE.md @path import that leads back to a file already being imported",
    "import-depth": "A CLAUDE.md @path import past the five hops Claude Code follows",
    "unmatched-glob": (
        "A rule's paths (Claude Code), globs (Cursor) or applyTo (Copilot) pattern that "
        "matches no file of the repository, or a Cursor rule that can never apply"
    ),
    "missing-merge-driver": (
        ".gitattributes has git merge memories with memory-ls (merge=memory-ls), but this "
        "clone's git config lacks the driver: run memory-ls git-setup"
    ),
    "read-only-changed": (
        "memory-ls changes and check --staged (the pre-commit hook): a change adds, edits, "
        "deletes or renames a memory in a read-only (:ro) folder or matching Serena's "
        "read_only_memory_patterns"
    ),
}

# Settings whose values are one of a Literal's choices (null too where the setting can be unset).
ENUMS: dict[str, tuple[Any, ...]] = {
    "layout": (*get_args(LayoutName), None),
    "diagnosticsScope": (*get_args(DiagnosticsScope), None),
    "secrets": (*get_args(SecretsPolicy), None),
}

_DEFAULT = re.compile(r"\bdefault (error|warning|information|hint|off)\b")


def _description(code: str, old: str | None) -> str:
    default = DEFAULT_SEVERITIES[code]
    if old is None:
        what = DESCRIPTIONS.get(code, f"The {code} diagnostic")
        return f"{what} (default {default})."
    if _DEFAULT.search(old):
        return _DEFAULT.sub(f"default {default}", old, count=1)
    return f"{old.rstrip('.')} (default {default})."


def diagnostics_schema(old: dict[str, Any]) -> dict[str, Any]:
    """`memoryLs.diagnostics`: one property per server code, in the server's order."""
    properties = old.get("properties", {})
    return {
        **old,
        "properties": {
            code: {
                "type": "string",
                "enum": list(get_args(Severity)),
                "description": _description(code, properties.get(code, {}).get("description")),
            }
            for code in DIAGNOSTIC_CODES
        },
        "additionalProperties": False,
    }


def updated(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest with its settings schema brought in line with the server."""
    result: dict[str, Any] = json.loads(json.dumps(manifest))
    properties = result["contributes"]["configuration"]["properties"]
    key = f"{PREFIX}diagnostics"
    properties[key] = diagnostics_schema(properties[key])
    for name, choices in ENUMS.items():
        properties[f"{PREFIX}{name}"]["enum"] = list(choices)
    return result


def text_of(manifest: dict[str, Any]) -> str:
    return json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether it is stale")
    args = parser.parse_args(argv)
    current = MANIFEST.read_text(encoding="utf-8")
    wanted = text_of(updated(json.loads(current)))
    if wanted == current:
        return 0
    if args.check:
        print(
            f"{MANIFEST}: the settings schema lags the server's settings; run "
            "`python client-vscode/scripts/settings_schema.py`",
            file=sys.stderr,
        )
        return 1
    MANIFEST.write_text(wanted, encoding="utf-8")
    print(f"updated {MANIFEST}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
