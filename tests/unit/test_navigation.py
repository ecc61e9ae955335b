"""Navigation rules: the reference under the cursor, headings, references, suggestions."""

from __future__ import annotations

from pathlib import Path

from memory_ls.core.navigation import (
    did_you_mean,
    fuzzy_names,
    headings,
    reference_at,
    references_in_files,
)

NAMES = ["suggested_commands", "style_guide", "project_overview", "FEATURE_checkout", "SPEC_api"]


def test_reference_at_covers_brackets_and_backticks_only() -> None:
    text = "see [[abc|label]] and `mem:def` here"
    assert reference_at(text, 0, 4) is not None and reference_at(text, 0, 4).name == "abc"  # type: ignore[union-attr]
    assert reference_at(text, 0, 17).name == "abc"  # type: ignore[union-attr]
    assert reference_at(text, 0, 25).name == "def"  # type: ignore[union-attr]
    assert reference_at(text, 0, 2) is None
    assert reference_at(text, 0, 19) is None
    assert reference_at(text, 1, 4) is None


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


def test_fuzzy_names_match_subsequences_tightest_first() -> None:
    assert fuzzy_names("sugcom", NAMES)[0] == "suggested_commands"
    assert fuzzy_names("stgu", NAMES)[0] == "style_guide"
    assert fuzzy_names("zzz", NAMES) == []
    assert fuzzy_names("", NAMES, limit=2) == NAMES[:2]
