"""Serena's text semantics (edit_memory's replace, rename_memory's rewrite) as pure functions.

Every `SERENA:` value below was produced once by running Serena 2.1.0's own
`ContentReplacer(mode, allow_multiple_occurrences).replace(...)` or
`MemoryManager.rename_references_to_memory(...)` on the same input; the tests do not import
Serena. An `ERROR` expectation names the error Serena raised (ValueError or re.error).
"""

from __future__ import annotations

import re
import time
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_ls.core.rules import replace
from memory_ls.core.rules.errors import AmbiguousMatch, InvalidArguments, MemoryStoreError, NoMatch
from memory_ls.core.rules.replace import replace_text, rewrite_mem_references

# (content, needle, repl, mode, allow_multiple, what Serena 2.1.0 gives)
SERENA_CASES = {
    "greedy-dot-star-across-lines": (
        "<a>one</a>\n<a>two</a>\n",
        r"<a>.*</a>",
        "X",
        "regex",
        False,
        AmbiguousMatch,  # SERENA: ValueError "Match is ambiguous ..."
    ),
    "greedy-refused-even-with-allow-multiple": (
        "<a>one</a>\n<a>two</a>\n",
        r"<a>.*</a>",
        "X",
        "regex",
        True,
        AmbiguousMatch,  # SERENA: ValueError "Match is ambiguous ..."
    ),
    "lazy-match-that-starts-too-early": (
        "start A\nstart B\nend\n",
        r"start.*?end",
        "X",
        "regex",
        False,
        AmbiguousMatch,  # SERENA: ValueError "Match is ambiguous ..."
    ),
    "lazy-on-one-line-is-fine": (
        "<a>one</a> <a>two</a>\n",
        r"<a>.*?</a>",
        "X",
        "regex",
        True,
        "X X\n",  # SERENA
    ),
    "backreference": (
        "name: alice\n",
        r"name: (\w+)",
        "user: $!1",
        "regex",
        False,
        "user: alice\n",
    ),
    "group-that-did-not-take-part-is-empty": (
        "ab\n",
        r"(a)|(b)",
        "[$!1|$!2]",
        "regex",
        True,
        "[a|][|b]\n",  # SERENA
    ),
    "group-that-does-not-exist": (
        "ab\n",
        r"(a)",
        "$!3",
        "regex",
        False,
        InvalidArguments,  # SERENA: ValueError "Backreference $!3 refers to a group that ..."
    ),
    "whole-match": ("ab\n", "a", "<$!0>", "regex", False, "<a>b\n"),
    "backslashes-are-verbatim": ("ab\n", r"(a)", r"\1\n\g<1>", "regex", False, "\\1\\n\\g<1>b\n"),
    "literal-mode-keeps-dollar-bang": ("ab\n", "a", "$!1", "literal", False, "$!1b\n"),
    "literal-with-metacharacters": (
        "cost (a+b)*2 = $x.\n",
        "(a+b)*2 = $x.",
        "[ok]",
        "literal",
        False,
        "cost [ok]\n",  # SERENA
    ),
    "literal-more-metacharacters": ("a&~#-|^b\n", "&~#-|^", "", "literal", False, "ab\n"),
    "multi-line-literal": (
        "one\ntwo\nthree\n",
        "one\ntwo\n",
        "1\n2\n",
        "literal",
        False,
        "1\n2\nthree\n",
    ),
    "no-match": ("abc\n", "zzz", "y", "literal", False, NoMatch),
    "two-matches": ("aXa\n", "a", "b", "literal", False, AmbiguousMatch),
    "two-matches-allowed": ("aXa\n", "a", "b", "literal", True, "bXb\n"),
    "multiline-dollar": ("x = 1\ny = 2\n", r"= \d$", "= 0", "regex", True, "x = 0\ny = 0\n"),
    "dotall": ("a\nb\n", r"a.b", "ab", "regex", False, "ab\n"),
    "frontmatter-is-searched": (
        "---\ntags: [a]\n---\nbody a\n",
        "tags: [a]",
        "tags: [b]",
        "literal",
        False,
        "---\ntags: [b]\n---\nbody a\n",  # SERENA
    ),
    # The `regex` module reads these differently from `re`; Serena's answers are kept.
    "posix-class-is-not-one": ("b:a]\n", r"[[:alpha:]]", "X", "regex", True, "b:X\n"),
    "fuzzy-braces-are-literal": ("a{e<=1}\n", r"a{e<=1}", "X", "regex", False, "X\n"),
    "superscript-is-a-word-character": ("x² y\n", r"\w+", "W", "regex", True, "W W\n"),
    "combining-mark-is-not": ("cafe\u0301 ok\n", r"\w+", "W", "regex", True, "W\u0301 W\n"),
    "boundary-before-a-combining-mark": (
        "cafe\u0301\n",
        r"\bcafe\b",
        "X",
        "regex",
        False,
        "X\u0301\n",
    ),
    "empty-matches": ("abc", r"x*", "-", "regex", True, "-a-b-c-"),
    "invalid-regex": ("abc", r"(a", "-", "regex", False, InvalidArguments),  # SERENA: re.error
    "variable-look-behind": ("ab", r"(?<=a+)b", "-", "regex", False, InvalidArguments),
    "unknown-escape": ("ab", r"\p{L}", "-", "regex", False, InvalidArguments),  # re.error
}


