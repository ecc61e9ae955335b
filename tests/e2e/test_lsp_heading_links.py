"""`[[note#Heading]]` links in the editor (issue 34): definition jumps to the heading,
completion after `#` offers the note's headings, F2 rename keeps the fragment, a missing
heading is a `broken-link` with the closest heading as its fix; and accepting a `[[`
completion leaves the cursor after the closing `]]` (VS Code's client and a bare one)."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from e2e_support import CLIENTS, CURSOR, Session, Workspace, make_workspace, session, wait_until
from lsprotocol import types
from navigation_support import Editor, apply_text_edits, code_actions, encoding, position, span

pytestmark = pytest.mark.asyncio(loop_scope="module")

PAYMENTS = (
    "---\ntags: [payments]\n---\n# Payments\n\nIntro.\n\n## Retry policy (v2)\n\nBack off.\n"
    "\n```\n## Not a heading\n```\n## Refunds\n"
)
_documents = itertools.count()
_TOPIC = ".serena/memories"


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The standard workspace plus a memory with headings."""
    workspace = make_workspace(tmp_path_factory.mktemp("headings"))
    workspace.write(".serena/memories/payments.md", PAYMENTS)
    for number in range(len(CLIENTS)):
        old = f"old_topic_{number}"
        workspace.write(f"{_TOPIC}/{old}.md", "# Old topic\n\n## Part one\n")
        workspace.write(f"{_TOPIC}/users_{number}.md", f"[[{old}#Part one|part]] [[{old}]]\n")
    return workspace


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def server(request: pytest.FixtureRequest, ws: Workspace) -> AsyncIterator[Session]:
    """One server per client flavour."""
    async with session(ws, client_name=request.param) as running:
        yield running


def fresh() -> str:
    """A new document's workspace-relative path (each test its own)."""
    return f"notes/heading_doc_{next(_documents)}.md"


async def definition(server: Session, uri: str, at: types.Position) -> tuple[str, types.Range]:
    """Where go-to-definition leads: (uri, range), whichever form the client takes."""
    result = await server.client.text_document_definition_async(
        types.DefinitionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=at)
    )
    assert isinstance(result, list) and len(result) == 1, result
    found = result[0]
    if isinstance(found, types.LocationLink):
        return found.target_uri, found.target_range
    assert isinstance(found, types.Location), found
    return found.uri, found.range


async def test_definition_jumps_to_the_heading(server: Session) -> None:
    target = server.workspace.path(".serena/memories/payments.md").as_uri()
    heading_line = PAYMENTS.split("\n").index("## Retry policy (v2)")
    # The heading's text in any case, or its GitHub anchor, as Obsidian and Marksman take them.
    for written in ("Retry policy (v2)", "retry POLICY (v2)", "retry-policy-v2"):
        text = f"See [[payments#{written}|the policy]].\n"
        uri = server.open(fresh(), text)
        where_uri, where = await definition(server, uri, position(server, text, "payments"))
        assert where_uri == target
        assert where.start.line == heading_line, written
        server.close(uri)
    # A heading that is not there, or a block reference: the note's top.
    text = "See [[payments#Nowhere]] and [[payments#^a1b2]].\n"
    uri = server.open(fresh(), text)
    for needle in ("payments#Nowhere", "payments#^a1b2"):
        where_uri, where = await definition(server, uri, position(server, text, needle))
        assert (where_uri, where.start.line) == (target, 0)
    server.close(uri)


async def test_the_document_link_opens_the_heading_line(server: Session) -> None:
    target = server.workspace.path(".serena/memories/payments.md").as_uri()
    text = "See [[payments#refunds]], [[payments#Nowhere]] and [[payments]].\n"
    uri = server.open(fresh(), text)
    links = await server.client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    refunds = PAYMENTS.split("\n").index("## Refunds") + 1
    # As editors read a file link's fragment: `#L12` is line 12.
    assert [link.target for link in links or []] == [f"{target}#L{refunds}", target, target]
    server.close(uri)


async def test_completion_after_the_hash_offers_the_headings(server: Session) -> None:
    result = await server.complete_at(fresh(), f"See [[payments#{CURSOR}]] now")
    assert result is not None
    ordered = sorted(result.items, key=lambda item: item.sort_text or "")
    assert [item.label for item in ordered] == ["Payments", "Retry policy (v2)", "Refunds"]

    text = "See [[payments#re]] now"
    result = await server.complete_at(fresh(), f"See [[payments#re{CURSOR}]] now")
    assert result is not None
    ordered = sorted(result.items, key=lambda item: item.sort_text or "")
    assert [item.label for item in ordered] == ["Retry policy (v2)", "Refunds"]
    edit = ordered[0].text_edit
    assert isinstance(edit, types.TextEdit)
    # The heading and the closing brackets, over the typed part and the `]]` there.
    assert edit.new_text == "Retry policy (v2)]]"
    assert edit.range == span(server, text, "re]]", "re]]")


