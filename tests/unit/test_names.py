"""Names (SPEC 2.1): normalisation, the rules, and hostile names refused everywhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_helpers import Workspace, changed_paths

from memory_ls.core import Store
from memory_ls.core.rules.errors import InvalidName, NotFound
from memory_ls.core.rules.names import (
    WINDOWS_RESERVED,
    caps_prefixes,
    explain_name,
    name_problem,
    parse_name,
    prefix_run,
)


@pytest.mark.parametrize(
    ("raw", "name", "is_global"),
    [
        ("notes", "notes", False),
        ("  notes \n", "notes", False),
        ("mem:notes", "notes", False),
        ("notes.md", "notes", False),
        ("notes.md.md", "notes.md", False),  # ONE trailing .md is removed
        (" mem:auth/login_flow.md ", "auth/login_flow", False),
        ("global/notes", "notes", True),
        ("mem:global/topic/notes.md", "topic/notes", True),
        ("Global/notes", "Global/notes", False),  # case-sensitive
        ("v1.2 release-notes", "v1.2 release-notes", False),
        ("Ünïcödé_名前", "Ünïcödé_名前", False),
        ("a" * 252, "a" * 252, False),
        ("日" * 84, "日" * 84, False),  # 252 bytes
        ("global/global", "global", True),
        ("/".join(["t"] * 16), "/".join(["t"] * 16), False),
        ("CONFIG", "CONFIG", False),  # only the exact device names are reserved
        ("console", "console", False),
    ],
)
def test_normalisation_and_valid_names(raw: str, name: str, is_global: bool) -> None:
    parsed = parse_name(raw)
    assert (parsed.name, parsed.is_global) == (name, is_global)


def test_names_are_case_sensitive(ws: Workspace) -> None:
    store = ws.store()
    store.save("Notes", "upper")
    store.save("notes", "lower")
    assert store.read("Notes")["content"] == "upper"
    assert store.read("notes")["content"] == "lower"
    assert [m["name"] for m in store.list_memories()["memories"]] == ["Notes", "notes"]


@pytest.mark.parametrize(
    ("name", "prefixes", "run"),
    [
        ("FEATURE_BUILDER_x", ["FEATURE_BUILDER", "FEATURE"], "FEATURE_BUILDER"),
        ("FEATURE_auth", ["FEATURE"], "FEATURE"),
        ("Feature_auth", [], None),
        ("regular_name", [], None),
        ("README", ["README"], None),  # all capitals, nothing follows: no prefix run
        ("A_B", ["A_B", "A"], "A"),
        ("FEATURE_x/y", [], None),  # topic names never route by prefix
    ],
)
def test_caps_prefixes(name: str, prefixes: list[str], run: str | None) -> None:
    assert caps_prefixes(name) == prefixes
    assert prefix_run(name) == run


# Every one of these must be refused with invalid-name by every operation: they would
# reach outside the folder, or no file can have them.
UNSAFE_NAMES = [
    # traversal, in every spelling
    "../x",
    "..",
    ".",
    "a/../../x",
    "a/./x",
    "global/../x",
    "mem:../x.md",
    "x/..",
    "global/.",
    "../global/x",
    # absolute paths
    "/etc/x",
    "//server/share/x",
    # empty segments
    "",
    "global/",
    "a//b",
    "a/",
    # NUL
    "x\x00",
    "a\x00/../../x",
    "a\udcff/../x",
    # the global scope itself is not a memory
    "global",
]

# Serena writes files with these names, so they are looked up (a file on disk with such a
# name is found, see below); a NEW memory with one is refused with invalid-name.
UNCREATABLE_NAMES = [
    "..\\x",  # one segment on POSIX (on Windows `\` separates and is refused)
    "C:\\x",
    "C:/x",
    "   ",
    " ../x ",  # trimmed, a relative step; as given, the folder ` ..`
    # control characters
    "a\nb",
    "a\tb",
    "a\rb",
    "\x1b[31mred",
    "a\x7fb",
    "bidi\u202etxt",
    "zero\u200bwidth",
    "\ud800",  # a lone surrogate, which JSON can carry
    # Windows-reserved characters and names
    "a:b",
    "a*b",
    "a?b",
    'a"b',
    "a<b",
    "a>b",
    "a|b",
    "a\\b",
    "CON",
    "con",
    "nul.txt",
    "topic/AUX",
    "COM1",
    "lpt9",
    "con /x",  # Windows drops a segment's trailing spaces: still the device
    "nul .txt",
    "topic/aux /x",
    # control and invisible characters of every Unicode category C*
    "a\u2028b",
    "soft\u00adhyphen",
    "notes\u200bdraft",
    "tag\U000e0041",
    "private\ue000use",
    # over-long: 252 UTF-8 bytes a segment at most
    "a" * 253,
    "topic/" + "b" * 253,
    "日" * 85,  # 85 characters but 255 bytes in UTF-8
    "/".join(["t"] * 17),
]
HOSTILE_NAMES = UNSAFE_NAMES + UNCREATABLE_NAMES

OPERATIONS: dict[str, Callable[[Store, str], Any]] = {
    "save": lambda s, n: s.save(n, "x"),
    "save-global": lambda s, n: s.save(n, "x", scope="global"),
    "read": lambda s, n: s.read(n),
    "route": lambda s, n: s.route(n),
    "edit-content": lambda s, n: s.edit(n, content="x"),
    "edit-needle": lambda s, n: s.edit(n, needle="victim", replacement="x"),
    "delete": lambda s, n: s.delete(n),
    "move-from": lambda s, n: s.move(n, "fresh"),
    "move-to": lambda s, n: s.move("victim", n),
    "import": lambda s, n: s.import_records([{"name": n, "content": "x"}]),
}
# The operations that only look a name up: an uncreatable name is simply not found.
LOOKUPS = ("read", "edit-content", "edit-needle", "delete", "move-from")


@pytest.fixture
def bait(ws: Workspace) -> Store:
    """A store with files at every place a traversal could reach."""
    store = ws.store(["team/feature"])
    ws.write(ws.primary / "victim.md", "victim\n")
    ws.write(ws.primary / "a" / "x.md", "topic x\n")
    for path in (
        ws.root / ".serena" / "x.md",
        ws.root / "x.md",
        ws.tmp / "x.md",
        ws.home / "x.md",
        ws.global_dir / "victim.md",
    ):
        ws.write(path, "bait\n")
    return store


@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=repr)
def test_hostile_names_are_refused_and_change_nothing(
    ws: Workspace, bait: Store, name: str
) -> None:
    for operation, call in OPERATIONS.items():
        before = ws.snapshot()
        expected = NotFound if name in UNCREATABLE_NAMES and operation in LOOKUPS else InvalidName
        try:
            call(bait, name)
        except expected as exc:
            assert str(exc).strip()
        except Exception as exc:
            pytest.fail(f"{operation}: {type(exc).__name__}: {exc}")
        else:
            pytest.fail(f"{operation} accepted {name!r}")
        after = ws.snapshot()
        assert after == before, f"{operation} changed {sorted(changed_paths(before, after))}"


# Files Serena 2.1.0 writes for names memory-ls would not create (one name a file).
SERENA_WROTE = [
    "what?",
    "CON",
    "nul.txt",
    "tab\tname",
    "name:colon",
    "a|b",
    'say "hi"',
    "<tag>",
    "star*",
    "back\\slash",
    "bidi\u202etxt",
    "zero\u200bwidth",
    "topic/AUX",
    "con/inner",
    " lead",
    "trail ",
    " both ",
    "topic/ x ",
]


@pytest.mark.parametrize("name", SERENA_WROTE, ids=repr)
def test_a_file_serena_wrote_is_read_edited_saved_renamed_and_deleted(
    ws: Workspace, name: str
) -> None:
    store = ws.store()
    path = ws.primary.joinpath(*name.split("/")).with_name(name.split("/")[-1] + ".md")
    ws.write(path, "body\n")
    listed = store.list_memories()["memories"]
    assert [(m["name"], m["readOnly"]) for m in listed] == [(name, False)]
    assert store.read(name)["content"] == "body\n"
    assert store.read(f"mem:{name}.md")["name"] == name
    assert store.edit(name, needle="body", replacement="edited")["path"] == str(path)
    saved = store.save(name, "saved\n")
    assert (saved["name"], saved["path"], saved["created"]) == (name, str(path), False)
    assert path.read_text() == "saved\n"
    with pytest.raises(InvalidName):
        store.move(name, "a|new")  # a new name still follows the rules
    moved = store.move(name, "renamed")
    assert (moved["name"], moved["newName"]) == (name, "renamed") and not path.exists()
    assert store.read("renamed")["content"] == "saved\n"
    ws.write(path, "again\n")
    assert store.delete(name)["path"] == str(path) and not path.exists()
    if name != name.strip():
        # A new name is trimmed (SPEC 2.1): the file as given is not created again.
        assert store.move("renamed", name)["newName"] == name.strip()
        assert not path.exists()
        return
    with pytest.raises(InvalidName):
        store.move("renamed", name)  # creating it again is refused
    with pytest.raises(InvalidName):
        store.save(name, "new\n")
    assert not path.exists()


def test_a_trimmed_name_that_exists_wins_over_the_exact_file(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "notes.md", "trimmed\n")
    ws.write(ws.primary / " notes .md", "exact\n")
    assert store.read(" notes ")["content"] == "trimmed\n"
    store.delete(" notes ")
    assert store.read(" notes ")["content"] == "exact\n"
    # Once neither exists, a save creates the trimmed name (SPEC 2.1).
    store.delete(" notes ")
    assert store.save(" notes ", "new\n")["path"] == str(ws.primary / "notes.md")


def test_patterns_apply_to_the_name_meant(ws: Workspace) -> None:
    ws.write(ws.root / ".serena" / "project.yml", "read_only_memory_patterns: [' ro']\n")
    ws.write(ws.primary / " ro.md", "exact\n")
    store = ws.store()
    assert store.read(" ro")["readOnly"] is True
    with ws.refuses("read-only"):
        store.edit(" ro", content="x")


# Names Serena accepts that the old rules refused: each is a file of that name in the
# primary folder (or under its topic), nothing else.
SERENA_NAMES = [
    ".hidden",
    "-dash",
    "x.",
    "topic/ x",
    "inner space",
    "~",
    "~/x",
    "%2e%2e%2fx",
    "..%2Fx",
    "%2e%2e/x",
    "..x",
    "x..",
    "...",
    "emoji_\U0001f9e0",
    "cafe\u0301",  # NFD: kept as typed
    "a" * 101,
    "topic/" + "b" * 252,
    "日" * 84,
    "CONFIG",
    "con_x",
]


@pytest.mark.parametrize("name", SERENA_NAMES, ids=repr)
def test_names_serena_accepts_are_accepted(ws: Workspace, name: str) -> None:
    store = ws.store()
    saved = store.save(name, "body\n")
    expected = ws.primary.joinpath(*name.split("/")).with_name(name.split("/")[-1] + ".md")
    assert saved["name"] == name
    assert saved["path"] == str(expected)
    assert expected.read_text() == "body\n"
    assert store.read(name)["content"] == "body\n"
    assert [m["name"] for m in store.list_memories()["memories"]] == [name]
    assert store.edit(name, needle="body", replacement="changed")["replacements"] == 1
    moved = store.move(name, "renamed")
    assert moved["name"] == name and not expected.exists()
    assert store.move("renamed", name)["path"] == str(expected)
    assert store.delete(name)["path"] == str(expected)
    assert not expected.exists()
    assert not any(p.name.endswith(".md") for p in ws.tmp.rglob("*") if p.is_file())


def test_hostile_name_messages_are_readable() -> None:
    with pytest.raises(InvalidName) as info:
        parse_name("x" * 5000 + "\x00")
    assert len(str(info.value)) < 400, "a hostile name is cut in the message"
    with pytest.raises(InvalidName, match="reserved"):
        parse_name("CON")
    with pytest.raises(InvalidName, match="not allowed"):
        parse_name("a|b")


_NAME_PARTS = st.sampled_from(
    ["a", "Z", "9", "_", "-", ".", " ", "/", "..", "con", "COM1", "lpt9", "Nul.txt", "é", "\t"]
)
_NAME_PARTS |= st.sampled_from(["x" * 98, "\u212a", "\u0130", "\x00", "\ud800", "名"])


@settings(max_examples=2000, deadline=None)
@given(parts=st.lists(_NAME_PARTS, max_size=12))
def test_the_fast_path_for_plain_names_agrees_with_the_full_check(parts: list[str]) -> None:
    name = "".join(parts)
    assert (name_problem(name) is None) == (explain_name(name) is None)


def test_the_fast_path_knows_every_reserved_device_name() -> None:
    for reserved in WINDOWS_RESERVED:
        for name in (reserved, reserved.lower(), f"{reserved}.md", f"topic/{reserved}", "a" * 1025):
            assert name_problem(name) is not None and explain_name(name) is not None
    assert name_problem("/".join(["a"] * 16)) is None
    assert name_problem("/".join(["a"] * 17)) is not None
