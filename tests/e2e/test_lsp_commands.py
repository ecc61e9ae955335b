"""Every command of SPEC 3.3 over workspace/executeCommand: results and refusals."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from e2e_support import Session, Workspace, make_workspace, session, write_file
from pygls.exceptions import JsonRpcException

pytestmark = pytest.mark.asyncio(loop_scope="module")

MAX_BYTES = 4096
# SPEC 3.3's keys, then the versions, sizes and findings every write answers.
WRITE_KEYS = {"version", "previousVersion", "bytesBefore", "bytesAfter", "diagnostics"}
SAVE_KEYS = {"name", "path", "scope", "folder", "created", "routedBy", *WRITE_KEYS}
READ_KEYS = {
    "name",
    "path",
    "scope",
    "folder",
    "content",
    "tags",
    "createdAt",
    "updatedAt",
    "readOnly",
    "version",
    "supersededBy",
}
LIST_ITEM_KEYS = {
    "name",
    "path",
    "scope",
    "folder",
    "tags",
    "updatedAt",
    "readOnly",
    "validName",
    "shadows",
    "title",
    "supersededBy",
}


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The standard workspace plus a read-only vendor folder and a symlink leading outside."""
    workspace = make_workspace(tmp_path_factory.mktemp("commands"))
    workspace.write("shared/vendor/vendor_sdk.md", "# Vendor SDK\n")
    workspace.write("shared/vendor/style_guide.md", "# Style guide (vendor)\n")  # shadowed
    secret = write_file(workspace.base / "secret.txt", "not a memory\n")
    os.symlink(secret, workspace.primary / "escape.md")
    return workspace


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(ws: Workspace) -> AsyncIterator[Session]:
    """One server for the module; tests use their own memory names."""
    options = ws.init_options(maxMemoryBytes=MAX_BYTES)
    options["additionalFolders"].append("shared/vendor:ro")
    async with session(ws, init_options=options) as running:
        yield running


async def refused(server: Session, command: str, *arguments: Any) -> tuple[str, str]:
    """Run a command that must fail; return (SPEC code, message)."""
    with pytest.raises(JsonRpcException) as info:
        await server.command(command, *arguments)
    data = info.value.data
    assert isinstance(data, dict), info.value
    return data["code"], info.value.message


# ----- memory.save ---------------------------------------------------------------------


async def test_save_creates_in_the_primary_folder(server: Session, ws: Workspace) -> None:
    result = await server.command("memory.save", {"name": "save_plain", "content": "# Plain\n"})
    assert set(result) == SAVE_KEYS
    assert {k: v for k, v in result.items() if k not in WRITE_KEYS} == {
        "name": "save_plain",
        "path": str(ws.primary / "save_plain.md"),
        "scope": "project",
        "folder": str(ws.primary),
        "created": True,
        "routedBy": "default",
    }
    assert (ws.primary / "save_plain.md").read_text() == "# Plain\n"


@pytest.mark.parametrize(
    ("name", "folder", "routed_by"),
    [
        ("FEATURE_save_route", "shared/feature", "prefix"),
        ("FEATURE_BUILDER_save_route", "shared/feature_builder", "prefix"),
        ("SPEC_save_route", "shared/spec", "prefix"),
        ("Feature_save_route", ".serena/memories", "default"),
        ("topic/save_route", ".serena/memories", "topic"),
    ],
)
async def test_save_routes_new_names(
    server: Session, ws: Workspace, name: str, folder: str, routed_by: str
) -> None:
    result = await server.command("memory.save", {"name": name, "content": "x\n"})
    assert result["folder"] == str(ws.path(folder))
    assert result["path"] == str(ws.path(folder) / f"{name}.md")
    assert result["routedBy"] == routed_by
    assert Path(result["path"]).is_file()


async def test_save_global_and_existing(server: Session, ws: Workspace) -> None:
    first = await server.command("memory.save", {"name": "global/save_tip", "content": "one\n"})
    assert first["scope"] == "global"
    assert first["routedBy"] == "global"
    assert first["path"] == str(ws.global_folder / "save_tip.md")
    again = await server.command(
        "memory.save", {"name": "save_tip", "content": "two\n", "tags": ["tips"], "scope": "global"}
    )
    assert again["created"] is False
    assert again["routedBy"] == "existing"
    read = await server.command("memory.read", {"name": "global/save_tip"})
    assert read["content"] == "two\n"
    assert read["tags"] == ["tips"]


