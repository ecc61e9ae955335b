"""Frontmatter and timestamps (SPEC 2.5) through every kind of write."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from store_helpers import Workspace

from memory_ls.core import check_store
from memory_ls.core.rules.document import (
    parse_document,
    quick_load,
    render,
    update_document,
    with_keys,
)
from memory_ls.core.rules.replace import rewrite_mem_references

STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
OLD = "2020-01-02T03:04:05Z"

AUTHORED = f"""---
title: Login flow
owner: alice
tags: [auth, api]
created_at: {OLD}
updated_at: {OLD}
related:
  - one
  - two
nested: {{key: value, list: [1, 2]}}
---
# Login

The body.
"""


def _frontmatter(path: Path) -> dict[str, object]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    block = text.split("---\n", 2)[1]
    data = yaml.safe_load(block)
    assert isinstance(data, dict)
    return data


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


def _assert_current(value: object, before: dt.datetime) -> None:
    assert isinstance(value, dt.datetime), value
    assert before <= value <= _now()


def test_plain_memories_stay_plain(ws: Workspace) -> None:
    store = ws.store()
    path = ws.primary / "plain.md"
    store.save("plain", "# Plain\n\ntext\n")
    assert path.read_bytes() == b"# Plain\n\ntext\n"
    store.save("plain", "# Plain\n\nnew text\n")
    assert path.read_bytes() == b"# Plain\n\nnew text\n"
    store.edit("plain", needle="new", replacement="newer")
    assert path.read_bytes() == b"# Plain\n\nnewer text\n"
    store.edit("plain", content="replaced\n")
    assert path.read_bytes() == b"replaced\n"
    read = store.read("plain")
    assert (read["tags"], read["createdAt"], read["updatedAt"]) == ([], None, None)


def test_tags_make_frontmatter_with_timestamps(ws: Workspace) -> None:
    store = ws.store()
    before = _now()
    store.save("tagged", "body\n", tags=["auth", "api", "auth"])
    path = ws.primary / "tagged.md"
    data = _frontmatter(path)
    assert data["tags"] == ["auth", "api"]
    _assert_current(data["created_at"], before)
    assert data["updated_at"] == data["created_at"]
    assert path.read_text().endswith("---\nbody\n")
    read = store.read("tagged")
    assert read["content"] == "body\n"
    assert read["tags"] == ["auth", "api"]
    assert STAMP.match(read["createdAt"]) and read["createdAt"] == read["updatedAt"]


def test_timestamps_are_iso_utc_without_anchors(ws: Workspace) -> None:
    store = ws.store()
    store.save("t", "body", tags=["a"])
    text = (ws.primary / "t.md").read_text()
    lines = text.split("\n")
    created = next(line for line in lines if line.startswith("created_at:"))
    updated = next(line for line in lines if line.startswith("updated_at:"))
    # The same instant in both keys must not become a YAML anchor and alias.
    assert "&" not in text and "*" not in text
    for line in (created, updated):
        value = line.split(": ", 1)[1]
        assert STAMP.match(value), line


@pytest.mark.parametrize(
    "operation", ["save", "save-with-tags", "edit-content", "edit-needle", "move"]
)
def test_other_keys_are_preserved_on_every_write(ws: Workspace, operation: str) -> None:
    store = ws.store(["team/feature"])
    path = ws.write(ws.primary / "login.md", AUTHORED)
    before = _now()
    if operation == "save":
        store.save("login", "# Login\n\nSaved.\n")
    elif operation == "save-with-tags":
        store.save("login", "# Login\n\nSaved.\n", tags=["web"])
    elif operation == "edit-content":
        store.edit("login", content="# Login\n\nEdited.\n")
    elif operation == "edit-needle":
        store.edit("login", needle="The body.", replacement="Edited.")
    else:
        result = store.move("login", "FEATURE_login")
        path = Path(result["path"])
        assert path == ws.root / "team" / "feature" / "FEATURE_login.md"

    data = _frontmatter(path)
    assert data["title"] == "Login flow"
    assert data["owner"] == "alice"
    assert data["related"] == ["one", "two"]
    assert data["nested"] == {"key": "value", "list": [1, 2]}
    assert data["tags"] == (["web"] if operation == "save-with-tags" else ["auth", "api"])
    assert data["created_at"] == dt.datetime(2020, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    if operation == "move":
        assert path.read_text() == AUTHORED, "a move keeps the file as it was"
    else:
        _assert_current(data["updated_at"], before)
        # The author's key order is kept.
        assert list(data)[:3] == ["title", "owner", "tags"]
        assert "&" not in path.read_text()


def test_save_merges_frontmatter_given_in_the_content(ws: Workspace) -> None:
    store = ws.store()
    store.save("m", "---\nauthor: bob\ntags: [x]\n---\nbody\n")
    path = ws.primary / "m.md"
    data = _frontmatter(path)
    assert data["author"] == "bob"
    assert data["tags"] == ["x"]
    assert path.read_text().count("---\n") == 2, "no frontmatter inside the body"
    assert store.read("m")["content"] == "body\n"


BROKEN = "---\ntitle: [unclosed\nowner: : :\n---\nstill readable\n"


def test_broken_frontmatter_is_readable_and_kept_byte_for_byte(ws: Workspace) -> None:
    store = ws.store()
    path = ws.write(ws.primary / "broken.md", BROKEN)
    read = store.read("broken")
    assert read["content"] == "still readable\n"
    assert read["tags"] == []
    assert [m["name"] for m in store.list_memories()["memories"]] == ["broken"]

    store.edit("broken", needle="still", replacement="now")
    assert path.read_bytes() == BROKEN.replace("still", "now").encode()
    store.edit("broken", content="replaced\n")
    assert path.read_bytes() == b"---\ntitle: [unclosed\nowner: : :\n---\nreplaced\n"
    store.save("broken", "saved\n")
    assert path.read_bytes() == b"---\ntitle: [unclosed\nowner: : :\n---\nsaved\n"

    found = [d for d in check_store(store) if d.code == "invalid-frontmatter"]
    assert [(d.path, d.severity) for d in found] == [(str(path), "error")]


def test_keys_are_not_dropped_into_frontmatter_that_does_not_parse(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "broken.md", BROKEN)
    # Tags and keys cannot go into a block that does not parse, and replacing the block
    # would lose it: refused, with the reason, rather than silently dropped.
    with ws.refuses("invalid-arguments") as refused:
        store.save("broken", "saved\n", tags=["auth"])
    assert str(refused.value).startswith("tags cannot be set: the memory's frontmatter")
    assert "(line 3: Frontmatter is not valid YAML" in str(refused.value)
    with ws.refuses("invalid-arguments") as refused:
        store.import_records(
            [
                {"name": "first", "content": "would be imported first\n"},
                {"name": "broken", "content": "x\n", "tags": ["auth"]},
            ],
            overwrite=True,
        )
    assert "record 2" in str(refused.value)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("---\ntitle: x\ntags: auth\n---\nbody\n", 2),
        ("---\ntags: [auth, 3]\n---\nbody\n", 1),
        ("---\ntags:\n  key: value\n---\nbody\n", 1),
        ("---\ncreated_at: [1]\n---\nbody\n", 1),
        ("---\n- just\n- a list\n---\nbody\n", 1),
    ],
)
def test_wrong_types_are_invalid_frontmatter(ws: Workspace, text: str, line: int) -> None:
    store = ws.store()
    path = ws.write(ws.primary / "typed.md", text)
    read = store.read("typed")
    assert read["content"] == "body\n"
    assert read["tags"] == []
    found = [d for d in check_store(store) if d.code == "invalid-frontmatter"]
    assert [(d.path, d.line) for d in found] == [(str(path), line)]
    assert found[0].message


def test_a_horizontal_rule_is_not_frontmatter(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "rule.md", "---\nno closing fence\n")
    read = store.read("rule")
    assert read["content"] == "---\nno closing fence\n"
    assert not [d for d in check_store(store) if d.code == "invalid-frontmatter"]


_KEYS = st.sampled_from(["tags", "created_at", "title", "yes", "null", "On", "x-y", "_k", "a"])
_SCALAR_TEXTS = """auth|api flow|yes|No|~|null|0123|12:30|1.5|.inf|.|+1|2025-10-08T03:07:11Z
|2025-10-08|http://x/y|a:b|a: b|a:|é|'q'|"d q"|'it''s'|"esc\\n"|-x|- x|=|<<|&a|*a|!t|[]
|[a, b]|[a, b,]|[ ]|[a, , b]|[a:b]|['a, b']|{a: 1}|a # c|#c|\u2028|"""
_SCALARS = st.sampled_from(_SCALAR_TEXTS.replace("\n", "").split("|")) | st.just("|")
_LINES = st.one_of(
    st.builds(lambda k, v: f"{k}: {v}", _KEYS, _SCALARS),
    st.builds(lambda k: f"{k}:", _KEYS),
    st.builds(lambda i, v: f"{' ' * i}- {v}", st.integers(0, 3), _SCALARS),
    st.sampled_from(["", "  ", " a: b", "a:b", "- ", "---", "...", "%YAML 1.1", "\ttags: [a]"]),
)


