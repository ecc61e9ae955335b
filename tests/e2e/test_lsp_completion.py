"""Completion (SPEC 3.1) with VS Code's and Neovim's client capabilities."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator

import attrs
import pytest
import pytest_asyncio
from e2e_support import CLIENTS, CURSOR, Session, Workspace, make_workspace, session
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="module")

BULK = 150  # more memories than the server sends at once
_documents = itertools.count()


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The standard workspace plus many memories under one topic."""
    workspace = make_workspace(tmp_path_factory.mktemp("completion"))
    for number in range(BULK):
        workspace.write(f".serena/memories/bulk/note_{number:03d}.md", f"# Bulk {number}\n")
    return workspace


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def server(request: pytest.FixtureRequest, ws: Workspace) -> AsyncIterator[Session]:
    """One server per client flavour."""
    async with session(ws, client_name=request.param) as running:
        yield running


async def complete(server: Session, marked: str) -> types.CompletionList:
    """Complete in a fresh document at the CURSOR mark; a list is expected."""
    result = await server.complete_at(f"notes/doc_{next(_documents)}.md", marked)
    assert result is not None, marked
    return result


def labels(result: types.CompletionList) -> list[str]:
    """The item labels in server order."""
    ordered = sorted(result.items, key=lambda item: item.sort_text or "")
    return [item.label for item in ordered]


def item(result: types.CompletionList, label: str) -> types.CompletionItem:
    """The item with a label, the list's shared edit range applied as a client applies it."""
    found = [i for i in result.items if i.label == label]
    assert len(found) == 1, labels(result)
    shared = result.item_defaults.edit_range if result.item_defaults else None
    if shared is None or found[0].text_edit is not None:
        return found[0]
    # LSP 3.17 itemDefaults: the item carries its text; where it goes is said once.
    new_text = found[0].text_edit_text or label
    edit: types.TextEdit | types.InsertReplaceEdit
    if isinstance(shared, types.Range):
        edit = types.TextEdit(range=shared, new_text=new_text)
    else:
        edit = types.InsertReplaceEdit(
            new_text=new_text, insert=shared.insert, replace=shared.replace
        )
    return attrs.evolve(found[0], text_edit=edit)


def edit_of(server: Session, completion: types.CompletionItem) -> types.TextEdit:
    """The item's edit, which must be a plain TextEdit."""
    assert isinstance(completion.text_edit, types.TextEdit), completion.text_edit
    return completion.text_edit


def resolves(server: Session, field: str) -> bool:
    """Whether the client asks for an item field (documentation, detail) on resolve."""
    capabilities = server.client.capabilities
    document = capabilities.text_document if capabilities else None
    completion = document.completion if document else None
    details = completion.completion_item if completion else None
    support = details.resolve_support if details else None
    return bool(support and field in support.properties)


async def detail(server: Session, completion: types.CompletionItem) -> str | None:
    """An item's detail: inline, or from completionItem/resolve (VS Code's way)."""
    if completion.detail is None:
        completion = await server.client.completion_item_resolve_async(completion)
    return completion.detail


def supports_insert_replace(server: Session) -> bool:
    """Whether the client accepts InsertReplaceEdit (VS Code does, Neovim does not)."""
    capabilities = server.client.capabilities
    document = capabilities.text_document if capabilities else None
    completion = document.completion if document else None
    details = completion.completion_item if completion else None
    return bool(details and details.insert_replace_support)


def span(server: Session, line: int, before_start: str, before_end: str) -> types.Range:
    """The range on `line` from the end of `before_start` to the end of `before_end`."""
    return types.Range(
        start=types.Position(line=line, character=server.units(before_start)),
        end=types.Position(line=line, character=server.units(before_end)),
    )


async def test_all_names_resolved_once_and_cut_to_a_limit(server: Session) -> None:
    result = await complete(server, f"See [[{CURSOR}]]")
    names = labels(result)
    assert len(names) == 50
    assert len(set(names)) == len(names)
    assert result.is_incomplete is True


