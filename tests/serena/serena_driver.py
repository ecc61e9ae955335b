"""Run memory tool calls through the real Serena 2.1.0; run with the Serena venv's python.

stdin: {"project": DIR, "home": DIR, "scenarios": [{"id", "tree", "ops": [...]}, ...]}
where `tree` is a tree_snapshot snapshot with the labels "project" and "home" and each op
is a Serena tool call: {"tool": "write_memory", "memory_name": ..., "content": ...,
"max_chars"?}, {"tool": "read_memory", ...}, {"tool": "list_memories", "topic": ...},
{"tool": "delete_memory", ...}, {"tool": "rename_memory", "old_name", "new_name"},
{"tool": "edit_memory", "memory_name", "needle", "repl", "mode",
"allow_multiple_occurrences"}.
stdout: {"scenarios": [{"id", "steps": [{"outcome": ..., "tree": snapshot}, ...]}]}.

SERENA_HOME must be set by the caller to the "home" folder (with any surrounding
whitespace it is meant to have; relative to the working directory if relative): Serena
reads it once, when the module is imported.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

import tree_snapshot


def load_patterns(project_root: str, serena_home: str) -> tuple[list[str], list[str]]:
    """(read-only, ignored) memory patterns, merged as Serena's Project does.

    Serena's SerenaConfig.from_config_file and ProjectConfig.load would re-save both YAML
    files (migrations, missing defaults, an auth secret), changing the trees under test, so
    the reading is replicated here with Serena's own YAML loaders and defaults:
    serena_config.yml fields (+ the legacy `edit_global_memories: false` -> `global/.*`,
    appended as SerenaConfig does), then project.yml with project.local.yml's keys
    replacing its keys (ProjectConfig.load), serena_config's patterns first (Project).
    """
    from serena.config.serena_config import ProjectConfig, SerenaConfig
    from serena.util.dataclass import get_dataclass_default
    from serena.util.yaml import load_yaml

    read_only: list[str] = []
    ignored: list[str] = []
    config_path = os.path.join(serena_home, SerenaConfig.CONFIG_FILE)
    if os.path.exists(config_path):
        config = load_yaml(config_path)
        read_only += config.get(
            "read_only_memory_patterns",
            get_dataclass_default(SerenaConfig, "read_only_memory_patterns"),
        )
        ignored += config.get(
            "ignored_memory_patterns",
            get_dataclass_default(SerenaConfig, "ignored_memory_patterns"),
        )
        if "edit_global_memories" in config and not config["edit_global_memories"]:
            read_only.append("global/.*")
    serena_folder = os.path.join(project_root, ".serena")
    project_yml = os.path.join(serena_folder, ProjectConfig.SERENA_PROJECT_FILE)
    if os.path.exists(project_yml):
        data, _complete = ProjectConfig._load_yaml_dict(project_yml, apply_defaults=False)
        local_yml = ProjectConfig._project_local_yml_path(project_yml)
        if os.path.exists(local_yml):
            local, _ = ProjectConfig._load_yaml_dict(local_yml, apply_defaults=False)
            data.update(local)
        read_only += data.get("read_only_memory_patterns", [])
        ignored += data.get("ignored_memory_patterns", [])
    return read_only, ignored


def max_chars_default(serena_home: str) -> int:
    """The write tool's default max_chars: serena_config.yml's, else Serena's default."""
    from serena.config.serena_config import SerenaConfig
    from serena.util.dataclass import get_dataclass_default
    from serena.util.yaml import load_yaml

    default = int(get_dataclass_default(SerenaConfig, "default_max_tool_answer_chars"))
    config_path = os.path.join(serena_home, SerenaConfig.CONFIG_FILE)
    if os.path.exists(config_path):
        return int(load_yaml(config_path).get("default_max_tool_answer_chars", default))
    return default