@settings(max_examples=3000, deadline=None)
@given(lines=st.lists(_LINES, min_size=1, max_size=6))
def test_simple_frontmatter_reads_exactly_as_the_yaml_parser_reads_it(lines: list[str]) -> None:
    raw = "\n".join(lines) + "\n"
    quick = quick_load(raw)
    if quick is None:
        return
    # repr tells True from 1 and a date from a string, as == would not.
    assert repr(quick) == repr(yaml.load(raw, Loader=yaml.CSafeLoader))


def test_simple_frontmatter_is_read_without_the_parser() -> None:
    raw = "tags: [auth, api]\ncreated_at: 2025-10-01T09:00:00Z\ntitle: Login: flow\n"
    assert quick_load(raw) is None  # `: ` in a value: the parser decides
    assert quick_load("tags:\n  - a\n  - b\nupdated_at: 2025-10-08T03:07:11Z\n") == {
        "tags": ["a", "b"],
        "updated_at": dt.datetime(2025, 10, 8, 3, 7, 11, tzinfo=dt.timezone.utc),
    }


# ----- frontmatter bytes kept (writes that do not touch a key leave it as written) -----

NOW = dt.datetime(2030, 5, 6, 7, 8, 9, tzinfo=dt.timezone.utc)
STYLED = (
    "---\n"
    "# Owned by the docs team; keep the keys in this order.\n"
    "title:   'Login: flow'   # shown in the index\n"
    'owner: "alice"\n'
    "tags:    [auth,   api]  # reviewed\n"
    "created_at: 2020-01-02T03:04:05Z\n"
    "updated_at: '2020-01-02T03:04:05Z'  # bumped by tools\n"
    "related: &rel\n"
    "  - one\n"
    "again: *rel\n"
    "---\n"
    "# Login\n"
)