async def test_save_refusals_write_nothing(server: Session, ws: Workspace) -> None:
    before = sorted(str(p) for p in ws.base.rglob("*.md"))

    code, message = await refused(
        server, "memory.save", {"name": "../escape_attempt", "content": "x"}
    )
    assert code == "invalid-name"
    assert "escape_attempt" in message

    code, message = await refused(
        server, "memory.save", {"name": "save_big", "content": "x" * (MAX_BYTES + 1)}
    )
    assert code == "too-large"
    assert "maxMemoryBytes" in message

    code, message = await refused(server, "memory.save", {"name": "VENDOR_new", "content": "x"})
    assert code == "read-only"
    assert "vendor" in message

    code, _ = await refused(server, "memory.save", {"name": "escape", "content": "x"})
    assert code == "outside-store"
    assert (ws.base / "secret.txt").read_text() == "not a memory\n"

    assert sorted(str(p) for p in ws.base.rglob("*.md")) == before


@pytest.mark.parametrize(
    "arguments",
    [
        (),
        ("save_args",),
        ({"name": "save_args"},),
        ({"content": "x"},),
        ({"name": 5, "content": "x"},),
        ({"name": "save_args", "content": ["x"]},),
        ({"name": "save_args", "content": "x", "tags": "a,b"},),
        ({"name": "save_args", "content": "x", "tags": [1]},),
        ({"name": "save_args", "content": "x", "colour": "red"},),
        ({"name": "save_args", "content": "x", "scope": "everywhere"},),
        ({"name": "save_args", "content": "x"}, {"extra": True}),
    ],
)
async def test_save_with_bad_arguments_is_invalid_arguments(
    server: Session, ws: Workspace, arguments: tuple[Any, ...]
) -> None:
    code, message = await refused(server, "memory.save", *arguments)
    assert code == "invalid-arguments"
    assert message
    assert not (ws.primary / "save_args.md").exists()


# ----- memory.read ---------------------------------------------------------------------


async def test_read_returns_body_and_metadata(server: Session, ws: Workspace) -> None:
    result = await server.command("memory.read", {"name": "project_overview"})
    assert set(result) == READ_KEYS
    assert result["content"].startswith("# Project overview")
    assert result["tags"] == ["overview", "onboarding"]
    assert result["path"] == str(ws.primary / "project_overview.md")
    assert result["readOnly"] is False
    vendor = await server.command("memory.read", {"name": "vendor_sdk"})
    assert vendor["readOnly"] is True
    personal = await server.command("memory.read", {"name": "style_guide", "scope": "global"})
    assert personal["content"] == "# Style guide (personal)\n"
    assert personal["name"] == "global/style_guide"


async def test_a_bare_name_reads_the_global_memory_only_when_no_project_one_has_it(
    server: Session, ws: Workspace
) -> None:
    fallback = await server.command("memory.read", {"name": "editor_tips"})
    assert (fallback["name"], fallback["scope"]) == ("global/editor_tips", "global")
    assert fallback["path"] == str(ws.global_folder / "editor_tips.md")
    project = await server.command("memory.read", {"name": "style_guide"})
    assert (project["name"], project["content"]) == ("style_guide", "# Style guide (project)\n")
    # Writes never fall back: a bare name is a project memory.
    assert (await refused(server, "memory.delete", {"name": "editor_tips"}))[0] == "not-found"
    edit = {"name": "editor_tips", "content": "x"}
    assert (await refused(server, "memory.edit", edit))[0] == "not-found"
    move = {"name": "editor_tips", "newName": "tips"}
    assert (await refused(server, "memory.move", move))[0] == "not-found"
    assert (ws.global_folder / "editor_tips.md").read_text().endswith("# Editor tips\n")


async def test_not_found_says_where_it_looked_and_suggests_the_closest_names(
    server: Session,
) -> None:
    with pytest.raises(JsonRpcException) as info:
        await server.command("memory.delete", {"name": "editor_tips"})
    assert info.value.data == {"code": "not-found", "suggestions": ["global/editor_tips"]}
    assert info.value.message.startswith(
        "No memory named 'editor_tips' in the project scope (searched .serena/memories"
    )
    assert info.value.message.endswith(" Did you mean global/editor_tips?")
    with pytest.raises(JsonRpcException) as info:
        await server.command("memory.read", {"name": "style_guid"})
    assert info.value.data["suggestions"][0] == "style_guide"
    assert ", nor 'global/style_guid' in the global scope (searched " in info.value.message


