"""`memory-ls init`: a repository set up in one idempotent command that never loses what
is there: the project file, git's merge driver, and the MCP server for the agents."""

from __future__ import annotations

import argparse
import json
import os
import shutil
from typing import Any, TextIO

import attrs

from memory_ls.config import Layer, merge_layers
from memory_ls.core.layouts import detect_layout
from memory_ls.core.storage.folders import resolve_store_config
from memory_ls.core.storage.git import work_tree_top
from memory_ls.project_file import (
    DEFAULT_FILE_NAME,
    ProjectFile,
    project_values_equal,
    read_project_file,
    render_project_file,
    write_atomic,
)

EXIT_OK = 0
EXIT_REFUSED = 3
SERVER_KEY = "memory-ls"

# Where each agent reads a project's MCP servers, and the table that holds them:
# - Claude Code: `.mcp.json` at the project root, `mcpServers` (docs.anthropic.com,
#   Claude Code "MCP": project scope); it starts stdio servers in the project directory,
#   where `memory-ls mcp` finds the project file by itself.
# - VS Code: `.vscode/mcp.json`, `servers` (code.visualstudio.com, "MCP servers in VS
#   Code": workspace configuration); `${workspaceFolder}` is expanded in `args`.
# - Cursor: `.cursor/mcp.json`, `mcpServers` (docs.cursor.com, "Model Context
#   Protocol": project configuration); it expands `${workspaceFolder}` too.
MCP_FILES: tuple[tuple[str, str, str, dict[str, Any]], ...] = (
    ("Claude Code", ".mcp.json", "mcpServers", {"command": "memory-ls", "args": ["mcp"]}),
    (
        "VS Code",
        os.path.join(".vscode", "mcp.json"),
        "servers",
        {
            "type": "stdio",
            "command": "memory-ls",
            "args": ["mcp", "--root", "${workspaceFolder}"],
        },
    ),
    (
        "Cursor",
        os.path.join(".cursor", "mcp.json"),
        "mcpServers",
        {"command": "memory-ls", "args": ["mcp", "--root", "${workspaceFolder}"]},
    ),
)

PRE_COMMIT_SNIPPET = """\
# .pre-commit-config.yaml (memory-ls installed where git runs; the project file names
# the folders, so the hook needs no arguments)
repos:
  - repo: local
    hooks:
      - id: memory-ls-check
        name: memory-ls check
        entry: memory-ls check --memories-only --staged
        language: system
        types: [markdown]
        require_serial: true
        always_run: true"""

CI_SNIPPET = """\
# a CI job (GitHub Actions), from the repository's root:
- run: pip install memory-ls
- run: memory-ls check --format github"""


@attrs.define
class InitReport:
    """What `init` did, step by step (each: done, unchanged, skipped or refused)."""

    root: str
    steps: list[dict[str, Any]] = attrs.Factory(list)

    def add(self, step: str, state: str, path: str | None, detail: str) -> None:
        """Note one step."""
        self.steps.append({"step": step, "state": state, "path": path, "detail": detail})


def init_root(start: str, project: ProjectFile | None) -> str:
    """Where the project file is, or goes: its directory, else the git top, else `start`."""
    if project is not None:
        return project.directory
    return work_tree_top(start) or start


def project_step(
    report: InitReport, project: ProjectFile | None, flags: Layer, root: str
) -> ProjectFile | None:
    """Write the project file from the flags; an existing one is kept, never rewritten.

    Returns the project file in effect, or None when the flags disagree with it (nothing
    is written then: the user edits the file, which may hold comments we would lose).
    """
    if project is not None:
        differing = [
            key
            for key, value in flags.values.items()
            if not project_values_equal({key: value}, {key: project.layer.values.get(key)})
        ]
        if differing:
            names = ", ".join(sorted(k.replace("_", "-") for k in differing))
            report.add(
                "project-file",
                "refused",
                project.path,
                f"the options given differ from the file on {names}; edit the file "
                "(init never rewrites it)",
            )
            return None
        report.add("project-file", "unchanged", project.path, "kept as it is")
        return project
    values = dict(flags.values)
    values.setdefault("layout", detect_layout(root))
    path = os.path.join(root, DEFAULT_FILE_NAME)
    write_atomic(path, render_project_file(values, root))
    report.add("project-file", "written", path, "the store's settings, for every surface")
    return read_project_file(path)