def call_tool(manager: Any, op: dict[str, Any], max_default: int) -> Any:
    """One tool call, as Serena's MemoryApi makes it (is_tool_context=True)."""
    tool = op["tool"]
    if tool == "write_memory":
        # MemoryApi.write_memory's check, replicated: MemoryApi needs a whole SerenaAgent.
        max_chars = op.get("max_chars", -1)
        if max_chars == -1:
            max_chars = max_default
        if len(op["content"]) > max_chars:
            raise ValueError(
                f"Content for {op['memory_name']} is too long. Max length is {max_chars} "
                "characters. Please make the content shorter."
            )
        return manager.save_memory(op["memory_name"], op["content"], is_tool_context=True)
    if tool == "read_memory":
        return manager.load_memory(op["memory_name"])
    if tool == "list_memories":
        listing = manager.list_memories(op.get("topic", "")).to_dict()
        return {
            "memories": listing.get("memories", []),
            "read_only_memories": listing.get("read_only_memories", []),
        }
    if tool == "delete_memory":
        return manager.delete_memory(op["memory_name"], is_tool_context=True)
    if tool == "rename_memory":
        message, _count = manager.rename_memory_and_propagate_references(
            op["old_name"], op["new_name"], is_tool_context=True
        )
        return message
    if tool == "edit_memory":
        return manager.edit_memory(
            op["memory_name"],
            op["needle"],
            op["repl"],
            op["mode"],
            op.get("allow_multiple_occurrences", False),
            is_tool_context=True,
            regex_multiline=True,
        )
    raise KeyError(f"unknown tool {tool!r}")


def error_kind(exc: BaseException) -> str:
    """The outcome kind of one of Serena's exceptions (see the tests' README of kinds)."""
    message = str(exc)
    if isinstance(exc, FileNotFoundError):
        return "not-found"
    if isinstance(exc, FileExistsError):
        return "exists"
    if isinstance(exc, PermissionError):
        return "read-only"
    if isinstance(exc, re.error):
        return "invalid-arguments"
    if isinstance(exc, ValueError):
        if "ignored_memory_patterns" in message:
            return "ignored"
        if "No matches of search expression" in message:
            return "no-match"
        if "Match is ambiguous" in message or re.search(r"matches \d+ occurrences", message):
            return "ambiguous-match"
        if message.startswith(("Memory name", 'Bare "global"')):
            return "invalid-name"
        if "is too long. Max length" in message:
            return "too-large"
        if message.startswith(("Backreference", "Invalid mode")):
            return "invalid-arguments"
    return "other"


def outcome(manager: Any, op: dict[str, Any], max_default: int) -> dict[str, Any]:
    """The normalised outcome of one call: kind, value (on success), error (on failure)."""
    try:
        value = call_tool(manager, op, max_default)
    except Exception as exc:
        return {"kind": error_kind(exc), "error": f"{type(exc).__name__}: {exc}"}
    # Serena's delete reports a missing memory in its message, not by raising.
    if op["tool"] == "delete_memory" and str(value).endswith(" not found."):
        return {"kind": "not-found", "error": f"(returned) {value}"}
    return {"kind": "ok", "value": value}


def run_scenario(scenario: dict[str, Any], roots: dict[str, str]) -> list[dict[str, Any]]:
    """Set up the scenario's tree, run its ops, and snapshot the trees after each."""
    from serena.config.serena_config import SerenaPaths
    from serena.memories.memory_manager import MemoryManager

    tree_snapshot.restore(scenario["tree"], roots)
    # What importing Serena did to the home folder, done again for each fresh tree.
    MemoryManager._global_memory_dir.mkdir(parents=True, exist_ok=True)
    serena_home = SerenaPaths().serena_user_home_dir
    read_only, ignored = load_patterns(roots["project"], serena_home)
    manager = MemoryManager(
        os.path.join(roots["project"], ".serena"),
        read_only_memory_patterns=read_only,
        ignored_memory_patterns=ignored,
    )
    max_default = max_chars_default(serena_home)
    steps = []
    for op in scenario["ops"]:
        steps.append(
            {"outcome": outcome(manager, op, max_default), "tree": tree_snapshot.take(roots)}
        )
    return steps


def main() -> None:
    """Read the request on stdin, write the results on stdout."""
    request = json.load(sys.stdin)
    roots = {"project": request["project"], "home": request["home"]}
    if os.path.abspath(os.environ.get("SERENA_HOME", "").strip()) != roots["home"]:
        sys.exit(f"SERENA_HOME must be {roots['home']!r} (whitespace aside) for this request")
    results = [
        {"id": scenario["id"], "steps": run_scenario(scenario, roots)}
        for scenario in request["scenarios"]
    ]
    json.dump({"scenarios": results}, sys.stdout)


if __name__ == "__main__":
    main()