def _bumped(text: str) -> str:
    """STYLED-like text with only the updated_at value changed to NOW, quotes kept."""
    return text.replace("'2020-01-02T03:04:05Z'  #", "'2030-05-06T07:08:09Z'  #")


def test_a_body_write_changes_only_the_updated_at_value() -> None:
    doc = parse_document(STYLED)
    written = render(update_document(doc, "# Login\n\nNew body.\n", now=NOW))
    assert written == _bumped(STYLED).replace("# Login\n", "# Login\n\nNew body.\n")


def test_a_write_that_changes_no_key_keeps_the_block_byte_for_byte() -> None:
    text = STYLED.replace("'2020-01-02T03:04:05Z'", "'2030-05-06T07:08:09Z'")
    doc = parse_document(text)
    assert render(update_document(doc, doc.body, now=NOW)) == text
    assert render(update_document(doc, doc.body, tags=["auth", "api"], now=NOW)) == text


def test_a_reference_rewrite_keeps_the_file_but_the_reference() -> None:
    text = "\ufeff" + STYLED.replace("# Login\n", "See `mem:old` and [[old]].\r\n")
    new_text, count = rewrite_mem_references(text, "old", "new")
    assert (new_text, count) == (text.replace("mem:old", "mem:new"), 1)
    doc = parse_document(text)
    # The body alone replaced (what a [[...]] rewrite does): nothing else moves.
    renamed = dataclasses.replace(doc, body=doc.body.replace("[[old]]", "[[new]]"))
    assert render(renamed) == text.replace("[[old]]", "[[new]]")


@pytest.mark.parametrize(
    "text",
    [
        STYLED,
        "\ufeff" + STYLED,
        STYLED.replace("\n", "\r\n"),
        "\ufeff---  \r\na: 1\r\n---\t\r\nbody",
        "---\na: 1\n---",
        "---\n---\n",
        "\ufeffplain\n",
        "---\nno closing fence\n",
        "---\ntitle: [unclosed\n---\nbody\n",
    ],
)
def test_parse_and_render_give_the_same_text(text: str) -> None:
    assert render(parse_document(text)) == text


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="-\n\r \ufeffab:#'\"[]", max_size=40))
def test_every_text_renders_back_to_itself(text: str) -> None:
    assert render(parse_document(text)) == text


