"""Store diagnostics (SPEC 3.2): each code on the right file, line and column, with severities."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_helpers import Workspace

from memory_ls.config import DIAGNOSTIC_CODES
from memory_ls.core import Diagnostic, Store, check_store
from memory_ls.core.rules.references import find_references
from memory_ls.core.services.diagnostics import ReferenceMemo
from memory_ls.core.services.diagnostics.memory_checks import _UnknownPrefixes
from memory_ls.core.storage.folders import Folder
from memory_ls.core.storage.routing import unknown_prefix

SPEC_CODES = (
    "unknown-prefix",
    "misrouted",
    "broken-link",
    "shadowed",
    "invalid-frontmatter",
    "invalid-name",
    "too-large",
)

NOTES = """# Notes
See [[nowhere]] and `mem:FEATURE_login` and [[global/personal]].
Then [[BUGFIX_other|a fix]] here.
```
[[inside_code]] is not a link
```
[[global/missing]] and [[dup]] and [[clean]]
"""


def _row(ws: Workspace, d: Diagnostic) -> tuple[str, str, int, int]:
    return (d.code, str(Path(d.path).relative_to(ws.tmp)), d.line, d.col)


def _spec_codes(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Only the SPEC 3.2 codes (the core may add more of its own)."""
    return [d for d in diagnostics if d.code in SPEC_CODES]


def _world(ws: Workspace, **settings: object) -> Store:
    store = ws.store(["team/feature", "docs/spec"], max_memory_bytes=300, **settings)
    p = ws.primary
    ws.write(p / "BUGFIX_crash.md", "# Crash\n")
    ws.write(p / "FEATURE_login.md", "# Login\n")
    ws.write(p / "notes.md", NOTES)
    ws.write(p / "dup.md", "first\n")
    ws.write(ws.root / "docs" / "spec" / "dup.md", "second\n")
    ws.write(p / "badtags.md", "---\ntitle: t\ntags: auth\n---\nbody\n")
    ws.write(p / "bad:colon.md", "invalid name\n")
    ws.write(p / "big.md", "x" * 400 + "\n")
    ws.write(p / "clean.md", "links to [[notes]] and `mem:dup`\n")
    ws.write(p / "README.md", "all caps, no prefix\n")
    ws.write(ws.root / "team" / "feature" / "FEATURE_ok.md", "# ok\n")
    ws.write(ws.global_dir / "personal.md", "mine\n")
    ws.write(ws.global_dir / "BUGFIX_global.md", "global memories are not routed\n")
    # `dup` in the global folder is another memory (global/dup), neither shadowed nor shadowing.
    ws.write(ws.global_dir / "dup.md", "global dup\n")
    ws.write(p / "scoped.md", "[[personal]] is global/personal, not a project memory\n")
    return store


EXPECTED = {
    ("unknown-prefix", "ws/.serena/memories/BUGFIX_crash.md", 0, 0),
    ("misrouted", "ws/.serena/memories/FEATURE_login.md", 0, 0),
    ("broken-link", "ws/.serena/memories/notes.md", 1, 6),
    ("broken-link", "ws/.serena/memories/notes.md", 2, 7),
    ("unknown-prefix", "ws/.serena/memories/notes.md", 2, 7),
    ("broken-link", "ws/.serena/memories/notes.md", 6, 2),
    ("shadowed", "ws/docs/spec/dup.md", 0, 0),
    ("invalid-frontmatter", "ws/.serena/memories/badtags.md", 2, 0),
    ("invalid-name", "ws/.serena/memories/bad:colon.md", 0, 0),
    # A bare name is a project memory: a global one of that name does not answer it.
    ("broken-link", "ws/.serena/memories/scoped.md", 0, 2),
    ("too-large", "ws/.serena/memories/big.md", 0, 0),
}


def test_each_code_on_the_right_file_and_line(ws: Workspace) -> None:
    store = _world(ws)
    found = _spec_codes(check_store(store))
    rows = [_row(ws, d) for d in found]
    assert len(rows) == len(set(rows)), "no diagnostic is reported twice"
    assert set(rows) == EXPECTED
    assert {d.code for d in found} == set(SPEC_CODES), "every code is exercised"
    assert set(SPEC_CODES) <= set(DIAGNOSTIC_CODES), "each code has a configurable severity"


