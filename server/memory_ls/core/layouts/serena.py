"""Serena's layout: `.serena/memories`, the global folder and its memory patterns (SPEC 2.2).

Serena reads `read_only_memory_patterns` and `ignored_memory_patterns` from
`$SERENA_HOME/serena_config.yml` and from the project's `.serena/project.yml` (keys of
`project.local.yml` replacing the project's), concatenates them (the user's first), and
matches each pattern against the whole memory name, `global/` included. The legacy
`edit_global_memories: false` makes `global/.*` read-only.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from memory_ls.core.layouts.base import Layout, MemoryPatterns

SERENA_HOME_DEFAULT = "~/.serena"
PROJECT_YML = os.path.join(".serena", "project.yml")
PROJECT_LOCAL_YML = os.path.join(".serena", "project.local.yml")
SERENA_CONFIG_YML = "serena_config.yml"
READ_ONLY_KEY = "read_only_memory_patterns"
IGNORED_KEY = "ignored_memory_patterns"


def serena_home(environ: Mapping[str, str]) -> str:
    """Serena's home folder: `SERENA_HOME` stripped of surrounding whitespace, as Serena does.

    A relative `SERENA_HOME` is relative to the working directory, as Serena opens it (not
    to the workspace), and `~` in it is not expanded (Serena does not expand it either).
    """
    home = environ.get("SERENA_HOME")
    if home is None or not home.strip():
        return os.path.expanduser(SERENA_HOME_DEFAULT)
    return os.path.abspath(home.strip())


def global_folder(environ: Mapping[str, str]) -> str:
    """Serena's global memories: `$SERENA_HOME/memories/global`."""
    return os.path.join(serena_home(environ), "memories", "global")


def watched_files(root: str, environ: Mapping[str, str]) -> list[str]:
    """The files whose change changes the patterns."""
    return [
        os.path.join(root, PROJECT_YML),
        os.path.join(root, PROJECT_LOCAL_YML),
        os.path.join(serena_home(environ), SERENA_CONFIG_YML),
    ]


def load_patterns(root: str, environ: Mapping[str, str]) -> MemoryPatterns:
    """The patterns in force for a workspace, read as Serena reads them."""
    problems: list[str] = []
    sources: list[str] = []
    user_file = os.path.join(serena_home(environ), SERENA_CONFIG_YML)
    user = _read_yaml(user_file, problems)
    project_file = os.path.join(root, PROJECT_YML)
    project = _read_yaml(project_file, problems)
    local_file = os.path.join(root, PROJECT_LOCAL_YML)
    local = _read_yaml(local_file, problems)
    # Serena applies project.local.yml only together with a project.yml.
    if project is not None and local:
        project = {**project, **local}
    read_only: list[tuple[str, str]] = []
    ignored: list[tuple[str, str]] = []
    for data, path in ((user, user_file), (project, project_file)):
        if data is None:
            continue
        found_ro = _pattern_list(data, READ_ONLY_KEY, path, problems)
        found_ig = _pattern_list(data, IGNORED_KEY, path, problems)
        if data is user and "edit_global_memories" in data and not data["edit_global_memories"]:
            found_ro.append("global/.*")
        if found_ro or found_ig:
            sources.append(path)
        read_only += [(pattern, path) for pattern in found_ro]
        ignored += [(pattern, path) for pattern in found_ig]
    return MemoryPatterns(
        read_only=_compile_all(read_only, problems),
        ignored=_compile_all(ignored, problems),
        sources=tuple(sources),
        problems=tuple(problems),
    )


def _read_yaml(path: str, problems: list[str]) -> dict[str, Any] | None:
    """A YAML mapping from a file; None when the file is absent or unusable (said in problems)."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{path}: cannot be read ({exc}); its memory patterns are not applied.")
        return None
    import yaml  # imported here: most starts have no Serena configuration to read

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        problems.append(f"{path}: not valid YAML ({exc}); its memory patterns are not applied.")
        return None
    if data is None:
        return {}
    if not isinstance(data, dict):
        problems.append(f"{path}: not a YAML mapping; its memory patterns are not applied.")
        return None
    return data


def _pattern_list(data: Mapping[str, Any], key: str, path: str, problems: list[str]) -> list[str]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        problems.append(f"{path}: {key} must be a list of regular expressions; it is not applied.")
        return []
    return list(value)


def _compile_all(
    patterns: Sequence[tuple[str, str]], problems: list[str]
) -> tuple[re.Pattern[str], ...]:
    compiled: dict[str, re.Pattern[str]] = {}
    # Serena compiles the set of patterns: duplicates count once.
    for pattern, path in patterns:
        if pattern in compiled:
            continue
        try:
            compiled[pattern] = re.compile(pattern)
        except re.error as exc:
            # Serena would not start the project at all; one bad pattern must not hide
            # the memories the other patterns protect, so only it is skipped.
            problems.append(
                f"{path}: memory pattern {pattern!r} is not a valid regular expression ({exc}); "
                "it is not applied."
            )
    return tuple(compiled.values())


SERENA = Layout(
    name="serena",
    agent="Serena",
    primary_folder=".serena/memories",
    global_folder=global_folder,
    patterns=load_patterns,
    pattern_files=watched_files,
)