def test_tags_changed_rewrite_only_the_tags_line() -> None:
    doc = parse_document(STYLED)
    written = render(update_document(doc, doc.body, tags=["auth"], now=NOW))
    # The changed key's own line is written anew (its comment goes with the old value);
    # every other line, comments, quoting, order and the YAML anchor are kept.
    assert written == _bumped(STYLED).replace(
        "tags:    [auth,   api]  # reviewed\n", "tags: [auth]\n"
    )


def test_a_crlf_block_stays_crlf_and_the_body_is_written_as_given() -> None:
    text = STYLED.replace("\n", "\r\n")
    doc = parse_document(text)
    written = render(update_document(doc, "# Login\nmore\n", tags=["auth", "web"], now=NOW))
    # The frontmatter's bytes are kept (CRLF), and the body under it gets its line breaks:
    # one file, one kind of line break.
    assert written == _bumped(text).replace(
        "tags:    [auth,   api]  # reviewed\r\n", "tags: [auth, web]\r\n"
    ).replace("# Login\r\n", "# Login\r\nmore\r\n")
    # A plain file's content is written as given (as Serena writes it); a new block
    # follows the new body's line breaks, not the old file's.
    plain = parse_document("one\r\ntwo\r\n")
    written = render(update_document(plain, "one\ntwo\nthree\n", tags=["x"], now=NOW))
    assert "\r" not in written
    block, body = written.split("---", 2)[1:]
    assert body.lstrip("\n") == "one\ntwo\nthree\n"
    assert "tags: [x]" in block and "created_at: 2030-05-06T07:08:09Z" in block


def test_a_bom_is_kept_on_every_write() -> None:
    plain = parse_document("\ufeffplain\n")
    assert render(update_document(plain, "new\n", now=NOW)) == "\ufeffnew\n"
    tagged = render(update_document(plain, "new\n", tags=["a"], now=NOW))
    assert tagged.startswith("\ufeff---\ntags: [a]\n")
    doc = parse_document("\ufeff" + STYLED)
    assert render(update_document(doc, doc.body, now=NOW)) == "\ufeff" + _bumped(STYLED)
    assert render(with_keys(doc, {}, ["owner"])) == "\ufeff" + STYLED.replace(
        'owner: "alice"\n', ""
    )


def test_a_key_added_to_a_crlf_block_ends_with_crlf() -> None:
    doc = parse_document("---\r\ntitle: x\r\n---\r\nbody\r\n")
    written = render(update_document(doc, doc.body, now=NOW))
    # updated_at is kept current; created_at is never added to an existing block.
    assert written == "---\r\ntitle: x\r\nupdated_at: 2030-05-06T07:08:09Z\r\n---\r\nbody\r\n"


def test_store_writes_keep_the_frontmatter_bytes(ws: Workspace) -> None:
    store = ws.store()
    path = ws.write(ws.primary / "styled.md", "\ufeff" + STYLED.replace("\n", "\r\n"))

    def lines_changed() -> list[str]:
        before = ("\ufeff" + STYLED.replace("\n", "\r\n")).split("\r\n")
        after = path.read_bytes().decode("utf-8").split("\r\n")
        assert len(after) == len(before) and "\n" not in "".join(after)
        return [new for old, new in zip(before, after, strict=True) if old != new]

    # The same tags, the same body (content is written as given: CRLF here).
    store.save("styled", "# Login\r\n", tags=["auth", "api"])
    [updated] = lines_changed()
    assert re.fullmatch(
        r"updated_at: '\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ'  # bumped by tools", updated
    )
    assert path.read_bytes().startswith(b"\xef\xbb\xbf---\r\n# Owned by the docs team")
    store.edit("styled", content="# Login\r\n")  # a body-only edit (the same body)
    assert len(lines_changed()) == 1
    # A body given with LF goes under the CRLF block with CRLF (one file, one kind of
    # line break); the frontmatter block keeps its bytes.
    store.save("styled", "# Login\nmore\n")
    assert path.read_bytes().endswith(b"\r\n---\r\n# Login\r\nmore\r\n")