def git_step(report: InitReport, project: ProjectFile, flags: Layer) -> None:
    """Run git-setup for the store the project file defines."""
    from memory_ls.core.services.git_setup import GitSetupError, driver_command, install

    if work_tree_top(project.directory) is None:
        report.add("git-setup", "skipped", None, "not a git repository")
        return
    config = resolve_store_config(
        merge_layers(project.layer, flags), project.directory, project_file=project.path
    )
    try:
        done = install(config, driver_command())
    except GitSetupError as exc:
        report.add("git-setup", "refused", None, str(exc))
        return
    for folder in done.skipped_folders:
        report.add("git-setup", "skipped", folder, "outside the repository")
    if done.changed:
        added = ", ".join(done.added_lines) or "no new lines"
        report.add(
            "git-setup",
            "written",
            done.attributes_file,
            f"merge driver set up ({added}; git config {', '.join(done.config_set) or 'kept'})",
        )
    else:
        report.add("git-setup", "unchanged", done.attributes_file, "merge driver already set up")


def _load_json_object(path: str) -> dict[str, Any] | str:
    """The file's JSON object, or why it cannot be merged into."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot be read ({exc})"
    if not text.strip():
        return {}
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        # VS Code's mcp.json may hold comments: rewriting it would drop them.
        return f"is not plain JSON ({exc.msg} at line {exc.lineno}); add the entry by hand"
    if not isinstance(document, dict):
        return "does not hold a JSON object"
    return document


def mcp_step(report: InitReport, root: str) -> None:
    """Add the memory-ls server to each agent's project MCP file, leaving others' alone."""
    for agent, relative, table, entry in MCP_FILES:
        path = os.path.join(root, relative)
        document = _load_json_object(path)
        if isinstance(document, str):
            snippet = json.dumps({table: {SERVER_KEY: entry}})
            report.add(f"mcp:{agent}", "skipped", path, f"{document}: {snippet}")
            continue
        servers = document.get(table)
        if servers is None:
            servers = document[table] = {}
        if not isinstance(servers, dict):
            report.add(f"mcp:{agent}", "skipped", path, f"its {table!r} is not an object")
            continue
        existing = servers.get(SERVER_KEY)
        if existing == entry:
            report.add(f"mcp:{agent}", "unchanged", path, "memory-ls already registered")
            continue
        if existing is not None:
            report.add(f"mcp:{agent}", "unchanged", path, "kept the memory-ls entry already there")
            continue
        servers[SERVER_KEY] = entry
        write_atomic(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        report.add(f"mcp:{agent}", "written", path, "memory-ls registered (memory-ls mcp)")


def initialize(
    project: ProjectFile | None, flags: Layer, start: str, *, git: bool, mcp: bool
) -> InitReport:
    """Set the repository that holds `start` up; see the module's docstring."""
    root = init_root(start, project)
    report = InitReport(root=root)
    in_effect = project_step(report, project, flags, root)
    if in_effect is None:
        return report
    if git:
        git_step(report, in_effect, flags)
    if mcp:
        mcp_step(report, root)
    return report


def _text(report: InitReport, stdout: TextIO) -> None:
    for step in report.steps:
        where = f" {os.path.relpath(step['path'], report.root)}" if step["path"] else ""
        print(f"{step['state']:>9}  {step['step']}{where}: {step['detail']}", file=stdout)
    if any(step["state"] == "refused" for step in report.steps):
        return
    if shutil.which("memory-ls") is None:
        print(
            "\nnote: `memory-ls` is not on this PATH; agents start `memory-ls mcp` by that "
            "name, so install it where they run (pipx install memory-ls).",
            file=stdout,
        )
    print("\nTo check memories before each commit:\n", file=stdout)
    print(PRE_COMMIT_SNIPPET, file=stdout)
    print("\nAnd in CI:\n", file=stdout)
    print(CI_SNIPPET, file=stdout)


def run_init(
    args: argparse.Namespace,
    project: ProjectFile | None,
    flags: Layer,
    start: str,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """The `init` command: set up, print what was done; 3 when the file was refused."""
    report = initialize(project, flags, start, git=not args.no_git, mcp=not args.no_mcp)
    refused = [s for s in report.steps if s["state"] == "refused"]
    if args.json:
        print(json.dumps({"root": report.root, "steps": report.steps}, indent=2), file=stdout)
    else:
        _text(report, stdout)
    for step in refused:
        print(f"memory-ls: error: [init] {step['step']}: {step['detail']}", file=stderr)
    return EXIT_REFUSED if refused else EXIT_OK