async def test_read_refusals(server: Session) -> None:
    assert (await refused(server, "memory.read", {"name": "no_such"}))[0] == "not-found"
    assert (await refused(server, "memory.read", {"name": "a/../b"}))[0] == "invalid-name"
    # A name memory-ls would not create may be a file Serena wrote: looked up, not refused.
    assert (await refused(server, "memory.read", {"name": "a:b"}))[0] == "not-found"
    bad_scope = {"name": "project_overview", "scope": "nowhere"}
    assert (await refused(server, "memory.read", bad_scope))[0] == "invalid-arguments"
    assert (await refused(server, "memory.read", {"name": None}))[0] == "invalid-arguments"


# ----- memory.edit ---------------------------------------------------------------------


async def test_edit_content_and_needles(server: Session, ws: Workspace) -> None:
    await server.command("memory.save", {"name": "edit_me", "content": "alpha beta alpha\n"})
    path = ws.primary / "edit_me.md"

    result = await server.command(
        "memory.edit", {"name": "edit_me", "needle": "beta", "replacement": "gamma"}
    )
    assert {k: v for k, v in result.items() if k not in WRITE_KEYS} == {
        "name": "edit_me",
        "path": str(path),
        "replacements": 1,
    }
    assert result["diagnostics"] == [] and result["bytesAfter"] == 18
    assert path.read_text() == "alpha gamma alpha\n"

    result = await server.command(
        "memory.edit",
        {"name": "edit_me", "needle": "alpha", "replacement": "delta", "allowMultiple": True},
    )
    assert result["replacements"] == 2
    result = await server.command(
        "memory.edit",
        {
            "name": "edit_me",
            "needle": r"d(\w+)a",
            "replacement": "D$!1A",
            "mode": "regex",
            "allowMultiple": True,
        },
    )
    assert result["replacements"] == 2
    assert path.read_text() == "DeltA gamma DeltA\n"

    result = await server.command("memory.edit", {"name": "edit_me", "content": "new body\n"})
    assert result["replacements"] == 1
    assert path.read_text() == "new body\n"


async def test_edit_refusals_change_nothing(server: Session, ws: Workspace) -> None:
    await server.command("memory.save", {"name": "edit_keep", "content": "one two two\n"})
    path = ws.primary / "edit_keep.md"

    def edit(**arguments: Any) -> dict[str, Any]:
        return {"name": "edit_keep", **arguments}

    cases = [
        (edit(needle="zzz", replacement="y"), "no-match"),
        (edit(needle="two", replacement="y"), "ambiguous-match"),
        (edit(content="x" * (MAX_BYTES + 1)), "too-large"),
        (edit(content="a", needle="one", replacement="b"), "invalid-arguments"),
        (edit(), "invalid-arguments"),
        (edit(needle="one", replacement="b", mode="glob"), "invalid-arguments"),
        (edit(needle="one", replacement="b", allowMultiple="yes"), "invalid-arguments"),
        (edit(needle="(", replacement="b", mode="regex"), "invalid-arguments"),
        ({"name": "edit_missing", "content": "x"}, "not-found"),
        ({"name": "bad/../name", "content": "x"}, "invalid-name"),
        ({"name": "bad\\name", "content": "x"}, "not-found"),  # Serena could write it
        ({"name": "vendor_sdk", "content": "x"}, "read-only"),
    ]
    for arguments, expected in cases:
        code, _ = await refused(server, "memory.edit", arguments)
        assert code == expected, arguments
    assert path.read_text() == "one two two\n"
    assert ws.path("shared/vendor/vendor_sdk.md").read_text() == "# Vendor SDK\n"


# ----- memory.delete -------------------------------------------------------------------


