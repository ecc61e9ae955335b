"""Navigation rules: the reference under the cursor, headings, references, suggestions."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_helpers import Workspace

from memory_ls.core.operations.navigation import (
    headings,
    moved_files,
    name_span,
    outline,
    plan_for_path,
    plan_move_of,
    points_to,
    prefix_suggestions,
    reference_at,
    reference_replacements,
    references_in_files,
)
from memory_ls.core.rules.names import did_you_mean
from memory_ls.core.rules.references import find_references

NAMES = ["suggested_commands", "style_guide", "project_overview", "FEATURE_checkout", "SPEC_api"]


def test_reference_at_covers_brackets_and_backticks_only() -> None:
    text = "see [[abc|label]] and `mem:def` here"
    assert reference_at(text, 0, 4) is not None and reference_at(text, 0, 4).name == "abc"  # type: ignore[union-attr]
    assert reference_at(text, 0, 17).name == "abc"  # type: ignore[union-attr]
    assert reference_at(text, 0, 25).name == "def"  # type: ignore[union-attr]
    assert reference_at(text, 0, 2) is None
    assert reference_at(text, 0, 19) is None
    assert reference_at(text, 1, 4) is None


def test_reference_at_ignores_frontmatter_and_fenced_code() -> None:
    text = "---\nsee: '[[meta]]'\n---\n```\n[[code]]\n```\n[[real]]\n"
    assert reference_at(text, 1, 8) is None
    assert reference_at(text, 4, 3) is None
    found = reference_at(text, 6, 3)
    assert found is not None and (found.name, found.line) == ("real", 6)
    assert reference_at(text, 99, 0) is None


def test_headings_skip_frontmatter_and_code() -> None:
    text = "---\ntitle: '# no'\n---\n# Title\n\n```\n# not a heading\n```\n## Sub ##\n#hashtag\n"
    assert [(h.level, h.title, h.line) for h in headings(text)] == [(1, "Title", 3), (2, "Sub", 8)]


def test_references_in_files_prefilters_and_matches(tmp_path: Path) -> None:
    a = tmp_path / "a.md"
    a.write_text("[[target]] and `mem:target` and [[other]]\n```\n[[target]]\n```\n")
    b = tmp_path / "b.md"
    b.write_text("nothing here\n")
    found = references_in_files([str(a), str(b)], lambda r: r.name == "target", "target")
    assert [(Path(f.path).name, f.reference.line, f.reference.form) for f in found] == [
        ("a.md", 0, "wiki"),
        ("a.md", 0, "mem"),
    ]


def test_did_you_mean_finds_one_letter_typos() -> None:
    assert did_you_mean("style_guid", NAMES)[0] == "style_guide"
    assert did_you_mean("FEATUER_checkout", NAMES)[0] == "FEATURE_checkout"
    assert did_you_mean("FEATURES", ["FEATURE", "SPEC", "FEATURE_BUILDER"])[0] == "FEATURE"
    assert did_you_mean("completely_different", NAMES) == []
    assert did_you_mean("style_guide", ["style_guide"]) == []


def test_name_span_skips_mem_global_and_md() -> None:
    line = "[[ global/abc.md ]] `mem:def` [[mem:ghi|x]]"
    spans = [line[slice(*name_span(line, ref))] for ref in find_references(line)]
    assert spans == ["abc", "def", "ghi"]


def test_outline_nests_sections_until_the_next_heading_of_their_level() -> None:
    text = "# A\ntext\n## A1\n### A1a\n## A2\n# B\nend\n"
    tree = outline(text)
    assert [(s.heading.title, s.end_line) for s in tree] == [("A", 4), ("B", 7)]
    assert [(s.heading.title, s.end_line) for s in tree[0].children] == [("A1", 3), ("A2", 4)]
    assert [(s.heading.title, s.end_line) for s in tree[0].children[0].children] == [("A1a", 3)]
    # A deeper heading first, then a shallower one: siblings, not a lost subtree.
    assert [s.heading.title for s in outline("### deep\n# top\n")] == ["deep", "top"]


def test_points_to_follows_lookup_order(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "same.md", "project")
    ws.write(ws.global_dir / "same.md", "global")
    project, global_ = store.locate_all("same", None)
    refs = find_references("[[same]] [[global/same]] [[other]]")
    assert [points_to(project, project)(r) for r in refs] == [True, False, False]
    # Each reference names its scope: [[same]] never means global/same, nor the reverse.
    assert [points_to(global_, global_)(r) for r in refs] == [False, True, False]
    assert [points_to(global_, project)(r) for r in refs] == [False, False, False]


def test_reference_replacements_leave_out_unchanged_references() -> None:
    text = "x [[a]] and `mem:a.md`\n[[a|label]]\n"
    refs = find_references(text)
    edits = reference_replacements(text, refs, lambda ref: "a")
    assert [(e.line, e.start, e.end, e.text) for e in edits] == [(0, 17, 21, "a")]


def test_plan_move_of_a_hidden_file_plans_for_that_file(ws: Workspace) -> None:
    store = ws.store(["shared/feature"])
    ws.write(ws.primary / "dup.md", "primary")
    hidden = ws.write(ws.root / "shared/feature/dup.md", "hidden")
    source = store.locate_all("dup", None)[1]
    plan = plan_move_of(store, source, "dup_two")
    assert plan.source.path == str(hidden)
    assert not plan.points_here(find_references("[[dup]]")[0])
    with ws.refuses("exists"):
        plan_move_of(store, source, "dup")


def test_plan_for_path_names_the_new_file_by_its_folder(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "old.md", "x")
    source = store.find("old")
    plan = plan_for_path(store, source, str(ws.global_dir / "topic" / "new.md"))
    assert plan is not None and (plan.new_name, plan.new_is_global) == ("topic/new", True)
    assert plan.points_here(find_references("[[old]]")[0])
    assert plan_for_path(store, source, str(ws.root / "notes" / "new.md")) is None
    assert plan_for_path(store, source, str(ws.primary / "bad:name.md")) is None
    assert plan_for_path(store, source, str(ws.primary / "-fine.md")) is not None


def test_moved_files_of_a_file_and_of_a_folder(ws: Workspace) -> None:
    store = ws.store()
    for name in ("auth/login", "auth/deep/x", "authz", "other"):
        ws.write(ws.primary / f"{name}.md", "x")
    files = store.scan()
    folder = str(ws.primary / "auth")
    moved = moved_files(files, folder, str(ws.primary / "security"))
    assert sorted((m.name, new[len(str(ws.primary)) :]) for m, new in moved) == [
        ("auth/deep/x", "/security/deep/x.md"),
        ("auth/login", "/security/login.md"),
    ]
    single = moved_files(files, str(ws.primary / "other.md"), str(ws.primary / "o.md"))
    assert [m.name for m, _new in single] == ["other"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("FEATUER_checkout", "FEATURE_checkout"),
        ("FEATUER_BUILDER_x", "FEATURE_BUILDER_x"),
        ("SPCE_api", "SPEC_api"),
    ],
)
def test_prefix_suggestions_correct_a_one_letter_typo(
    ws: Workspace, name: str, expected: str
) -> None:
    store = ws.store(["shared/feature", "shared/feature_builder", "shared/spec"])
    assert prefix_suggestions(name, store.config.additional)[0] == expected


def test_prefix_suggestions_need_a_close_prefix(ws: Workspace) -> None:
    store = ws.store(["shared/feature"])
    assert prefix_suggestions("BUGFIX_x", store.config.additional) == []
    assert prefix_suggestions("lower_case", store.config.additional) == []