def test_default_severities_and_messages(ws: Workspace) -> None:
    found = _spec_codes(check_store(_world(ws)))
    severities = {d.code: d.severity for d in found}
    assert severities == {
        "unknown-prefix": "warning",
        "misrouted": "warning",
        "broken-link": "warning",
        "shadowed": "information",
        "invalid-frontmatter": "error",
        "invalid-name": "error",
        "too-large": "warning",
    }
    messages = {d.code: d.message for d in found if d.path.endswith("BUGFIX_crash.md")}
    assert "BUGFIX" in messages["unknown-prefix"]
    assert "feature, spec" in messages["unknown-prefix"]
    misrouted = next(d for d in found if d.code == "misrouted")
    assert "feature" in misrouted.message
    shadowed = next(d for d in found if d.code == "shadowed")
    assert str(ws.primary / "dup.md") in shadowed.message
    link = next(d for d in found if d.code == "broken-link" and d.line == 1)
    assert "nowhere" in link.message
    assert (link.end_line, link.end_col) == (1, 6 + len("nowhere"))


def test_configured_severities_apply_and_off_drops(ws: Workspace) -> None:
    store = _world(
        ws,
        diagnostics={"broken-link": "error", "shadowed": "off", "too-large": "hint"},
    )
    found = _spec_codes(check_store(store))
    codes = {d.code for d in found}
    assert "shadowed" not in codes
    assert {d.severity for d in found if d.code == "broken-link"} == {"error"}
    assert {d.severity for d in found if d.code == "too-large"} == {"hint"}
    assert {d.severity for d in found if d.code == "misrouted"} == {"warning"}
    all_off = _world(ws, diagnostics=dict.fromkeys(DIAGNOSTIC_CODES, "off"))
    assert _spec_codes(check_store(all_off)) == []


def test_check_of_given_paths_only(ws: Workspace) -> None:
    store = _world(ws)
    notes = ws.primary / "notes.md"
    rows = {_row(ws, d) for d in _spec_codes(check_store(store, [str(notes)]))}
    assert rows == {r for r in EXPECTED if r[1].endswith("notes.md")}


def test_no_prefix_route_is_never_misrouted(ws: Workspace) -> None:
    store = ws.store(["team/feature"])
    ws.write(ws.primary / "regular_name.md", "x\n")
    ws.write(ws.primary / "Feature_mixed.md", "x\n")
    ws.write(ws.root / "team" / "feature" / "plain_in_feature.md", "x\n")
    ws.write(ws.root / "team" / "feature" / "FEATURE_home.md", "x\n")
    assert _spec_codes(check_store(store)) == []


def test_without_additional_folders_prefixes_are_not_in_use(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "BUGFIX_crash.md", "[[SPEC_thing]]\n")
    ws.write(ws.primary / "SPEC_thing.md", "x\n")
    assert _spec_codes(check_store(store)) == []


def test_misrouted_is_not_reported_for_a_read_only_target(ws: Workspace) -> None:
    # Moving into a read-only folder is impossible, so there is nothing to act on.
    store = ws.store([("vendor/spec", True)])
    ws.write(ws.primary / "SPEC_here.md", "x\n")
    assert [d.code for d in _spec_codes(check_store(store))] == []


@pytest.mark.parametrize(
    ("text", "line", "col"),
    [
        ("[[missing]]\n", 0, 2),
        ("intro\n  text [[ missing |label]]\n", 1, 10),
        ("---\ntags: [a]\n---\nbody `mem:missing`\n", 3, 10),
    ],
)
def test_broken_link_positions(ws: Workspace, text: str, line: int, col: int) -> None:
    store = ws.store()
    path = ws.write(ws.primary / "links.md", text)
    found = _spec_codes(check_store(store))
    assert [(d.code, d.path, d.line, d.col) for d in found] == [
        ("broken-link", str(path), line, col)
    ]


@settings(max_examples=300, deadline=None)
@given(
    name=st.lists(
        st.sampled_from(["FEATURE", "SPEC", "A", "x", "_", "/", "BUGFIX", "b"]), max_size=5
    ).map("".join),
    labels=st.lists(st.sampled_from(["feature", "Spec", "bugfix", "a", "x_y"]), max_size=3),
)
def test_unknown_prefixes_of_many_names_agree_with_routing(name: str, labels: list[str]) -> None:
    additional = [Folder(f"/ws/{label}", f"/ws/{label}", "additional") for label in labels]
    assert _UnknownPrefixes(additional)(name) == unknown_prefix(name, additional)


_LINES = st.sampled_from(
    ["[[a]] and [[b|label]]", "`mem:c` here", "plain", "", "```", "~~~", "---", "x [[d]]"]
)


@settings(max_examples=300, deadline=None)
@given(versions=st.lists(st.lists(_LINES, max_size=8).map("\n".join), min_size=1, max_size=6))
def test_an_open_documents_references_are_reread_line_by_line(versions: list[str]) -> None:
    memo = ReferenceMemo()
    for text in versions:
        assert memo.find(text) == find_references(text)
