"""The syntax of other agents' files: Claude Code's imports, index links, globs and cuts."""

from __future__ import annotations

import pytest

from memory_ls.core.rules.agent_syntax import (
    estimate_tokens,
    fact_lines,
    find_imports,
    glob_regex,
    index_links,
    lenient_frontmatter,
    line_count,
    load_cut,
    looks_like_path,
    split_globs,
)


def test_imports_are_found_outside_code_and_not_in_addresses() -> None:
    text = (
        "See @README and @docs/setup.md.\n"
        "Mail me@example.com, not an import.\n"
        "`@inline/code.md` is an example\n"
        "```\n@in/a/block.md\n```\n"
        "- @~/.claude/mine.md\n"
    )
    found = [(s.line, s.written) for s in find_imports(text)]
    assert found == [(0, "README"), (0, "docs/setup.md"), (6, "~/.claude/mine.md")]
    first = find_imports(text)[1]
    assert text.split("\n")[0][first.start : first.end] == "docs/setup.md"


def test_a_bare_word_is_a_mention_and_a_path_is_a_path() -> None:
    assert not looks_like_path("alice")
    assert looks_like_path("docs/a.md")
    assert looks_like_path("README.md")
    assert looks_like_path("~/notes")


def test_index_links_are_local_files_without_fragments() -> None:
    text = (
        "- [Build](build.md#steps): how to build\n"
        "- [Site](https://example.com/x.md) and [top](#top)\n"
        "- ![img](pic.png)\n"
        "`[code](not.md)`\n"
        "- [Deploy](<deploy notes.md>)\n"
    )
    assert [(s.line, s.written) for s in index_links(text)] == [(0, "build.md")]


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("src/**/*.ts", "src/a/b/c.ts", True),
        ("src/**/*.ts", "src/c.ts", True),
        ("src/*.ts", "src/a/c.ts", False),
        ("**/*.{ts,tsx}", "web/app.tsx", True),
        ("**/*.{ts,tsx}", "app.ts", True),
        ("*.py", "pkg/a.py", False),
        ("/docs/*.md", "docs/a.md", True),
        ("./docs/?.md", "docs/a.md", True),
        ("docs/[ab].md", "docs/c.md", False),
        ("docs/**", "docs/x/y", True),
        ("tests/", "tests/a.py", False),
    ],
)
def test_globs_read_as_the_agents_read_them(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_regex(pattern).match(path)) is matches


def test_load_cut_by_lines_and_by_bytes() -> None:
    assert load_cut("a\n" * 200, 200, 25_000) is None
    cut = load_cut("a\n" * 230, 200, 25_000)
    assert cut is not None and (cut.line, cut.by, cut.total_lines) == (200, "lines", 230)
    long = ("x" * 999 + "\n") * 30  # 30,000 bytes in 30 lines
    cut = load_cut(long, 200, 25_000)
    assert cut is not None and cut.by == "bytes" and cut.line == 25 and cut.col == 0
    assert cut.loaded_lines == 25
    assert line_count("a\nb") == 2 and line_count("a\nb\n") == 2 and line_count("") == 0


def test_cursor_frontmatter_is_read_as_written() -> None:
    text = (
        "---\ndescription: API rules\nglobs: *.ts,src/**/*.{js,jsx}\nalwaysApply: false\n---\nbody"
    )
    front = lenient_frontmatter(text)
    assert front is not None
    values, body_line = front
    assert body_line == 5
    assert split_globs(values["globs"]) == ["*.ts", "src/**/*.{js,jsx}"]
    assert values["alwaysApply"] == "false"
    assert lenient_frontmatter("no block") is None
    assert split_globs(["a/*", "b/**"]) == ["a/*", "b/**"]
    assert split_globs('"**/*.py, docs/**"') == ["**/*.py", "docs/**"]


def test_tokens_are_estimated_one_per_four_characters() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2


def test_facts_are_list_items_and_prose_lines_normalised() -> None:
    text = (
        "---\ndescription: a frontmatter line that is long enough to count\n---\n"
        "# A heading with many words in it here\n"
        "- [ ] **Run** the `tests` before every single commit.\n"
        "1. Run the tests before every single commit\n"
        "Too short to count.\n"
        "```\ncode lines are not facts even when long enough\n```\n"
    )
    assert fact_lines(text) == [
        (4, "run the tests before every single commit"),
        (5, "run the tests before every single commit"),
    ]
