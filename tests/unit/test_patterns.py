"""Serena's memory patterns (SPEC 2.2): `ignored_memory_patterns` and
`read_only_memory_patterns` from `.serena/project.yml`, `project.local.yml` and
`$SERENA_HOME/serena_config.yml`, and the legacy `edit_global_memories: false`."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_helpers import Workspace

from memory_ls.core import Store, check_store
from memory_ls.core.layouts.serena import load_patterns, serena_home
from memory_ls.core.services.index import MemoryIndex
from memory_ls.core.storage.folders import default_global_folder

PROJECT_YML = """\
project_name: demo
ignored_memory_patterns:
  - 'scratch/.*'
  - 'global/private_.*'
read_only_memory_patterns:
  - 'decisions/.*'
  - 'global/team'
"""


def _project_yml(ws: Workspace, text: str = PROJECT_YML) -> Path:
    return ws.write(ws.root / ".serena" / "project.yml", text)


@pytest.fixture
def patterned(ws: Workspace) -> Store:
    """Memories under each kind of pattern, and some under none."""
    _project_yml(ws)
    for name in ("plain", "scratch/tmp", "decisions/adr1", "scratchpad"):
        ws.write(ws.primary / f"{name}.md", f"{name} body\n")
    for name in ("private_diary", "team", "tips"):
        ws.write(ws.global_dir / f"{name}.md", f"{name} body\n")
    return ws.store()


def _names(store: Store, **kwargs: object) -> list[str]:
    return [m["name"] for m in store.list_memories(**kwargs)["memories"]]


def test_ignored_memories_are_not_listed_searched_exported_or_indexed(
    ws: Workspace, patterned: Store
) -> None:
    expected = ["decisions/adr1", "global/team", "global/tips", "plain", "scratchpad"]
    assert _names(patterned) == expected
    assert sorted(r["name"] for r in patterned.export()) == expected
    assert {r["name"] for r in patterned.search("body")["results"]} == set(expected)
    index = MemoryIndex(patterned.config)
    index.scan()
    assert list(index.names()) == expected
    assert index.lookup("scratch/tmp") is None
    assert index.lookup("global/private_diary") is None
    # A file event for an ignored memory adds nothing either.
    path = ws.write(ws.primary / "scratch" / "new.md", "new\n")
    assert index.update_path(str(path)).changed is False
    assert index.lookup("scratch/new") is None
    assert all("scratch/" not in d.path for d in check_store(patterned))


def test_every_operation_on_an_ignored_memory_is_refused(ws: Workspace, patterned: Store) -> None:
    calls = [
        lambda: patterned.read("scratch/tmp"),
        lambda: patterned.read("global/private_diary"),
        lambda: patterned.save("scratch/tmp", "x"),
        lambda: patterned.save("scratch/new", "x"),
        lambda: patterned.edit("scratch/tmp", content="x"),
        lambda: patterned.delete("scratch/tmp"),
        lambda: patterned.move("scratch/tmp", "kept"),
        lambda: patterned.move("plain", "scratch/plain"),
        lambda: patterned.route("scratch/new"),
    ]
    for call in calls:
        with ws.refuses("ignored") as info:
            call()
        assert "ignored_memory_patterns" in str(info.value)


def test_patterns_match_the_whole_name(ws: Workspace, patterned: Store) -> None:
    # `scratch/.*` does not match `scratchpad`; `global/team` does not match project `team`.
    assert patterned.read("scratchpad")["readOnly"] is False
    patterned.save("team", "a project team\n")
    assert patterned.read("team")["readOnly"] is False
    assert patterned.read("global/team")["readOnly"] is True


def test_read_only_memories_are_read_and_listed_but_never_written(
    ws: Workspace, patterned: Store
) -> None:
    listed = {m["name"]: m["readOnly"] for m in patterned.list_memories()["memories"]}
    assert listed["decisions/adr1"] is True and listed["global/team"] is True
    assert listed["plain"] is False and listed["global/tips"] is False
    assert patterned.read("decisions/adr1")["content"] == "decisions/adr1 body\n"
    assert patterned.read("decisions/adr1")["readOnly"] is True
    calls = [
        lambda: patterned.save("decisions/adr1", "x"),
        lambda: patterned.save("decisions/adr2", "x"),  # a new one under the pattern too
        lambda: patterned.edit("decisions/adr1", content="x"),
        lambda: patterned.delete("decisions/adr1"),
        lambda: patterned.move("decisions/adr1", "adr1"),
        lambda: patterned.move("plain", "decisions/plain"),
        lambda: patterned.save("global/team", "x"),
        lambda: patterned.delete("global/team"),
    ]
    for call in calls:
        with ws.refuses("read-only") as info:
            call()
        assert "read_only_memory_patterns" in str(info.value) or "read-only" in str(info.value)


def test_a_reference_to_an_ignored_memory_is_an_ignored_link(
    ws: Workspace, patterned: Store
) -> None:
    ws.write(ws.primary / "links.md", "[[scratch/tmp]] [[global/private_diary]] [[gone]]\n")
    found = [d for d in check_store(patterned) if d.path.endswith("links.md")]
    assert sorted((d.code, d.col) for d in found) == [
        ("broken-link", 43),
        ("ignored-link", 2),
        ("ignored-link", 18),
    ]
    assert {d.severity for d in found if d.code == "ignored-link"} == {"information"}


def test_an_invalid_pattern_is_reported_and_only_it_is_skipped(ws: Workspace) -> None:
    _project_yml(ws, "ignored_memory_patterns: ['scratch/.*', '(unclosed']\n")
    ws.write(ws.primary / "scratch" / "tmp.md", "x\n")
    ws.write(ws.primary / "(unclosed.md", "x\n")
    store = ws.store()
    problems = store.config.patterns.problems
    assert len(problems) == 1
    assert "(unclosed" in problems[0] and "project.yml" in problems[0]
    assert _names(store) == ["(unclosed"]


@pytest.mark.parametrize(
    "text",
    [
        "ignored_memory_patterns: scratch/.*\n",  # a string, not a list
        "ignored_memory_patterns: [1, 2]\n",
        "- not\n- a mapping\n",
        "ignored_memory_patterns: [unclosed\n",  # not YAML
    ],
)
def test_an_unusable_project_yml_is_reported_not_fatal(ws: Workspace, text: str) -> None:
    _project_yml(ws, text)
    ws.write(ws.primary / "scratch" / "tmp.md", "x\n")
    store = ws.store()
    assert store.config.patterns.problems
    assert _names(store) == ["scratch/tmp"]


def test_project_local_yml_overrides_a_key_of_project_yml(ws: Workspace) -> None:
    _project_yml(ws)
    ws.write(
        ws.root / ".serena" / "project.local.yml",
        "ignored_memory_patterns: ['local_.*']\n",
    )
    for name in ("scratch/tmp", "local_x", "decisions/adr1"):
        ws.write(ws.primary / f"{name}.md", "x\n")
    store = ws.store()
    # The local key replaces the project's ignored list; the read-only list is kept.
    assert _names(store, scope="project") == ["decisions/adr1", "scratch/tmp"]
    assert store.read("decisions/adr1")["readOnly"] is True


def test_the_user_config_and_the_project_patterns_are_merged(ws: Workspace) -> None:
    serena = ws.tmp / "serena-home"
    ws.write(serena / "serena_config.yml", "ignored_memory_patterns: ['user_.*']\n")
    _project_yml(ws, "ignored_memory_patterns: ['proj_.*']\n")
    for name in ("user_a", "proj_b", "kept"):
        ws.write(ws.primary / f"{name}.md", "x\n")
    store = ws.store(environ={"SERENA_HOME": str(serena)})
    assert _names(store, scope="project") == ["kept"]
    assert len(store.config.patterns.sources) == 2


def test_edit_global_memories_false_makes_global_memories_read_only(ws: Workspace) -> None:
    serena = ws.tmp / "serena-home"
    ws.write(serena / "serena_config.yml", "edit_global_memories: false\n")
    ws.write(serena / "memories" / "global" / "tips.md", "tips\n")
    ws.write(ws.primary / "local.md", "x\n")
    store = ws.store(environ={"SERENA_HOME": str(serena)})
    assert store.read("global/tips")["readOnly"] is True
    with ws.refuses("read-only"):
        store.save("global/tips", "x")
    with ws.refuses("read-only"):
        store.save("global/new", "x")
    with ws.refuses("read-only"):
        store.move("local", "global/local")
    assert store.save("local", "project memories stay writable\n")["created"] is False


def test_edit_global_memories_true_changes_nothing(ws: Workspace) -> None:
    serena = ws.tmp / "serena-home"
    ws.write(serena / "serena_config.yml", "edit_global_memories: true\n")
    store = ws.store(environ={"SERENA_HOME": str(serena)})
    assert store.save("global/new", "x")["created"] is True


@pytest.mark.parametrize("value", ["", "   ", "\t\n"])
def test_an_empty_serena_home_means_the_default(ws: Workspace, value: str) -> None:
    env = {"SERENA_HOME": value}
    assert serena_home(env) == str(ws.home / ".serena")
    assert default_global_folder("serena", env) == str(ws.global_dir)
    assert ws.store(environ=env).config.global_folder.path == str(ws.global_dir)


def test_serena_home_is_stripped_of_surrounding_whitespace(ws: Workspace) -> None:
    serena = ws.tmp / "serena-home"
    ws.write(serena / "serena_config.yml", "ignored_memory_patterns: ['user_.*']\n")
    env = {"SERENA_HOME": f"  {serena}\n"}
    assert serena_home(env) == str(serena)
    store = ws.store(environ=env)
    assert store.config.global_folder.path == str(serena / "memories" / "global")
    assert load_patterns(str(ws.root), env).is_ignored("user_x")


def test_a_relative_serena_home_is_relative_to_the_working_directory(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As Serena opens it: against the process's directory, not the workspace root.
    cwd = ws.tmp / "elsewhere"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    ws.write(cwd / "rel-home" / "serena_config.yml", "ignored_memory_patterns: ['user_.*']\n")
    ws.write(ws.root / "rel-home" / "serena_config.yml", "ignored_memory_patterns: ['root_.*']\n")
    env = {"SERENA_HOME": " rel-home "}
    assert serena_home(env) == str(cwd / "rel-home")
    store = ws.store(environ=env)
    assert store.config.global_folder.path == str(cwd / "rel-home" / "memories" / "global")
    patterns = load_patterns(str(ws.root), env)
    assert patterns.is_ignored("user_x") and not patterns.is_ignored("root_x")
    # `~` in SERENA_HOME is a folder name to Serena, not the home folder.
    assert serena_home({"SERENA_HOME": "~/s"}) == str(cwd / "~" / "s")
