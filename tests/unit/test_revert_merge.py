"""Revert never discards later work: a change's inverse is merged, or refused (issue 34 p. 4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from store_helpers import Workspace

from memory_ls.core import Store
from memory_ls.core.storage.gate import version_of

# Lines far enough apart that git merge-file sees changes to the first and the last as
# separate hunks (three lines of context between them).
LINES = ["# Deploy", "", "Step one: build.", "", "a", "b", "c", "d", "", "Step two: ship.", ""]
ORIGINAL = "\n".join(LINES)


def _with(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new)


def _file(ws: Workspace, name: str = "deploy") -> Path:
    return ws.primary / f"{name}.md"


def _three_changes(ws: Workspace) -> tuple[Store, int, int]:
    """A memory, a change to its first step (the one reverted), a later change to its last."""
    store = ws.store(global_enabled=False)
    store.save("deploy", ORIGINAL)
    store.edit("deploy", needle="Step one: build.", replacement="Step one: build with make.")
    store.edit("deploy", needle="Step two: ship.", replacement="Step two: ship on Fridays.")
    later, first, _created = store.history("deploy")
    return store, first.id, later.id


def test_reverting_an_earlier_change_keeps_the_later_edit(ws: Workspace) -> None:
    store, first, later = _three_changes(ws)
    answer = store.revert("deploy", first)
    text = _file(ws).read_text()
    assert "Step one: build.\n" in text and "make" not in text
    assert "Step two: ship on Fridays." in text  # the later change is kept
    assert text == _with(ORIGINAL, "Step two: ship.", "Step two: ship on Fridays.")
    assert answer["merged"] is True and answer["keptChanges"] == [later]
    assert answer["revertedTo"] == first
    assert answer["version"] == version_of(text.encode())
    # The merged revert is a change of its own, and undoing it gives the edit back.
    newest = store.history("deploy")[0]
    assert newest.action == "revert"
    store.revert("deploy")
    assert "Step one: build with make." in _file(ws).read_text()


def test_a_revert_with_nothing_built_on_the_change_is_exact_as_before(ws: Workspace) -> None:
    store, _first, later = _three_changes(ws)
    before_later = store.history("deploy")[0].before
    answer = store.revert("deploy", later)
    assert _file(ws).read_bytes() == before_later
    assert "merged" not in answer and "keptChanges" not in answer


def test_a_later_edit_of_the_same_line_is_refused_and_nothing_changes(ws: Workspace) -> None:
    store = ws.store(global_enabled=False)
    store.save("deploy", ORIGINAL)
    store.edit("deploy", needle="Step one: build.", replacement="Step one: build with make.")
    store.edit("deploy", needle="with make.", replacement="with make -j4.")
    later, first, _created = store.history("deploy")
    current = _file(ws).read_bytes()
    with ws.refuses("version-conflict") as refused:
        store.revert("deploy", first.id)
    message = str(refused.value)
    assert f"change {first.id}" in message and str(later.id) in message
    # Which line conflicts, as it is now and as it was before the change.
    assert "line 3 now 'Step one: build with make -j4.'" in message
    assert "'Step one: build.'" in message and "Nothing was changed" in message
    assert _file(ws).read_bytes() == current
    assert "<<<<<<<" not in _file(ws).read_text()
    assert store.history("deploy")[0].id == later.id  # nothing journaled


def test_frontmatter_and_body_merge_when_later_changes_touch_other_keys(ws: Workspace) -> None:
    store = ws.store(global_enabled=False)
    store.save("deploy", ORIGINAL, tags=["ops"])
    store.edit("deploy", needle="Step one: build.", replacement="Step one: build twice.")
    first = store.history("deploy")[0].id
    text = _file(ws).read_text()
    _file(ws).write_text(_with(text, "tags: [ops]", "tags: [ops, release]"))
    store.edit("deploy", needle="Step two: ship.", replacement="Step two: ship it.")
    store.revert("deploy", first)
    text = _file(ws).read_text()
    assert "tags: [ops, release]" in text and "Step two: ship it." in text
    assert "Step one: build.\n" in text and "twice" not in text


def test_a_creation_edited_since_is_not_deleted(ws: Workspace) -> None:
    store = ws.store(global_enabled=False)
    store.save("deploy", ORIGINAL)
    created = store.history("deploy")[0].id
    store.edit("deploy", needle="Step two: ship.", replacement="Step two: ship it.")
    current = _file(ws).read_bytes()
    with ws.refuses("version-conflict") as refused:
        store.revert("deploy", created)
    assert "would delete that work" in str(refused.value)
    assert _file(ws).read_bytes() == current


def test_a_memory_created_again_after_a_delete_is_not_overwritten(ws: Workspace) -> None:
    store = ws.store(global_enabled=False)
    store.save("deploy", ORIGINAL)
    store.delete("deploy")
    deleted = store.history("deploy")[0].id
    store.save("deploy", "# Deploy\n\nA new plan.\n")
    current = _file(ws).read_bytes()
    with ws.refuses("version-conflict"):
        store.revert("deploy", deleted)
    assert _file(ws).read_bytes() == current


def test_a_change_the_journal_cannot_place_is_refused(ws: Workspace) -> None:
    store = ws.store(global_enabled=False)
    store.save("deploy", ORIGINAL)
    store.edit("deploy", needle="Step one: build.", replacement="Step one: build with make.")
    first = store.history("deploy")[0].id
    current = _file(ws).read_bytes()
    # An entry whose content before is not the first edit's after (a journal written
    # before the gaps were filled): what the memory held after the first edit is unknown.
    store.journal.record(
        action="save",
        name="deploy",
        path=str(_file(ws)),
        before=b"# Deploy\n\nsomething else\n",
        after=current,
        source="external",
    )
    with ws.refuses("version-conflict") as refused:
        store.revert("deploy", first)
    assert "journal did not keep" in str(refused.value)
    assert _file(ws).read_bytes() == current


def test_a_store_write_after_an_unseen_change_journals_it_first(ws: Workspace) -> None:
    store = ws.store(global_enabled=False)
    store.save("deploy", ORIGINAL)
    store.edit("deploy", needle="Step one: build.", replacement="Step one: build with make.")
    first = store.history("deploy")[0].id
    # Another program changes the file while no server watches, then the store writes.
    _file(ws).write_text(_with(_file(ws).read_text(), "\na\n", "\nA\n"))
    store.edit("deploy", needle="Step two: ship.", replacement="Step two: ship it.")
    edit, unseen, _first, _created = store.history("deploy")
    assert (unseen.action, unseen.source, edit.source) == ("save", "external", "core")
    assert unseen.version_after == edit.version_before
    answer = store.revert("deploy", first)
    text = _file(ws).read_text()
    assert "\nA\n" in text and "ship it." in text and "Step one: build.\n" in text
    assert answer["keptChanges"] == [unseen.id, edit.id]


def test_without_git_a_merge_is_refused_but_a_plain_revert_still_works(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, first, later = _three_changes(ws)
    empty = tmp_path / "no-git"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    current = _file(ws).read_bytes()
    with ws.refuses("version-conflict") as refused:
        store.revert("deploy", first)
    assert "needs git" in str(refused.value)
    assert _file(ws).read_bytes() == current
    store.revert("deploy", later)  # nothing built on it: no merge, no git
    assert "Step two: ship.\n" in _file(ws).read_text()


# ----- a revert after `git pull` ------------------------------------------------------


def _git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _two_clones(ws: Workspace) -> Path:
    """The workspace and a teammate's clone of one repository with the memory; the teammate's."""
    origin = ws.tmp / "origin.git"
    _git(ws.tmp, "init", "--bare", str(origin))
    _git(ws.root, "init")
    _git(ws.root, "remote", "add", "origin", str(origin))
    ws.write(_file(ws), ORIGINAL)
    _git(ws.root, "add", ".")
    _git(ws.root, "commit", "-m", "deploy")
    _git(ws.root, "push", "-u", "origin", "main")
    mate = ws.tmp / "mate"
    _git(ws.tmp, "clone", str(origin), str(mate))
    return mate


def _teammate_adds_a_line(ws: Workspace, mate: Path) -> None:
    """The teammate pulls, adds a line at the end of the memory, commits and pushes."""
    _git(mate, "pull")
    theirs = mate / ".serena" / "memories" / "deploy.md"
    theirs.write_text(theirs.read_text() + "Step three: tell the team.\n")
    _git(mate, "commit", "-am", "step three")
    _git(mate, "push")


def test_a_revert_after_git_pull_keeps_the_pulled_line(ws: Workspace) -> None:
    mate = _two_clones(ws)
    store = ws.store(global_enabled=False)
    store.edit("deploy", needle="Step one: build.", replacement="Step one: build with make.")
    edit = store.history("deploy")[0].id
    _git(ws.root, "commit", "-am", "an agent's edit")
    _git(ws.root, "push")
    _teammate_adds_a_line(ws, mate)
    _git(ws.root, "pull")  # no server watched: the journal never saw the pulled line
    assert "Step three: tell the team." in _file(ws).read_text()

    answer = store.revert("deploy", edit)
    text = _file(ws).read_text()
    assert "Step three: tell the team." in text  # the pulled line stays
    assert "Step one: build.\n" in text and "make" not in text
    # The journal caught up with the pull first: it is the later change the revert kept.
    revert, pulled, _edit = store.history("deploy")
    assert (pulled.action, pulled.source, revert.action) == ("save", "git", "revert")
    assert answer["merged"] is True and answer["keptChanges"] == [pulled.id]


def _cli(ws: Workspace, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(ws.home), "XDG_CACHE_HOME": str(ws.cache)}
    return subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", *args, "--no-global"],
        cwd=ws.root,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_cli_revert_after_git_pull_keeps_the_pulled_line_and_says_so(ws: Workspace) -> None:
    mate = _two_clones(ws)
    edited = _cli(ws, "edit", "deploy", "--needle", "Step one: build.", "--replacement", "Step 1.")
    assert edited.returncode == 0, edited.stderr
    entries = json.loads(_cli(ws, "history", "deploy", "--json").stdout)["entries"]
    _git(ws.root, "commit", "-am", "an agent's edit")
    _git(ws.root, "push")
    _teammate_adds_a_line(ws, mate)
    _git(ws.root, "pull")

    done = _cli(ws, "revert", "deploy", "--to", str(entries[0]["id"]))
    assert done.returncode == 0, done.stderr
    assert "merged" in done.stdout and "kept" in done.stdout
    text = _file(ws).read_text()
    assert "Step three: tell the team." in text and "Step one: build.\n" in text

    # Undoing the first edit again conflicts with a later edit of its line: refused,
    # exit 3, the line named, the file unchanged.
    again = _cli(ws, "edit", "deploy", "--needle", "Step one: build.", "--replacement", "Go.")
    assert again.returncode == 0, again.stderr
    current = _file(ws).read_bytes()
    refused = _cli(ws, "revert", "deploy", "--to", str(entries[0]["id"]))
    assert refused.returncode == 3 and "[version-conflict]" in refused.stderr
    assert "line 3 now 'Go.'" in refused.stderr
    assert _file(ws).read_bytes() == current