async def test_items_name_folder_scope_and_preview(server: Session, ws: Workspace) -> None:
    result = await complete(server, f"[[sty{CURSOR}]]")
    assert labels(result).count("style_guide") == 1
    assert labels(result).count("global/style_guide") == 1  # another memory, not shadowed
    style = item(result, "style_guide")
    # Clients that resolve details lazily get light lists; the others get them inline.
    assert (style.documentation is None) == resolves(server, "documentation")
    assert (style.detail is None) == resolves(server, "detail")
    assert await detail(server, style) == "project · .serena/memories"
    documentation = await server.documentation(style)
    assert documentation.kind == types.MarkupKind.Markdown
    assert "Style guide (project)" in documentation.value
    assert "`.serena/memories/style_guide.md`" in documentation.value

    result = await complete(server, f"[[global/editor{CURSOR}]]")
    tips = item(result, "global/editor_tips")
    assert await detail(server, tips) == f"global · {ws.global_folder}"
    documentation = await server.documentation(tips)
    assert "tags: editor" in documentation.value
    assert "# Editor tips" in documentation.value

    result = await complete(server, f"[[team{CURSOR}]]")
    assert await detail(server, item(result, "team_rules")) == f"project · {ws.outside}"


async def test_closed_link_puts_the_cursor_after_its_brackets(server: Session) -> None:
    # VS Code closes `[[` to `[[]]` by itself; the item replaces those `]]` with its own,
    # so the cursor ends after them, not inside the link (issue 34).
    result = await complete(server, f"See [[pro{CURSOR}]] now")
    edit = edit_of(server, item(result, "project_overview"))
    assert edit.new_text == "project_overview]]"
    assert edit.range == span(server, 0, "See [[", "See [[pro]]")


async def test_open_link_gets_closing_brackets(server: Session) -> None:
    result = await complete(server, f"See [[pro{CURSOR}")
    edit = edit_of(server, item(result, "project_overview"))
    assert edit.new_text == "project_overview]]"
    assert edit.range == span(server, 0, "See [[", "See [[pro")

    result = await complete(server, f"See [[pro{CURSOR}] x")
    edit = edit_of(server, item(result, "project_overview"))
    assert edit.new_text == "project_overview]]"
    assert edit.range == span(server, 0, "See [[", "See [[pro]")

    result = await complete(server, f"[[pro{CURSOR}|the overview]]")
    assert edit_of(server, item(result, "project_overview")).new_text == "project_overview"


async def test_cursor_inside_a_name_replaces_it_where_the_client_can(server: Session) -> None:
    result = await complete(server, f"[[pro{CURSOR}ject_ovr|label]]")
    edit = item(result, "project_overview").text_edit
    insert = span(server, 0, "[[", "[[pro")
    if supports_insert_replace(server):
        assert isinstance(edit, types.InsertReplaceEdit)
        assert edit.insert == insert
        assert edit.replace == span(server, 0, "[[", "[[project_ovr")
    else:
        assert isinstance(edit, types.TextEdit)
        assert edit.range == insert
    assert edit is not None and edit.new_text == "project_overview"


async def test_cursor_inside_a_closed_name_replaces_it_and_the_brackets(server: Session) -> None:
    # The edit ends with `]]`: an insert range would keep the brackets there, doubled.
    result = await complete(server, f"[[pro{CURSOR}ject_ovr]]")
    edit = edit_of(server, item(result, "project_overview"))
    assert edit.new_text == "project_overview]]"
    assert edit.range == span(server, 0, "[[", "[[project_ovr]]")


async def test_mem_references_inside_backticks(server: Session) -> None:
    result = await complete(server, f"Read `mem:SPEC{CURSOR}` first")
    edit = edit_of(server, item(result, "SPEC_payments_api"))
    assert edit.new_text == "SPEC_payments_api"
    assert edit.range == span(server, 0, "Read `mem:", "Read `mem:SPEC")

    result = await complete(server, f"Read `mem:auth/{CURSOR}")
    edit = edit_of(server, item(result, "auth/login_flow"))
    assert edit.new_text == "auth/login_flow`"

    assert await server.complete_at(f"notes/doc_{next(_documents)}.md", f"mem:pro{CURSOR}") is None


