"""Quick fixes (SPEC 3.4): move a misrouted memory, create the memory behind a broken link,
"did you mean" for a mistyped name or prefix. Each fix is applied as the client would
(workspace edit or command) and must leave no diagnostics behind."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from e2e_support import CLIENTS, Session, Workspace, make_workspace, session, wait_until
from lsprotocol import types
from navigation_support import Editor, code_actions, span, store_of

from memory_ls.core import Store, check_store

pytestmark = pytest.mark.asyncio(loop_scope="module")

TYPO = "# Typo\nSee [[style_guid]] for the rules.\n"
PREFIX = "# Prefix\n😀 Checkout: `mem:FEATUER_checkout`.\n"
CREATE = "# Create\nNext: [[SPEC_new_contract]] and [[global/fresh_idea|my idea]].\n"
LEFTOVERS = "# Left\n[[SPCE_payments_api]] [[project_overviw]] [[new_plain_note]]\n"


def make_fixes_workspace(base: Path) -> Workspace:
    """The standard workspace (without its shadowed global memory) plus problems to fix."""
    ws = make_workspace(base)
    (ws.global_folder / "style_guide.md").unlink()
    ws.write(".serena/memories/FEATURE_search.md", "# Search\n")
    ws.write(".serena/memories/fix_typo.md", TYPO)
    ws.write(".serena/memories/fix_prefix.md", PREFIX)
    ws.write(".serena/memories/fix_create.md", CREATE)
    ws.write("shared/spec/SPEC_left.md", LEFTOVERS)
    return ws


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Session]:
    """One server and workspace per client flavour."""
    ws = make_fixes_workspace(tmp_path_factory.mktemp("fixes"))
    async with session(ws, client_name=request.param) as running:
        yield running


@pytest.fixture
def editor(server: Session) -> Any:
    """An editor whose documents are closed after the test."""
    opened = Editor(server)
    yield opened
    opened.close_all()


def store(server: Session) -> Store:
    """The store on disk, configured as the server is."""
    return store_of(server.workspace, server.workspace.init_options())


async def problems(server: Session, editor: Editor, path: Path) -> list[types.Diagnostic]:
    """The diagnostics published for the version of a document the editor has open."""
    await wait_until(
        server.client,
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
        lambda: bool(editor.publications(path)),
    )
    return list(editor.publications(path)[-1].diagnostics)


async def quick_fixes(
    server: Session, uri: str, diagnostics: Sequence[types.Diagnostic]
) -> list[types.CodeAction]:
    """The code actions for diagnostics, as the client asks for them."""
    result = await code_actions(
        server,
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostics[0].range,
            context=types.CodeActionContext(diagnostics=list(diagnostics)),
        ),
    )
    actions = [a for a in result if isinstance(a, types.CodeAction)]
    assert len(actions) == len(result), result
    assert all(a.kind == types.CodeActionKind.QuickFix for a in actions), actions
    return actions


def titled(actions: list[types.CodeAction], title: str) -> types.CodeAction:
    """The action with this title."""
    found = [a for a in actions if a.title == title]
    assert len(found) == 1, [a.title for a in actions]
    return found[0]


async def apply(server: Session, editor: Editor, action: types.CodeAction) -> list[Path]:
    """Apply an action as the client does: its edit, then its command."""
    touched = editor.apply(action.edit) if action.edit is not None else []
    if action.command is not None:
        result = await server.command(action.command.command, *(action.command.arguments or []))
        touched.append(Path(result["path"]))
    return touched


def left(server: Session, paths: Sequence[Path] = ()) -> list[str]:
    """Diagnostics the store still has (in these files, or anywhere)."""
    found = check_store(store(server), [str(p) for p in paths])
    return [f"{d.path}:{d.line}: {d.code}" for d in found]


async def test_did_you_mean_for_a_one_letter_typo_in_a_name(
    server: Session, editor: Editor
) -> None:
    path = server.workspace.path(".serena/memories/fix_typo.md")
    uri = editor.open(path)
    actions = await quick_fixes(server, uri, await problems(server, editor, path))
    assert [a.title for a in actions] == [
        "Create memory style_guid in .serena/memories",
        "Change to style_guide",
    ]
    change = titled(actions, "Change to style_guide")
    assert change.is_preferred
    assert change.diagnostics is not None and [d.code for d in change.diagnostics] == [
        "broken-link"
    ]
    await apply(server, editor, change)
    assert path.read_text() == TYPO.replace("style_guid]]", "style_guide]]")
    await server.wait_for_codes(uri, lambda codes: not codes)
    assert left(server, [path]) == []


async def test_did_you_mean_for_a_one_letter_typo_in_a_prefix(
    server: Session, editor: Editor
) -> None:
    path = server.workspace.path(".serena/memories/fix_prefix.md")
    uri = editor.open(path)
    diagnostics = await problems(server, editor, path)
    assert sorted(str(d.code) for d in diagnostics) == ["broken-link", "unknown-prefix"]
    actions = await quick_fixes(server, uri, diagnostics)
    change = titled(actions, "Change to FEATURE_checkout")
    # One fix for both problems of the reference.
    assert change.diagnostics is not None
    assert sorted(str(d.code) for d in change.diagnostics) == ["broken-link", "unknown-prefix"]
    edits = _text_edits(change)
    assert [(e.range, e.new_text) for e in edits] == [
        (span(server, PREFIX, "FEATUER_checkout"), "FEATURE_checkout")
    ]
    await apply(server, editor, change)
    await server.wait_for_codes(uri, lambda codes: not codes)
    assert left(server, [path]) == []


async def test_create_the_memories_behind_broken_links(server: Session, editor: Editor) -> None:
    ws = server.workspace
    path = ws.path(".serena/memories/fix_create.md")
    uri = editor.open(path)
    diagnostics = await problems(server, editor, path)
    assert [d.code for d in diagnostics] == ["broken-link", "broken-link"]
    actions = await quick_fixes(server, uri, diagnostics)
    create_spec = titled(actions, "Create memory SPEC_new_contract in shared/spec")
    create_global = titled(actions, f"Create memory global/fresh_idea in {ws.global_folder}")
    created = [
        *await apply(server, editor, create_spec),
        *await apply(server, editor, create_global),
    ]
    assert created == [
        ws.path("shared/spec/SPEC_new_contract.md"),
        ws.global_folder / "fresh_idea.md",
    ]
    await server.wait_for_codes(uri, lambda codes: not codes)
    assert left(server, [path, *created]) == []


async def test_move_a_misrouted_memory_where_its_name_routes(
    server: Session, editor: Editor
) -> None:
    ws = server.workspace
    old = ws.path(".serena/memories/FEATURE_search.md")
    uri = editor.open(old)
    diagnostics = await problems(server, editor, old)
    assert [d.code for d in diagnostics] == ["misrouted"]
    (move,) = await quick_fixes(server, uri, diagnostics)
    assert move.title == "Move FEATURE_search to shared/feature"
    assert move.is_preferred and move.command is None
    assert move.edit is not None and move.edit.document_changes is not None
    (rename,) = move.edit.document_changes
    assert isinstance(rename, types.RenameFile)
    assert rename.new_uri == ws.path("shared/feature/FEATURE_search.md").as_uri()
    touched = await apply(server, editor, move)
    new = ws.path("shared/feature/FEATURE_search.md")
    assert touched == [old, new] and new.read_text() == "# Search\n"
    await server.wait_for_codes(new.as_uri(), lambda codes: True)
    assert server.codes(new.as_uri()) == []
    assert left(server, [new]) == []


async def test_fixes_applied_one_by_one_leave_a_store_without_diagnostics(
    server: Session, editor: Editor
) -> None:
    """Whatever is still wrong in the store gets fixed by its first quick fix."""
    for _round in range(10):
        remaining = check_store(store(server))
        if not remaining:
            break
        path = Path(remaining[0].path)
        uri = editor.open(path)
        actions = await quick_fixes(server, uri, await problems(server, editor, path))
        assert actions, f"no fix for {left(server)}"
        preferred = [a for a in actions if a.is_preferred] or actions
        await apply(server, editor, preferred[0])
        editor.close_all()
    assert left(server) == []
    assert (server.workspace.path("shared/spec/SPEC_left.md")).read_text() == (
        "# Left\n[[SPEC_payments_api]] [[project_overview]] [[new_plain_note]]\n"
    )
    assert server.workspace.path(".serena/memories/new_plain_note.md").exists()


def _text_edits(action: types.CodeAction) -> list[types.TextEdit]:
    """The text edits of an action that edits one document."""
    assert action.edit is not None
    if action.edit.changes:
        (edits,) = action.edit.changes.values()
        return list(edits)
    assert action.edit.document_changes is not None
    (change,) = action.edit.document_changes
    assert isinstance(change, types.TextDocumentEdit)
    return [e for e in change.edits if isinstance(e, types.TextEdit)]