async def test_delete_and_its_refusals(server: Session, ws: Workspace) -> None:
    await server.command("memory.save", {"name": "delete_me", "content": "bye\n"})
    path = ws.primary / "delete_me.md"
    assert await server.command("memory.delete", {"name": "delete_me"}) == {
        "name": "delete_me",
        "path": str(path),
    }
    assert not path.exists()
    assert (await refused(server, "memory.delete", {"name": "delete_me"}))[0] == "not-found"
    assert (await refused(server, "memory.delete", {"name": "vendor_sdk"}))[0] == "read-only"
    assert (await refused(server, "memory.delete", {"name": ".."}))[0] == "invalid-name"
    assert (await refused(server, "memory.delete", ["delete_me"]))[0] == "invalid-arguments"
    assert ws.path("shared/vendor/vendor_sdk.md").exists()


async def test_delete_names_the_memories_whose_links_break(server: Session, ws: Workspace) -> None:
    await server.command("memory.save", {"name": "linked_away", "content": "# Gone soon\n"})
    await server.command(
        "memory.save", {"name": "linked_from", "content": "# From\n\nSee [[linked_away]].\n"}
    )
    result = await server.command("memory.delete", {"name": "linked_away"})
    assert result["brokenLinks"] == [
        {"name": "linked_from", "path": str(ws.primary / "linked_from.md"), "line": 3}
    ]
    assert result["moreBrokenLinks"] == 0


# ----- memory.move ---------------------------------------------------------------------


async def test_move_reroutes_and_rewrites_references(server: Session, ws: Workspace) -> None:
    await server.command("memory.save", {"name": "move_src", "content": "# Source\n"})
    await server.command(
        "memory.save",
        {"name": "move_linker", "content": "See [[move_src]] and `mem:move_src`.\n"},
    )
    result = await server.command("memory.move", {"name": "move_src", "newName": "SPEC_moved"})
    assert result == {
        "name": "move_src",
        "newName": "SPEC_moved",
        "path": str(ws.path("shared/spec/SPEC_moved.md")),
        "updatedReferences": 2,
        "rewritten": ["move_linker"],
        "moreRewritten": 0,
        "diagnostics": [],
    }
    assert not (ws.primary / "move_src.md").exists()
    linker = (ws.primary / "move_linker.md").read_text()
    assert linker == "See [[SPEC_moved]] and `mem:SPEC_moved`.\n"


async def test_move_refusals(server: Session, ws: Workspace) -> None:
    await server.command("memory.save", {"name": "move_a", "content": "a\n"})
    await server.command("memory.save", {"name": "move_b", "content": "b\n"})
    cases = [
        ({"name": "move_a", "newName": "move_b"}, "exists"),
        ({"name": "move_none", "newName": "move_c"}, "not-found"),
        ({"name": "vendor_sdk", "newName": "vendor_sdk2"}, "read-only"),
        ({"name": "move_a", "newName": "VENDOR_a"}, "read-only"),
        ({"name": "move_a", "newName": "../move_a"}, "invalid-name"),
        ({"name": "move_a"}, "invalid-arguments"),
        ({"name": "move_a", "newName": 3}, "invalid-arguments"),
    ]
    for arguments, expected in cases:
        code, _ = await refused(server, "memory.move", arguments)
        assert code == expected, arguments
    assert (ws.primary / "move_a.md").read_text() == "a\n"
    assert (ws.primary / "move_b.md").read_text() == "b\n"


# ----- memory.list, memory.search, memory.route, memory.tags ---------------------------


async def test_list_by_scope_tags_and_prefix(server: Session, ws: Workspace) -> None:
    everything = (await server.command("memory.list", {}))["memories"]
    assert everything == (await server.command("memory.list"))["memories"]
    assert all(set(item) == LIST_ITEM_KEYS for item in everything)
    by_name = {item["name"]: item for item in everything}
    # style_guide and global/style_guide are two memories; the vendor copy is shadowed.
    assert by_name["style_guide"]["shadows"] == [str(ws.path("shared/vendor/style_guide.md"))]
    assert by_name["global/style_guide"]["shadows"] == []
    assert by_name["global/style_guide"]["path"] == str(ws.global_folder / "style_guide.md")
    assert by_name["team_rules"]["folder"] == str(ws.outside)

    project = (await server.command("memory.list", {"scope": "project"}))["memories"]
    assert {item["scope"] for item in project} == {"project"}
    global_ = (await server.command("memory.list", {"scope": "global"}))["memories"]
    assert "global/editor_tips" in {item["name"] for item in global_}
    assert all(item["name"].startswith("global/") for item in global_)
    assert {item["scope"] for item in global_} == {"global"}

    tagged = (await server.command("memory.list", {"tags": ["auth"]}))["memories"]
    assert {item["name"] for item in tagged} == {"auth/login_flow", "FEATURE_checkout"}
    prefixed = (await server.command("memory.list", {"prefix": "SPEC_pay"}))["memories"]
    assert [item["name"] for item in prefixed] == ["SPEC_payments_api"]
    in_topic = (await server.command("memory.list", {"topic": "auth"}))["memories"]
    assert [item["name"] for item in in_topic] == ["auth/login_flow"]

    assert (await refused(server, "memory.list", {"scope": "galaxy"}))[0] == "invalid-arguments"
    assert (await refused(server, "memory.list", {"tags": "auth"}))[0] == "invalid-arguments"