async def test_all_caps_offers_routing_prefixes_first(server: Session) -> None:
    result = await complete(server, f"[[FEA{CURSOR}]]")
    names = labels(result)
    assert names[:2] == ["FEATURE_", "FEATURE_BUILDER_"]
    assert "FEATURE_checkout" in names
    prefix = item(result, "FEATURE_")
    assert prefix.kind == types.CompletionItemKind.Folder
    assert edit_of(server, prefix).new_text == "FEATURE_"  # no `]]`: the name goes on

    result = await complete(server, f"[[S{CURSOR}")
    assert labels(result)[0] == "SPEC_"
    assert edit_of(server, item(result, "SPEC_")).new_text == "SPEC_"

    mixed = labels(await complete(server, f"[[Fea{CURSOR}]]"))
    assert "FEATURE_" not in mixed
    assert "FEATURE_checkout" in mixed


async def test_prefix_matches_rank_before_fuzzy_ones(server: Session) -> None:
    names = labels(await complete(server, f"[[log{CURSOR}]]"))
    assert names[0] == "auth/login_flow"  # only a fuzzy match, but the only one
    names = labels(await complete(server, f"[[st{CURSOR}]]"))
    assert names[0] == "style_guide"
    fuzzy = labels(await complete(server, f"[[lgnflw{CURSOR}]]"))
    assert "auth/login_flow" in fuzzy
    assert labels(await complete(server, f"[[qqqzzz{CURSOR}]]")) == []


async def test_global_qualified_names(server: Session) -> None:
    result = await complete(server, f"[[global/sty{CURSOR}]]")
    assert labels(result) == ["global/style_guide"]
    edit = edit_of(server, item(result, "global/style_guide"))
    assert edit.new_text == "global/style_guide]]"
    assert edit.range == span(server, 0, "[[", "[[global/sty]]")


async def test_columns_count_in_the_negotiated_encoding(server: Session) -> None:
    line = "Größe 😀 [[pro"
    result = await complete(server, f"{line}{CURSOR}")
    edit = edit_of(server, item(result, "project_overview"))
    assert edit.range == span(server, 0, "Größe 😀 [[", line)


async def test_tags_in_an_inline_frontmatter_list(server: Session) -> None:
    result = await complete(server, f"---\ntags: [auth, ch{CURSOR}]\n---\n# Body\n")
    assert labels(result)[0] == "checkout"
    checkout = item(result, "checkout")
    assert checkout.detail == "tag used by 1 memory"
    edit = edit_of(server, checkout)
    assert edit.new_text == "checkout"
    assert edit.range == span(server, 1, "tags: [auth, ", "tags: [auth, ch")

    offered = labels(await complete(server, f"---\ntags: [auth, {CURSOR}]\n---\n"))
    assert "auth" not in offered
    assert {"checkout", "editor", "onboarding", "overview"} <= set(offered)


async def test_tags_in_a_block_frontmatter_list(server: Session) -> None:
    result = await complete(server, f"---\ntitle: x\ntags:\n  - auth\n  - {CURSOR}\n---\n")
    assert "auth" not in labels(result)
    assert edit_of(server, item(result, "editor")).new_text == "editor"

    result = await complete(server, f"---\ntags:\n  -{CURSOR}\n---\n")
    assert edit_of(server, item(result, "editor")).new_text == " editor"


async def test_nothing_offered_outside_a_context(server: Session) -> None:
    for marked in (
        f"plain text{CURSOR}",
        f"---\ntitle: [a{CURSOR}]\n---\n",
        f"---\ntags: [a]\n---\n- {CURSOR}\n",
        f"[[done]] and{CURSOR}",
        # In fenced code `[[` is code, as references there are not links.
        f"```python\nx = [[sty{CURSOR}\n```\n",
        f"~~~~\n```\n`mem:sty{CURSOR}\n~~~~\n",
        f"```\nnever closed\n[[sty{CURSOR}\n",
    ):
        assert await server.complete_at(f"notes/doc_{next(_documents)}.md", marked) is None


async def test_completion_resumes_after_a_code_block(server: Session) -> None:
    result = await complete(server, f"```\n[[code]]\n```\nSee [[sty{CURSOR}\n")
    assert "style_guide" in labels(result)


# ----- a client that declares nothing (`{}`) ----------------------------------------------

