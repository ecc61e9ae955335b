"""Superseded memories: `superseded` diagnostics from either side's frontmatter, on real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from store_helpers import Workspace

from memory_ls.core import Diagnostic, Store, check_store
from memory_ls.core.operations.disk_check import DiskDiagnostics
from memory_ls.core.services.diagnostics import text_diagnostics
from memory_ls.core.services.index import MemoryIndex


def _superseded(found: list[Diagnostic], ws: Workspace) -> list[tuple[str, str, int, str]]:
    """(file, severity, line, kind) of each `superseded` diagnostic, sorted."""
    return sorted(
        (Path(d.path).name, d.severity, d.line, str(d.data.get("kind")))
        for d in found
        if d.code == "superseded"
    )


def _message(found: list[Diagnostic], file: str) -> str:
    return next(d.message for d in found if d.code == "superseded" and d.path.endswith(file))


def test_the_new_memory_declaring_supersedes_marks_the_old_one(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "auth_v1.md", "# Auth, first take\n")
    ws.write(ws.primary / "auth_v2.md", "---\nsupersedes: auth_v1\n---\n# Auth\n")
    found = check_store(store)
    assert _superseded(found, ws) == [("auth_v1.md", "hint", 0, "superseded")]
    message = _message(found, "auth_v1.md")
    assert message.startswith("Superseded by auth_v2: read that one")
    assert "auth_v2's frontmatter says so" in message


def test_the_old_memory_declaring_superseded_by_gets_the_hint_on_its_key(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "old.md", "---\ntags: [a]\nsuperseded_by: '[[new]]'\n---\nold facts\n")
    ws.write(ws.primary / "new.md", "new facts\n")
    found = check_store(store)
    assert _superseded(found, ws) == [("old.md", "hint", 2, "superseded")]
    hint = next(d for d in found if d.code == "superseded")
    assert (hint.col, hint.end_col) == (0, len("superseded_by"))
    assert "old's frontmatter says so" in hint.message


def test_both_sides_declaring_give_one_hint(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "old.md", "---\nsuperseded_by: new\n---\nold\n")
    ws.write(ws.primary / "new.md", "---\nsupersedes: [old]\n---\nnew\n")
    found = check_store(store)
    assert _superseded(found, ws) == [("old.md", "hint", 1, "superseded")]
    assert "both old's and new's frontmatter say so" in _message(found, "old.md")


def test_a_cycle_is_an_error_on_each_declaring_key(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "a.md", "---\ntags: [x]\nsupersedes: b\n---\nA\n")
    ws.write(ws.primary / "b.md", "---\nsupersedes: a\n---\nB\n")
    found = check_store(store)
    assert _superseded(found, ws) == [
        ("a.md", "error", 2, "cycle"),
        ("b.md", "error", 1, "cycle"),
    ]
    assert "a is superseded by b, which is superseded by a" in _message(found, "a.md")


def test_a_longer_cycle_reaches_the_member_that_declares_nothing(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "a.md", "---\nsupersedes: b\n---\nA\n")
    ws.write(ws.primary / "b.md", "---\nsupersedes: c\n---\nB\n")
    ws.write(ws.primary / "c.md", "---\nsuperseded_by: b\nsupersedes: a\n---\nC\n")
    ws.write(ws.primary / "d.md", "plain\n")
    rows = _superseded(check_store(store), ws)
    assert [row[0] for row in rows] == ["a.md", "b.md", "c.md"]
    assert {row[1:] for row in rows} <= {("error", 1, "cycle"), ("error", 2, "cycle")}


def test_a_memory_that_supersedes_itself_is_a_cycle(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "loop.md", "---\nsupersedes: loop\n---\nx\n")
    assert _superseded(check_store(store), ws) == [("loop.md", "error", 1, "cycle")]


def test_a_missing_target_is_an_error_on_the_key_line(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "new.md", "---\ntags: []\nsupersedes: [gone, here]\n---\nx\n")
    ws.write(ws.primary / "here.md", "y\n")
    ws.write(ws.primary / "old.md", "---\nsuperseded_by: nowhere\n---\nz\n")
    found = check_store(store)
    assert _superseded(found, ws) == [
        ("here.md", "hint", 0, "superseded"),
        ("new.md", "error", 2, "missing"),
        ("old.md", "error", 1, "missing"),
    ]
    assert "`supersedes: gone` names no memory" in _message(found, "new.md")


def test_a_value_that_is_no_name_is_an_error(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "new.md", "---\nsupersedes: [1, old]\n---\nx\n")
    ws.write(ws.primary / "old.md", "y\n")
    assert _superseded(check_store(store), ws) == [
        ("new.md", "error", 1, "invalid"),
        ("old.md", "hint", 0, "superseded"),
    ]


def test_the_hint_follows_its_setting_and_errors_stay_errors(ws: Workspace) -> None:
    store = ws.store(diagnostics={"superseded": "warning"})
    ws.write(ws.primary / "new.md", "---\nsupersedes: [old, gone]\n---\nx\n")
    ws.write(ws.primary / "old.md", "y\n")
    assert _superseded(check_store(store), ws) == [
        ("new.md", "error", 1, "missing"),
        ("old.md", "warning", 0, "superseded"),
    ]
    off = ws.store(diagnostics={"superseded": "off"})
    assert _superseded(check_store(off), ws) == []


def test_global_names_are_kept_apart_from_project_ones(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.global_dir / "style.md", "global style\n")
    ws.write(ws.primary / "style.md", "project style\n")
    ws.write(ws.primary / "style_v2.md", "---\nsupersedes: global/style\n---\nx\n")
    assert _superseded(check_store(store), ws) == [("style.md", "hint", 0, "superseded")]
    hinted = next(d for d in check_store(store) if d.code == "superseded")
    assert hinted.path == str(ws.global_dir / "style.md")


def test_checking_one_file_still_reads_the_other_side(ws: Workspace) -> None:
    store: Store = ws.store()
    old = ws.write(ws.primary / "old.md", "old\n")
    ws.write(ws.primary / "new.md", "---\nsupersedes: old\n---\nnew\n")
    assert _superseded(check_store(store, [str(old)]), ws) == [("old.md", "hint", 0, "superseded")]


def test_a_shadowed_file_declares_nothing(ws: Workspace) -> None:
    store = ws.store(["docs"])
    ws.write(ws.primary / "new.md", "new\n")
    ws.write(ws.root / "docs" / "new.md", "---\nsupersedes: old\n---\nhidden copy\n")
    ws.write(ws.primary / "old.md", "old\n")
    assert _superseded(check_store(store), ws) == []


def _kinds(disk: DiskDiagnostics[tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """File name -> the kinds of its `superseded` diagnostics, for files with any."""
    found = {}
    for path, (_, report) in disk.reports().items():
        if report:
            found[Path(path).name] = report
    return found


def _superseded_kinds(path: str, found: list[Diagnostic], text: str | None) -> tuple[str, ...]:
    return tuple(sorted(str(d.data.get("kind")) for d in found if d.code == "superseded"))


def test_workspace_diagnostics_follow_the_other_side_as_it_changes(ws: Workspace) -> None:
    old = ws.write(ws.primary / "old.md", "old\n")
    new = ws.write(ws.primary / "new.md", "new\n")
    ws.write(ws.primary / "other.md", "unrelated\n")
    store = ws.store()
    index = MemoryIndex(store.config)
    index.scan()
    disk = DiskDiagnostics(index, _superseded_kinds)
    disk.check_all()
    assert _kinds(disk) == {}

    # The newer memory now says it supersedes the old one: the old one is rechecked.
    new.write_text("---\nsupersedes: old\n---\nnew\n")
    assert disk.update([str(new)], index.update_paths([str(new)])) == {str(old)}
    assert _kinds(disk) == {"old.md": ("superseded",)}

    # The old one answers back: a cycle, an error on both.
    old.write_text("---\nsupersedes: new\n---\nold\n")
    assert disk.update([str(old)], index.update_paths([str(old)])) == {str(old), str(new)}
    assert _kinds(disk) == {"old.md": ("cycle",), "new.md": ("cycle",)}

    # The newer one goes away: the old one's key names no memory.
    new.unlink()
    disk.update([str(new)], index.update_paths([str(new)]))
    assert _kinds(disk) == {"old.md": ("missing",)}


def test_the_first_workspace_check_sees_relations_declared_by_later_files(ws: Workspace) -> None:
    # Checked in no particular order: the old file may be read before the new one.
    ws.write(ws.primary / "a_old.md", "old\n")
    ws.write(ws.primary / "z_new.md", "---\nsupersedes: a_old\n---\nnew\n")
    ws.write(ws.primary / "a_first.md", "---\nsuperseded_by: z_new\n---\nfirst\n")
    store = ws.store()
    index = MemoryIndex(store.config)
    index.scan()
    disk = DiskDiagnostics(index, _superseded_kinds)
    disk.check_all()
    assert _kinds(disk) == {"a_old.md": ("superseded",), "a_first.md": ("superseded",)}


def test_the_index_learns_the_relations_an_open_document_is_checked_against(
    ws: Workspace,
) -> None:
    ws.write(ws.primary / "old.md", "old\n")
    ws.write(ws.primary / "new.md", "---\nsupersedes: [old, gone]\n---\nnew\n")
    store = ws.store()
    index = MemoryIndex(store.config)
    index.scan()
    index.warm()
    assert [(d.name, d.relations.supersedes) for d in index.declarations()] == [
        ("new", ("old", "gone"))
    ]
    graph = index.supersede_graph()
    memory = index.file(str(ws.primary / "old.md"))
    assert memory is not None
    # The open document as typed: it now names the new one itself.
    typed = "---\nsuperseded_by: new\n---\nold, edited\n"
    found = text_diagnostics(
        store.config,
        index.name_index(),
        memory.path,
        typed,
        memory,
        index.shadowed_by(),
        supersedes=graph,
    )
    hint = next(d for d in found if d.code == "superseded")
    assert hint.line == 1 and "both old's and new's frontmatter say so" in hint.message


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(root.parent / "home"), "XDG_CACHE_HOME": str(root / "c")}
    return subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", *args, "--root", str(root)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_the_cli_reads_with_a_note_on_stderr_and_checks(ws: Workspace) -> None:
    ws.write(ws.primary / "old.md", "# Old\nold facts\n")
    ws.write(ws.primary / "new.md", "---\nsupersedes: old\n---\n# New\n")
    read = _cli(ws.root, "read", "old")
    assert read.returncode == 0
    assert read.stdout == "# Old\nold facts\n"
    assert read.stderr.startswith("memory-ls: Note: this memory (old) is superseded by new")
    as_json = json.loads(_cli(ws.root, "read", "old", "--json").stdout)
    assert as_json["supersededBy"] == ["new"]
    assert json.loads(_cli(ws.root, "read", "new", "--json").stdout)["supersededBy"] == []
    check = _cli(ws.root, "check")
    assert ".serena/memories/old.md:1:1: hint superseded Superseded by new" in check.stdout
    # A hint alone is no failure; a name no memory has is an error.
    assert check.returncode == 0, check.stdout
    ws.write(ws.primary / "new.md", "---\nsupersedes: [old, olden]\n---\n# New\n")
    check = _cli(ws.root, "check")
    assert ".serena/memories/new.md:2:1: error superseded `supersedes: olden`" in check.stdout
    assert check.returncode == 1


def test_related_memories_through_the_store(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "hub.md", "# Hub\n[[a]] [[global/g]] [[b]] [[a]]\n")
    ws.write(ws.primary / "a.md", "First line, no heading\n# Later heading\n[[hub]]\n")
    ws.write(ws.global_dir / "g.md", "---\ntags: [x]\n---\n## Global one\n")
    ws.write(ws.primary / "hubs.md", "Not [[hub]]s: `mem:hub`\n")
    ws.write(ws.primary / "hub_2.md", "[[hub_2]] only\n")
    ws.write(ws.global_dir / "other.md", "Project hub from global: [[hub]]\n")
    related = store.read("hub", related=True)["related"]
    assert related["links"] == [
        {"name": "a", "title": "Later heading", "broken": False},
        {"name": "global/g", "title": "Global one", "broken": False},
        {"name": "b", "broken": True},
    ]
    assert related["backlinks"] == [
        {"name": "a", "line": 3, "text": "[[hub]]"},
        {"name": "global/other", "line": 1, "text": "Project hub from global: [[hub]]"},
        {"name": "hubs", "line": 1, "text": "Not [[hub]]s: `mem:hub`"},
    ]