@pytest.mark.parametrize("case", SERENA_CASES)
def test_replace_gives_what_serena_gives(case: str) -> None:
    content, needle, repl, mode, allow_multiple, expected = SERENA_CASES[case]
    if isinstance(expected, str):
        new, count = replace_text(content, needle, repl, mode, allow_multiple, "notes")
        assert new == expected
        assert count >= 1
    else:
        with pytest.raises(expected) as caught:
            replace_text(content, needle, repl, mode, allow_multiple, "notes")
        assert caught.type is expected
        if expected is not InvalidArguments or "group" in case:
            assert "'notes'" in caught.value.message


def test_a_needle_can_be_checked_before_any_memory_is_read() -> None:
    with pytest.raises(InvalidArguments, match="not a valid regular expression"):
        replace.compile_needle("(a", "regex")
    assert replace.compile_needle("(a", "literal").search("x(a") is not None


def test_count_is_the_number_of_replacements() -> None:
    assert replace_text("a a a", "a", "b", "literal", True, "m") == ("b b b", 3)


def test_crlf_text_is_matched_as_serena_reads_it_and_stays_crlf() -> None:
    content = "---\r\ntitle: x\r\n---\r\none\r\ntwo\r\nthree\r\n"
    # Serena reads with universal newlines: `\n` in the needle and `$` see a CRLF break.
    # SERENA (on the LF text): "---\ntitle: x\n---\n1\n2\nthree\n"
    new, count = replace_text(content, "one\ntwo\n", "1\n2\n", "literal", False, "m")
    assert (new, count) == ("---\r\ntitle: x\r\n---\r\n1\r\n2\r\nthree\r\n", 1)
    new, _ = replace_text(content, r"^two$", "2", "regex", False, "m")
    assert new == "---\r\ntitle: x\r\n---\r\none\r\n2\r\nthree\r\n"
    # A replacement already written with CRLF is not doubled.
    new, _ = replace_text(content, "two", "2a\r\n2b", "literal", False, "m")
    assert new == "---\r\ntitle: x\r\n---\r\none\r\n2a\r\n2b\r\nthree\r\n"


def test_mixed_line_breaks_keep_every_byte_outside_the_match() -> None:
    content = "a\r\nb\nc\rd\r\n"
    new, _ = replace_text(content, "b\nc\nd", "B", "literal", False, "m")
    assert new == "a\r\nB\r\n"  # SERENA (universal newlines): "a\nB\n"
    new, _ = replace_text(content, "a", "x\ny", "literal", False, "m")
    assert new == "x\ny\r\nb\nc\rd\r\n", "not all CRLF: the replacement is verbatim"


def test_a_bom_is_text_like_any_other() -> None:
    # Serena reads with encoding utf-8 (not utf-8-sig): the BOM is a character of the text.
    assert replace_text("\ufeffhi\n", "hi", "ho", "literal", False, "m") == ("\ufeffho\n", 1)


def test_catastrophic_backtracking_is_refused_within_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(replace, "REGEX_TIMEOUT_SECONDS", 0.2)
    started = time.monotonic()
    with pytest.raises(InvalidArguments, match="backtracks"):
        replace_text("a" * 40 + "b", r"(a|aa)+$", "x", "regex", False, "m")
    assert time.monotonic() - started < 2


def test_the_limit_covers_the_ambiguity_check(monkeypatch: pytest.MonkeyPatch) -> None:
    # The second search (inside the match) backtracks too, and is bounded as well.
    monkeypatch.setattr(replace, "REGEX_TIMEOUT_SECONDS", 0.2)
    text = "a\n" + "a" * 30 + "b"
    with pytest.raises(InvalidArguments, match="backtracks"):
        replace_text(text, r"a\n(?:a|aa)+b|(?:a|aa)+c", "x", "regex", False, "m")