# Where completion is asked: links open and closed, a name replaced up to a label or with
# its brackets, `mem:` references, routing prefixes, global names, a list cut to the limit,
# columns after non-ASCII text.
BARE_CASES = (
    f"See [[{CURSOR}]]",
    f"[[sty{CURSOR}]]",
    f"See [[pro{CURSOR}",
    f"[[pro{CURSOR}ject_ovr]]",
    f"[[pro{CURSOR}ject_ovr|label]]",
    f"Read `mem:SPEC{CURSOR}` first",
    f"Read `mem:auth/{CURSOR}",
    f"[[FEA{CURSOR}]]",
    f"[[global/{CURSOR}]]",
    f"[[bulk/note_1{CURSOR}]]",
    f"Größe 😀 [[pro{CURSOR}",
)
INLINE_PREVIEWS = 5  # the first items a client without resolve gets previews of


def expanded(result: types.CompletionList, given: types.CompletionItem) -> types.TextEdit:
    """The edit a client without item defaults or insert/replace gets for an item of VS
    Code's list: the shared range (its insert part) with the item's text."""
    edit = given.text_edit
    if edit is None:
        assert result.item_defaults is not None and result.item_defaults.edit_range is not None
        shared = result.item_defaults.edit_range
        where = shared if isinstance(shared, types.Range) else shared.insert
        return types.TextEdit(range=where, new_text=given.text_edit_text or given.label)
    if isinstance(edit, types.InsertReplaceEdit):
        return types.TextEdit(range=edit.insert, new_text=edit.new_text)
    return edit


async def test_a_client_without_capabilities_gets_vs_codes_items_spelled_out(
    ws: Workspace,
) -> None:
    # The `{}` client's list is written another way (each item its own edit, its folder
    # and the first previews inline): it must say what VS Code's says, item for item.
    async with (
        session(ws) as vscode,
        session(ws, capabilities=types.ClientCapabilities(), wait_indexed=False) as bare,
    ):
        for marked in BARE_CASES:
            rich, plain = await complete(vscode, marked), await complete(bare, marked)
            assert plain.item_defaults is None, marked
            assert plain.is_incomplete == rich.is_incomplete, marked
            assert [i.label for i in plain.items] == [i.label for i in rich.items], marked
            names = 0
            for mine, theirs in zip(plain.items, rich.items, strict=True):
                assert (mine.kind, mine.sort_text, mine.filter_text) == (
                    theirs.kind,
                    theirs.sort_text,
                    theirs.filter_text,
                ), marked
                assert mine.text_edit == expanded(rich, theirs), (marked, mine.label)
                assert mine.text_edit_text is None and mine.insert_text is None
                if theirs.kind != types.CompletionItemKind.File:  # a routing prefix
                    assert mine.detail == theirs.detail and mine.documentation is None
                    continue
                resolved = await vscode.client.completion_item_resolve_async(theirs)
                assert mine.detail == resolved.detail, (marked, mine.label)
                inline = names < INLINE_PREVIEWS
                assert mine.documentation == (resolved.documentation if inline else None)
                names += 1


async def test_a_client_without_capabilities_sees_a_memory_change_in_its_item(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    workspace = make_workspace(tmp_path_factory.mktemp("bare-changes"))
    async with session(
        workspace, capabilities=types.ClientCapabilities(), wait_indexed=False
    ) as bare:
        style = item(await complete(bare, f"[[style_g{CURSOR}]]"), "style_guide")
        assert style.detail == "project · .serena/memories"
        assert isinstance(style.documentation, types.MarkupContent)
        assert "Style guide (project)" in style.documentation.value
        # Rewritten, and shadowing a memory of the same name in another folder.
        workspace.write(".serena/memories/style_guide.md", "# Style guide, rewritten\n")
        (workspace.outside / "style_guide.md").write_text("# Team style\n", encoding="utf-8")
        for _ in range(100):
            style = item(await complete(bare, f"[[style_g{CURSOR}]]"), "style_guide")
            documentation = style.documentation
            assert isinstance(documentation, types.MarkupContent)
            if "rewritten" in documentation.value and "shadows" in (style.detail or ""):
                break
            await asyncio.sleep(0.05)
        assert style.detail == "project · .serena/memories · shadows 1"
        assert "# Style guide, rewritten" in documentation.value
        assert "Style guide (project)" not in documentation.value