async def test_list_pages_with_limit_and_cursor(server: Session) -> None:
    everything = await server.command("memory.list", {})
    assert "nextCursor" not in everything  # no limit: every memory, as the Memories view needs
    names = [item["name"] for item in everything["memories"]]
    assert everything["total"] == len(names) > 5
    paged: list[str] = []
    page = await server.command("memory.list", {"limit": 2})
    while True:
        assert len(page["memories"]) <= 2
        paged += [item["name"] for item in page["memories"]]
        if "nextCursor" not in page:
            break
        page = await server.command("memory.list", {"limit": 2, "cursor": page["nextCursor"]})
    assert paged == names
    # A cursor keeps its listing's filters, which a later page may repeat but not change.
    first = await server.command("memory.list", {"scope": "global", "limit": 1})
    rest = await server.command("memory.list", {"cursor": first["nextCursor"]})
    assert all(item["scope"] == "global" for item in rest["memories"])
    for arguments in (
        {"limit": 0},
        {"limit": "2"},
        {"cursor": "not-a-cursor"},
        {"cursor": first["nextCursor"], "scope": "project"},
    ):
        assert (await refused(server, "memory.list", arguments))[0] == "invalid-arguments"


async def test_search_ranks_and_filters(server: Session) -> None:
    results = (await server.command("memory.search", {"query": "LOGIN flow"}))["results"]
    assert results
    assert set(results[0]) == {
        "name",
        "path",
        "line",
        "text",
        "score",
        "title",
        "matched",
        "supersededBy",
    }
    assert results[0]["name"] == "auth/login_flow"
    assert results[0]["line"] == 4  # after three lines of frontmatter
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True)

    tagged = await server.command("memory.search", {"query": "checkout", "tags": ["checkout"]})
    assert {r["name"] for r in tagged["results"]} == {"FEATURE_checkout"}
    everything = (await server.command("memory.search", {"query": "s"}))["results"]
    limited = await server.command("memory.search", {"query": "s", "limit": 2})
    assert len(everything) > 2 and limited["results"] == everything[:2]

    # Words are searched, not punctuation (`#` was a substring before the full-text index).
    for arguments in (
        {"query": ""},
        {"query": "#"},
        {"query": "x", "limit": 0},
        {"query": "x", "limit": "2"},
    ):
        assert (await refused(server, "memory.search", arguments))[0] == "invalid-arguments"


async def test_route_is_a_dry_run(server: Session, ws: Workspace) -> None:
    result = await server.command("memory.route", {"name": "FEATURE_BUILDER_route_only"})
    assert result == {
        "name": "FEATURE_BUILDER_route_only",
        "path": str(ws.path("shared/feature_builder/FEATURE_BUILDER_route_only.md")),
        "folder": str(ws.path("shared/feature_builder")),
        "routedBy": "prefix",
        "exists": False,
        "readOnly": False,
        "unknownPrefix": None,
    }
    assert not Path(result["path"]).exists()
    existing = await server.command("memory.route", {"name": "team_rules"})
    assert existing["exists"] is True
    assert existing["routedBy"] == "existing"
    assert existing["folder"] == str(ws.outside)
    assert (await refused(server, "memory.route", {"name": "a*b"}))[0] == "invalid-name"
    assert (await refused(server, "memory.route", {}))[0] == "invalid-arguments"


