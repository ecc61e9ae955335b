"""Configuration (SPEC 3.6): sources, precedence, runtime changes and bad settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_support import Session, Workspace, session, wait_until
from lsprotocol import types

pytestmark = pytest.mark.asyncio


async def routed_folder(server: Session, name: str) -> str:
    """The folder a new memory of this name would go to, relative to the root."""
    result = await server.command("memory.route", {"name": name})
    folder = Path(result["folder"])
    root = server.workspace.root
    return str(folder.relative_to(root)) if folder.is_relative_to(root) else str(folder)


def probe(server: Session) -> str:
    """Open a document with a broken link, to see the configured severity."""
    return server.open("notes/probe.md", "[[nope]]\n")


async def test_cli_flags_alone_configure_the_store(workspace: Workspace) -> None:
    flags = ("--additional-folders", "shared/spec", "--global-folder", str(workspace.outside))
    async with session(workspace, init_options={}, server_args=flags) as server:
        assert await routed_folder(server, "SPEC_x") == "shared/spec"
        assert await routed_folder(server, "FEATURE_x") == ".serena/memories"
        assert await routed_folder(server, "global/x") == str(workspace.outside)


async def test_flags_over_workspace_over_init_options_key_by_key(
    workspace: Workspace,
) -> None:
    # Issue 31's precedence: command-line flags, then the editor's settings (workspace
    # configuration over initializationOptions), then the project file, then defaults.
    flags = ("--global-folder", str(workspace.outside), "--max-memory-bytes", "50")
    init = {"additionalFolders": ["shared/feature"], "maxMemoryBytes": 100, "primaryFolder": "x"}
    workspace_settings = {"maxMemoryBytes": 70, "primaryFolder": "notes"}
    async with session(
        workspace, init_options=init, configuration=workspace_settings, server_args=flags
    ) as server:
        assert await routed_folder(server, "FEATURE_x") == "shared/feature"  # init kept
        assert await routed_folder(server, "SPEC_x") == "notes"  # workspace over init
        assert await routed_folder(server, "global/x") == str(workspace.outside)  # flags
        with pytest.raises(Exception, match="limit \\(maxMemoryBytes\\) is 50"):
            await server.command("memory.save", {"name": "big", "content": "x" * 60})


async def routes_to(server: Session, name: str, folder: str) -> None:
    """Wait until a new memory of this name routes to `folder`."""

    async def check() -> bool:
        return await routed_folder(server, name) == folder

    await server.eventually(check, f"{name} never routed to {folder}")


async def severity_becomes(
    server: Session, document: str, severity: types.DiagnosticSeverity | None
) -> None:
    """Wait until the document's one diagnostic has this severity (None: no diagnostic)."""

    def severities() -> list[types.DiagnosticSeverity | None]:
        return [d.severity for d in server.client.diagnostics.get(document, ())]

    await wait_until(
        server.client,
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
        lambda: severities() == ([] if severity is None else [severity]),
        lambda: f"severities of {document}: {severities()}",
    )


async def test_a_null_section_keeps_the_lower_layers(workspace: Workspace) -> None:
    async with session(workspace, configuration=None) as server:
        assert await routed_folder(server, "FEATURE_x") == "shared/feature"
        server.change_configuration({"additionalFolders": ["shared/spec"]})
        await routes_to(server, "FEATURE_x", ".serena/memories")
        server.change_configuration(None)
        await routes_to(server, "FEATURE_x", "shared/feature")


@pytest.mark.parametrize("client_name", ["visual-studio-code", "neovim"])
async def test_changes_at_run_time_reach_routing_completion_and_diagnostics(
    workspace: Workspace, client_name: str
) -> None:
    async with session(workspace, client_name=client_name) as server:
        document = probe(server)
        await severity_becomes(server, document, types.DiagnosticSeverity.Warning)

        server.change_configuration({"additionalFolders": ["shared/spec"]})
        # SPEC_x went to shared/spec before the change too: FEATURE_x tells it is applied.
        await routes_to(server, "FEATURE_x", ".serena/memories")
        assert await routed_folder(server, "SPEC_x") == "shared/spec"
        await server.indexed(2)  # the folders changed, so the store was indexed again
        completion = await server.complete_at("notes/c.md", "[[team¦]]")
        assert completion is not None
        assert "team_rules" not in [item.label for item in completion.items]

        server.change_configuration({"diagnostics": {"broken-link": "error"}})
        await severity_becomes(server, document, types.DiagnosticSeverity.Error)
        server.change_configuration({"diagnostics": {"broken-link": "off"}})
        await severity_becomes(server, document, None)


async def test_pushed_settings_apply_when_the_client_cannot_be_asked(
    workspace: Workspace,
) -> None:
    # Neovim 0.7 does not announce workspace/configuration: only the pushed payload counts.
    async with session(workspace, client_name="neovim@v0.7.0") as server:
        document = probe(server)
        await severity_becomes(server, document, types.DiagnosticSeverity.Warning)
        pushed = {"memoryLs": {"diagnostics": {"broken-link": "hint"}}}
        server.change_configuration(None, settings=pushed)
        await severity_becomes(server, document, types.DiagnosticSeverity.Hint)


async def test_invalid_settings_are_shown_and_the_previous_ones_kept(
    workspace: Workspace,
) -> None:
    async with session(workspace) as server:
        server.change_configuration({"additionalFolders": ["shared/spec"], "maxMemoryBytes": -1})
        message = await server.wait_for_message("maxMemoryBytes")
        assert message.type == types.MessageType.Error
        assert "previous settings stay in effect" in message.message
        assert await routed_folder(server, "FEATURE_x") == "shared/feature"


async def test_invalid_initialization_options_fall_back_to_defaults(
    workspace: Workspace,
) -> None:
    async with session(workspace, init_options={"layout": "emacs"}) as server:
        message = await server.wait_for_message("layout")
        assert message.type == types.MessageType.Error
        assert await routed_folder(server, "x") == ".serena/memories"


async def test_one_warning_per_missing_folder_and_per_unknown_key(
    workspace: Workspace,
) -> None:
    options = workspace.init_options(colour="red")
    options["additionalFolders"].append("shared/missing")
    async with session(workspace, init_options=options) as server:
        document = probe(server)
        for severity in (types.DiagnosticSeverity.Hint, types.DiagnosticSeverity.Error):
            name = "hint" if severity == types.DiagnosticSeverity.Hint else "error"
            server.change_configuration({"diagnostics": {"broken-link": name}, "colour": "blue"})
            await severity_becomes(server, document, severity)
        missing = server.messages_with("shared/missing")
        assert len(missing) == 1
        assert "does not exist" in missing[0]
        unknown = server.messages_with("Ignored unknown settings")
        assert len(unknown) == 2  # one per source: initializationOptions, workspace
        assert all(m.type == types.MessageType.Warning for m in server.client.messages)