async def test_a_missing_heading_is_a_broken_link_with_the_closest_as_fix(
    server: Session,
) -> None:
    editor = Editor(server)
    path = server.workspace.path(fresh())
    text = (
        "Good [[payments#Refunds]] and [[payments#retry-policy-v2]] and [[payments#^blk]].\n"
        "Bad [[payments#Retyr policy (v2)]] and [[payments#Chargebacks]].\n"
    )
    uri = editor.open(path, text)

    def broken() -> list[types.Diagnostic]:
        found = editor.publications(path)
        last = found[-1].diagnostics if found else []
        return [d for d in last if d.code == "broken-link"]

    await wait_until(server.client, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, lambda: bool(broken()))
    diagnostics = sorted(broken(), key=lambda d: d.range.start.character)
    assert [d.range for d in diagnostics] == [
        span(server, text, "Retyr policy (v2)"),
        span(server, text, "Chargebacks"),
    ]
    assert diagnostics[0].message == (
        'Memory payments has no heading "Retyr policy (v2)"; the link opens the top of the '
        'note. Did you mean "Retry policy (v2)"?'
    )
    assert 'no heading "Chargebacks"' in diagnostics[1].message
    assert "Did you mean" not in diagnostics[1].message

    actions = await code_actions(
        server,
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostics[0].range,
            context=types.CodeActionContext(diagnostics=[diagnostics[0]]),
        ),
    )
    titles = [a.title for a in actions if isinstance(a, types.CodeAction)]
    # Not "Create memory": the memory exists; only its heading is missing.
    assert titles == ["Change to #Retry policy (v2)"]
    fix = next(a for a in actions if isinstance(a, types.CodeAction))
    assert fix.edit is not None
    editor.apply(fix.edit)
    await wait_until(
        server.client,
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
        lambda: len(broken()) == 1,
        lambda: f"{broken()}",
    )
    assert "[[payments#Retry policy (v2)]]" in path.read_text()
    editor.close_all()


async def test_a_heading_added_on_disk_mends_the_link(server: Session) -> None:
    ws = server.workspace
    ws.write(".serena/memories/ledger.md", "# Ledger\n")
    server.notify_files((ws.path(".serena/memories/ledger.md"), types.FileChangeType.Created))
    uri = server.open(fresh(), "See [[ledger#Closing]].\n")
    await server.wait_for_codes(uri, lambda codes: codes == ["broken-link"])
    ws.write(".serena/memories/ledger.md", "# Ledger\n\n## Closing\n")
    server.notify_files((ws.path(".serena/memories/ledger.md"), types.FileChangeType.Changed))
    await server.wait_for_codes(uri, lambda codes: codes == [])
    server.close(uri)


async def test_rename_keeps_the_heading(server: Session) -> None:
    ws = server.workspace
    # The workspace is shared by both client flavours: each renames a memory of its own.
    number = next(n for n in range(len(CLIENTS)) if ws.path(f"{_TOPIC}/old_topic_{n}.md").exists())
    old, new = f"old_topic_{number}", f"new_topic_{number}"
    users = ws.path(f"{_TOPIC}/users_{number}.md")
    editor = Editor(server)
    text = f"Draft: [[{old}#Part one]]\n"
    draft = ws.path(fresh())
    uri = editor.open(draft, text)
    edit = await server.client.text_document_rename_async(
        types.RenameParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=position(server, text, old),
            new_name=new,
        )
    )
    assert edit is not None
    editor.apply(edit)
    assert ws.path(f".serena/memories/{new}.md").is_file()
    assert users.read_text() == f"[[{new}#Part one|part]] [[{new}]]\n"
    assert editor.documents[draft][0] == f"Draft: [[{new}#Part one]]\n"
    editor.close_all()


# ----- the cursor after an accepted `[[` completion -------------------------------------


@pytest.mark.parametrize("flavour", ["visual-studio-code", "bare"])
async def test_accepting_a_name_leaves_the_cursor_after_the_brackets(
    ws: Workspace, flavour: str
) -> None:
    # "bare": a client that says nothing of what it supports (`{}`: no snippets, no
    # insert/replace, no item defaults).
    capabilities = types.ClientCapabilities() if flavour == "bare" else None
    async with session(ws, capabilities=capabilities, wait_indexed=flavour != "bare") as server:
        # What VS Code has after typing `[[pay`: its language configuration closed `]]`.
        for before, after in (("See [[pay", "]] now"), ("See [[pay", ""), ("[[", "]]")):
            result = await server.complete_at(fresh(), f"{before}{CURSOR}{after}")
            assert result is not None
            found = [i for i in result.items if i.label == "payments"]
            assert len(found) == 1, [i.label for i in result.items]
            edit = _edit_of(result, found[0])
            assert edit.new_text == "payments]]"
            text = before + after
            applied = apply_text_edits(text, [edit], encoding(server))
            assert applied == before[: before.rindex("[[") + 2] + "payments]]" + after[2:]
            # The client puts the cursor at the end of the inserted text: after the `]]`.
            end = edit.range.start.character + server.units(edit.new_text)
            assert applied[:end].endswith("]]")
        # A routing prefix is not a whole name: the cursor stays before the `]]`.
        result = await server.complete_at(fresh(), f"[[FEA{CURSOR}]]")
        assert result is not None
        prefix = _edit_of(result, next(i for i in result.items if i.label == "FEATURE_"))
        assert prefix.new_text == "FEATURE_"
        assert prefix.range == types.Range(
            start=types.Position(line=0, character=2), end=types.Position(line=0, character=5)
        )


def _edit_of(result: types.CompletionList, item: types.CompletionItem) -> types.TextEdit:
    """An item's edit, the list's shared range applied as a client applies it."""
    if isinstance(item.text_edit, types.TextEdit):
        return item.text_edit
    shared = result.item_defaults.edit_range if result.item_defaults else None
    assert isinstance(shared, types.Range), (item, result.item_defaults)
    return types.TextEdit(range=shared, new_text=item.text_edit_text or item.label)
