"""`[[note#Heading]]` links (issue 34): parsed with the heading apart from the name,
matched as Obsidian and Foam match them (text ignoring case, or the GitHub anchor), kept
by a move's rewrite, and a missing heading is a `broken-link` in `check` (also on the
command line); and the project file edit "Create folder" makes for an unknown prefix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from store_helpers import Workspace

from memory_ls.core import check_store
from memory_ls.core.operations.disk_check import DiskDiagnostics
from memory_ls.core.rules.headings import (
    closest_heading,
    find_heading,
    heading_matches,
    heading_slug,
    headings,
    wanted_heading,
)
from memory_ls.core.rules.references import find_references
from memory_ls.core.services.diagnostics import Diagnostic
from memory_ls.core.services.index import MemoryIndex
from memory_ls.lsp.prefix_fixes import with_folder, without_prefix

NOTE = "# Payments\n\n## Retry policy (v2)\n\n```\n## Not one\n```\n## Refunds ##\n"


def test_the_fragment_is_apart_from_the_name() -> None:
    line = "See [[ payments#Retry policy | the policy]], [[global/tips.md#Git]] and [[#Top]]."
    refs = find_references(line)
    assert [(r.target, r.fragment, r.label) for r in refs] == [
        ("payments", "Retry policy", " the policy"),
        ("global/tips", "Git", None),
    ]
    first = refs[0]
    assert line[first.start : first.end] == "payments"
    assert line[first.fragment_start : first.fragment_end] == "Retry policy"
    # Serena's `mem:` form has no fragment: `#` stays part of what it names.
    (mem,) = find_references("Read `mem:c#_notes`.")
    assert (mem.name, mem.fragment) == ("c#_notes", None)


def test_headings_outside_code_and_their_anchors() -> None:
    found = headings(NOTE)
    assert [(h.level, h.title, h.line) for h in found] == [
        (1, "Payments", 0),
        (2, "Retry policy (v2)", 2),
        (2, "Refunds", 7),
    ]
    assert heading_slug("Retry policy (v2)") == "retry-policy-v2"
    assert heading_slug("Café & crème_brûlée") == "café--crème_brûlée"


@pytest.mark.parametrize(
    ("fragment", "title"),
    [
        ("Retry policy (v2)", "Retry policy (v2)"),
        ("retry  POLICY (v2)", "Retry policy (v2)"),
        ("retry-policy-v2", "Retry policy (v2)"),
        ("Payments#Refunds", "Refunds"),  # Obsidian's nested form: the last heading
    ],
)
def test_a_fragment_names_a_heading_by_text_or_anchor(fragment: str, title: str) -> None:
    found = find_heading(headings(NOTE), fragment)
    assert found is not None and found.title == title


def test_blocks_and_missing_headings() -> None:
    found = headings(NOTE)
    assert wanted_heading("^a1b2") is None and find_heading(found, "^a1b2") is None
    assert wanted_heading("") is None
    assert find_heading(found, "Not one") is None  # in fenced code
    assert not heading_matches("Retry", "Retry policy (v2)")
    assert closest_heading(found, "Refnuds") == "Refunds"
    assert closest_heading(found, "Chargebacks") is None


def test_a_move_keeps_the_fragment(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "payments.md", NOTE)
    linker = ws.write(
        ws.primary / "linker.md", "[[payments#Refunds|refunds]] [[payments]] `mem:payments`\n"
    )
    store.move("payments", "billing")
    assert linker.read_text() == "[[billing#Refunds|refunds]] [[billing]] `mem:billing`\n"


def test_check_reports_a_missing_heading(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "payments.md", NOTE)
    text = "[[payments#Refunds]] [[payments#Refnuds]] [[payments#Nope]] [[payments#^blk]]\n"
    linker = ws.write(ws.primary / "linker.md", text)
    found = [d for d in check_store(store, [str(linker)]) if d.code == "broken-link"]
    assert [(d.col, d.end_col) for d in found] == [
        (text.index("Refnuds"), text.index("Refnuds") + len("Refnuds")),
        (text.index("Nope"), text.index("Nope") + len("Nope")),
    ]
    assert found[0].message == (
        'Memory payments has no heading "Refnuds"; the link opens the top of the note. '
        'Did you mean "Refunds"?'
    )
    assert found[0].data["suggestion"] == "Refunds"
    assert found[1].message.endswith("Fix the heading or drop the #part.")


def test_memory_ls_check_fails_on_a_missing_heading(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    memories = root / ".serena" / "memories"
    memories.mkdir(parents=True)
    (memories / "payments.md").write_text(NOTE)
    (memories / "linker.md").write_text("Good [[payments#refunds]], bad [[payments#Retyr]].\n")
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    result = subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", "check", "--no-global"],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        ".serena/memories/linker.md:1:43: warning broken-link Memory payments has no heading "
        '"Retyr"; the link opens the top of the note. Fix the heading or drop the #part.'
    ]


def test_the_project_file_gets_the_new_folder_with_its_comments_kept() -> None:
    assert with_folder('layout = "serena"\n', "shared/bugfix") == (
        'layout = "serena"\nadditional-folders = ["shared/bugfix"]\n'
    )
    assert with_folder('additional-folders = ["a", "b"]  # mine\n', "c") == (
        'additional-folders = ["a", "b", "c"]  # mine\n'
    )
    assert with_folder("additional-folders = []\n", "c") == 'additional-folders = ["c"]\n'
    block = (
        "# the store\nadditional-folders = [\n"
        '  "shared/feature",  # features\n'
        '  { path = "vendor", read-only = true }\n'
        ']\n\n[diagnostics]\nshadowed = "off"\n'
    )
    assert with_folder(block, "shared/bugfix") == block.replace(
        "read-only = true }\n", 'read-only = true },\n  "shared/bugfix",\n'
    )
    commented = 'additional-folders = [\n    "a",  # first\n    "b"  # second\n]\n'
    assert with_folder(commented, "c") == (
        'additional-folders = [\n    "a",  # first\n    "b",  # second\n    "c",\n]\n'
    )
    assert with_folder('additional-folders = [\n  "a", "b"]\n', "c") == (
        'additional-folders = [\n  "a", "b", "c"]\n'
    )
    assert with_folder('[diagnostics]\nshadowed = "off"\n', "x") == (
        'additional-folders = ["x"]\n\n[diagnostics]\nshadowed = "off"\n'
    )


def test_without_prefix() -> None:
    assert without_prefix("BUGFIX_login_crash", "BUGFIX") == "login_crash"
    assert without_prefix("BUGFIX_", "BUGFIX") is None
    assert without_prefix("other", "BUGFIX") is None


def test_workspace_diagnostics_follow_the_headings_of_the_note(ws: Workspace) -> None:
    note = ws.write(ws.primary / "ledger.md", "# Ledger\n")
    linker = ws.write(ws.primary / "linker.md", "[[ledger#Closing]]\n")
    other = ws.write(ws.primary / "other.md", "[[ledger]]\n")
    store = ws.store()
    index = MemoryIndex(store.config)
    index.scan()
    disk = DiskDiagnostics(index, _codes)
    disk.check_all()
    assert disk.report(str(linker))[1] == ("broken-link",)
    other_id, _ = disk.report(str(other))
    # The heading is written into the note: the link to it is checked again, and mended.
    note.write_text("# Ledger\n\n## Closing\n")
    update = index.update_paths([str(note)])
    assert disk.update([str(note)], update) == {str(linker)}
    assert disk.report(str(linker)) == (disk.clean_id, None)
    assert disk.report(str(other))[0] == other_id


def _codes(path: str, found: list[Diagnostic], text: str | None) -> tuple[str, ...]:
    return tuple(sorted(d.code for d in found))