# ----- the same answers as `re` on generated patterns ---------------------------------

_TOKENS = st.sampled_from(
    [
        "a",
        "b",
        "é",
        "\u0301",
        "²",
        "_",
        " ",
        ".",
        r"\w",
        r"\W",
        r"\d",
        r"\D",
        r"\s",
        r"\S",
        r"\b",
        r"\B",
        "[ab]",
        r"[\w]",
        r"[^\d]",
        "[[:alpha:]]",
        "[:a]",
        "x{2}",
        "{e<=1}",
        "{",
        "*",
        "+?",
        "?",
        "^",
        "$",
        "(a|b)",
        "(?i:b)",
        r"\n",
        "|",
        "(?=a)",
        "[]a]",
        r"\N{BULLET}",
        "(?#[)",
        "\x1c",
        "[\x1c]",
    ]
)
_TEXT = st.text(alphabet="ab é\u0301²_\n\x1c•[]:{}AB1٣", max_size=12)


def _serena(content: str, pattern: str, repl: str) -> tuple[str, int] | type[Exception]:
    """Serena's ContentReplacer.replace (regex mode, multiple allowed), on `re`."""
    flags = re.MULTILINE | re.DOTALL

    def replace_one(match: re.Match[str]) -> str:
        if "\n" in match.group(0) and re.search(pattern, match.group(0)[1:], flags=flags):
            raise AmbiguousMatch("ambiguous")
        return re.sub(r"\$!(\d+)", lambda m: match.group(int(m.group(1))) or "", repl)

    try:
        result = re.subn(pattern, replace_one, content, flags=flags)
    except AmbiguousMatch:
        return AmbiguousMatch
    return NoMatch if result[1] == 0 else result


@settings(max_examples=400, deadline=None)
@given(tokens=st.lists(_TOKENS, min_size=1, max_size=5), content=_TEXT)
def test_generated_patterns_match_what_re_matches(tokens: list[str], content: str) -> None:
    pattern = "".join(tokens)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            re.compile(pattern, re.MULTILINE | re.DOTALL)
        except re.error:
            with pytest.raises(InvalidArguments):
                replace_text(content, pattern, "<$!0>", "regex", True, "m")
            return
        expected = _serena(content, pattern, "<$!0>")
    try:
        got: tuple[str, int] | type[Exception] = replace_text(
            content, pattern, "<$!0>", "regex", True, "m"
        )
    except MemoryStoreError as exc:
        got = type(exc)
    assert got == expected, pattern


# ----- reference rewriting ------------------------------------------------------------


def test_reference_boundaries_are_serenas() -> None:
    text = (
        "see `mem:foo`, mem:foobar, mem:foo/bar, mem:foo.md, (mem:foo), x-mem:foo, "
        "mem:foo-x, mem:Foo\n```\nmem:foo\n```\n"
    )
    # SERENA: foo, foo.md, (foo) and the one in fenced code; not the longer names.
    assert rewrite_mem_references(text, "foo", "bar") == (
        "see `mem:bar`, mem:foobar, mem:foo/bar, mem:bar.md, (mem:bar), x-mem:foo, "
        "mem:foo-x, mem:Foo\n```\nmem:bar\n```\n",
        4,
    )


@pytest.mark.parametrize(
    ("text", "old", "new", "expected"),
    [
        (  # SERENA
            "`mem:global/tips` and `mem:tips` and mem:global/tips2\n",
            "global/tips",
            "global/hints",
            ("`mem:global/hints` and `mem:tips` and mem:global/tips2\n", 1),
        ),
        ("`mem:tips`\n", "tips", "global/tips", ("`mem:global/tips`\n", 1)),  # SERENA
        ("`mem:tips`\n", "mem:tips.md", "hints.md", ("`mem:hints`\n", 1)),  # SERENA
        (  # SERENA
            "`mem:auth/login` `mem:auth/login/x` `mem:auth`\n",
            "auth/login",
            "auth/signin",
            ("`mem:auth/signin` `mem:auth/login/x` `mem:auth`\n", 1),
        ),
        ("`mem:a`\n", "a", "b\\1$x", ("`mem:b\\1$x`\n", 1)),  # SERENA: verbatim
        ("---\nsee: mem:a\n---\nx\r\n", "a", "b", ("---\nsee: mem:b\n---\nx\r\n", 1)),
        ("`mem:a`", "a.b", "c", ("`mem:a`", 0)),  # the name is escaped, `.` is not a wildcard
    ],
)
def test_reference_rewrites(text: str, old: str, new: str, expected: tuple[str, int]) -> None:
    assert rewrite_mem_references(text, old, new) == expected