async def test_tags_counts_by_scope(server: Session) -> None:
    tags = {t["tag"]: t["count"] for t in (await server.command("memory.tags", {}))["tags"]}
    assert tags["auth"] == 2
    assert tags["overview"] == 1
    global_tags = (await server.command("memory.tags", {"scope": "global"}))["tags"]
    assert {"tag": "editor", "count": 1} in global_tags
    assert "auth" not in {t["tag"] for t in global_tags}
    assert (await refused(server, "memory.tags", {"scope": 1}))[0] == "invalid-arguments"


async def test_global_names_refused_when_the_global_scope_is_off(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    async with session(workspace, init_options={"globalFolder": None}) as no_global:
        for command, arguments in (
            ("memory.save", {"name": "global/tip", "content": "x"}),
            ("memory.route", {"name": "global/tip"}),
            ("memory.move", {"name": "style_guide", "newName": "global/style"}),
        ):
            code, message = await refused(no_global, command, arguments)
            assert code == "outside-store", command
            assert "global scope is disabled" in message
    assert (workspace.primary / "style_guide.md").exists()


# ----- memory.about ----------------------------------------------------------------------


async def test_about_finds_the_memories_that_mention_a_file(server: Session, ws: Workspace) -> None:
    ws.write("src/billing/ledger.py", "class Ledger: ...\n")
    ws.write(
        ".serena/memories/about_ledger.md", "# Ledger\n\nTotals in `src/billing/ledger.py:3`.\n"
    )
    ws.write(".serena/memories/about_other.md", "Another `lib/ledger.py`; `Ledger.post()`.\n")
    ledger = {"target": "src/billing/ledger.py"}

    async def both_seen() -> bool:
        # Written behind the server's back: its file watching brings them in.
        return len((await server.command("memory.about", ledger))["memories"]) == 2

    await server.eventually(both_seen, "memory.about sees the memories written on disk")
    result = await server.command("memory.about", ledger)
    assert result == {
        "target": "src/billing/ledger.py",
        "targetPath": "src/billing/ledger.py",
        "memories": [
            {
                "name": "about_ledger",
                "path": str(ws.primary / "about_ledger.md"),
                "scope": "project",
                "title": "Ledger",
                "match": "path",
                "lines": [
                    {"line": 3, "text": "Totals in `src/billing/ledger.py:3`.", "match": "path"}
                ],
                "moreLines": 0,
                "supersededBy": [],
            },
            {
                "name": "about_other",
                "path": str(ws.primary / "about_other.md"),
                "scope": "project",
                "title": "",
                "match": "name",
                "lines": [
                    {
                        "line": 1,
                        "text": "Another `lib/ledger.py`; `Ledger.post()`.",
                        "match": "name",
                    }
                ],
                "moreLines": 0,
                "supersededBy": [],
            },
        ],
        "more": 0,
    }
    limited = await server.command("memory.about", {"target": "ledger.py", "limit": 1})
    assert [m["name"] for m in limited["memories"]] == ["about_ledger"]
    assert limited["more"] == 1
    symbol = await server.command("memory.about", {"target": "Ledger.post"})
    assert [(m["name"], m["match"]) for m in symbol["memories"]] == [("about_other", "symbol")]


async def test_about_reads_open_memories_as_the_editor_has_them(
    server: Session, ws: Workspace
) -> None:
    ws.write("src/billing/invoice.py", "")
    ws.write(".serena/memories/about_draft.md", "Nothing yet.\n")
    uri = server.open(
        ".serena/memories/about_draft.md", "Unsaved:\n[inv](../../src/billing/invoice.py)\n"
    )
    try:
        result = await server.command("memory.about", {"target": "src/billing/invoice.py"})
        assert [(m["name"], m["lines"][0]["line"]) for m in result["memories"]] == [
            ("about_draft", 2)
        ]
    finally:
        server.close(uri)
    closed = await server.command("memory.about", {"target": "src/billing/invoice.py"})
    assert closed["memories"] == []


async def test_about_refuses_what_names_nothing(server: Session) -> None:
    assert (await refused(server, "memory.about", {}))[0] == "invalid-arguments"
    assert (await refused(server, "memory.about", {"target": " "}))[0] == "invalid-arguments"
    assert (await refused(server, "memory.about", {"target": "../up.py"}))[0] == (
        "invalid-arguments"
    )
    code, message = await refused(server, "memory.about", {"target": "x.py", "limit": 0})
    assert code == "invalid-arguments" and "limit" in message
