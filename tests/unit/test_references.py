"""Reference parsing (SPEC 2.7): `[[NAME]]`, `[[NAME|label]]`, `` `mem:NAME` ``."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_ls.core.rules.document import split_frontmatter
from memory_ls.core.rules.references import (
    Reference,
    find_references,
    in_fenced_code,
    iter_lines_outside_code,
    reference_targets,
    references_in_line,
    rewrite_references,
)

TEXT = """---
see: "[[in_frontmatter]]"
---
Intro [[plain]] and [[topic/name|A label]] and `mem:serena_style`.
Global [[global/personal]] and `mem:global/other.md` and [[ spaced ]].
Empty [[]] and [[ |label]] are not references; [single] and `code` are not either.

```python
"[[in_code]]" `mem:in_code`
```
Two on a line: [[one]][[two]]
"""


def test_find_references_forms_positions_and_labels() -> None:
    refs = find_references(TEXT)
    rows = [(r.name, r.is_global, r.form, r.line, r.start, r.end, r.label) for r in refs]
    assert rows == [
        ("plain", False, "wiki", 3, 8, 13, None),
        ("topic/name", False, "wiki", 3, 22, 32, "A label"),
        ("serena_style", False, "mem", 3, 52, 64, None),
        ("personal", True, "wiki", 4, 9, 24, None),
        ("other", True, "mem", 4, 36, 51, None),
        ("spaced", False, "wiki", 4, 60, 66, None),
        ("one", False, "wiki", 10, 17, 20, None),
        ("two", False, "wiki", 10, 24, 27, None),
    ]
    lines = TEXT.split("\n")
    for ref in refs:
        written = lines[ref.line][ref.start : ref.end]
        assert written.removeprefix("global/").removesuffix(".md") == ref.name
        assert lines[ref.line][ref.full_start : ref.full_end].startswith(("[[", "`mem:"))
    assert refs[3].target == "global/personal"


def test_rewrite_keeps_form_label_and_everything_else() -> None:
    text = "[[a]] [[a|keep me]] `mem:a` [[ab]] `mem:abc` [[global/a]]\n```\n[[a]]\n```\n"
    new, count = rewrite_references(text, lambda r: r.name == "a" and not r.is_global, "b_new")
    assert count == 3
    assert new == (
        "[[b_new]] [[b_new|keep me]] `mem:b_new` [[ab]] `mem:abc` [[global/a]]\n```\n[[a]]\n```\n"
    )


def test_which_lines_are_fenced_code() -> None:
    lines = [
        "text",  # 0
        "```python",  # 1: a fence is code too
        "[[x]]",  # 2
        "~~~",  # 3: not the fence that opened the block
        "````",  # 4: a longer fence of the same kind closes it
        "after",  # 5
        "   ~~~~",  # 6: up to three spaces of indent
        "inside",  # 7 (never closed: code to the end)
    ]
    fenced = [number for number in range(len(lines)) if in_fenced_code(lines, number)]
    assert fenced == [1, 2, 3, 4, 6, 7]


# Pieces that make references, code, fences, frontmatter and lines of every kind.
_PIECES = st.sampled_from(
    [
        "[[",
        "]]",
        "|",
        "#",
        "`",
        "``",
        "mem:",
        "a",
        "B_c",
        " ",
        "\n",
        "global/",
        ".md",
        "```\n",
        "~~~\n",
        "---\n",
        "x/y",
        "\r\n",
        "  ",
        "tags: [a]\n",
    ]
)


def test_reference_targets_of_the_sample_are_those_of_the_references() -> None:
    """The targets alone, found without making the references, are the same in order."""
    assert reference_targets(TEXT) == [ref.target for ref in find_references(TEXT)]
    assert reference_targets(TEXT) == [
        "plain",
        "topic/name",
        "serena_style",
        "global/personal",
        "global/other",
        "spaced",
        "one",
        "two",
    ]


@settings(max_examples=3000, deadline=None)
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_reference_targets_agree_with_find_references(text: str) -> None:
    """Whatever the text: fenced or not, inline code, frontmatter, `#` and labels."""
    assert reference_targets(text) == [ref.target for ref in find_references(text)]


def _line_by_line(text: str) -> list[Reference]:
    """`find_references` as every line of the body looked at in turn (no shortcut)."""
    raw, body, body_line = split_frontmatter(text)
    if raw is None:
        body, body_line = text, 0
    return [
        ref
        for number, line in iter_lines_outside_code(body, body_line)
        if "[[" in line or "mem:" in line
        for ref in references_in_line(line, number)
    ]


@settings(max_examples=3000, deadline=None)
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_find_references_finds_what_each_line_holds(text: str) -> None:
    """The lines holding a reference found by searching the text: the same references,
    on the same line numbers, as looking at every line."""
    assert find_references(text) == _line_by_line(text)
