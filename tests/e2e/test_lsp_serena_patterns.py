"""Serena's `.serena/project.yml` memory patterns, changed while the server runs (SPEC 2.2).

An ignored memory disappears from completion, lists and links and every command on it
is refused (`ignored`); a read-only one can be read but not written; removing the
patterns brings both back. No restart, no configuration change: only the file.
"""

from __future__ import annotations

from typing import Any

import pytest
from e2e_support import CURSOR, Session, Workspace, session
from pygls.exceptions import JsonRpcException

pytestmark = pytest.mark.asyncio

PROJECT_YML = ".serena/project.yml"
# The server looks at the pattern files once a second; allow for a loaded machine.
APPLY_TIMEOUT = 8.0


async def refusal(server: Session, command: str, arguments: dict[str, Any]) -> str:
    """The error code a command is refused with."""
    with pytest.raises(JsonRpcException) as info:
        await server.command(command, arguments)
    data = info.value.data
    assert isinstance(data, dict), info.value
    return str(data["code"])


async def offered(server: Session, typed: str) -> list[str]:
    """The memory names completion offers after `[[typed`."""
    result = await server.complete_at("notes/probe.md", f"[[{typed}{CURSOR}")
    assert result is not None
    return [item.label for item in result.items]


async def listed(server: Session) -> set[str]:
    """The names memory.list gives."""
    result = await server.command("memory.list", {})
    return {memory["name"] for memory in result["memories"]}


async def test_pattern_changes_in_project_yml_apply_live(workspace: Workspace) -> None:
    workspace.write(".serena/memories/secret_plan.md", "# Secret plan\n")
    workspace.write(".serena/memories/frozen_notes.md", "# Frozen\n")
    async with session(workspace) as server:
        assert "secret_plan" in await offered(server, "secret")
        link = server.open("notes/links.md", "See [[secret_plan]] and [[frozen_notes]].\n")
        assert await server.wait_for_codes(link, lambda codes: not codes) == []

        workspace.write(
            PROJECT_YML,
            "project_name: demo\n"
            "# Serena's own keys, as `serena project create` writes them\n"
            "ignored_memory_patterns: ['secret_.*']\n"
            'read_only_memory_patterns: ["frozen_.*"]\n',
        )
        await server.eventually(
            lambda: _without(server, "secret_plan"), "secret_plan ignored", APPLY_TIMEOUT
        )
        assert "secret_plan" not in await offered(server, "secret")
        assert await refusal(server, "memory.read", {"name": "secret_plan"}) == "ignored"
        assert await refusal(server, "memory.save", {"name": "secret_new", "content": "x"}) == (
            "ignored"
        )
        codes = await server.wait_for_codes(link, lambda codes: "ignored-link" in codes)
        assert codes == ["ignored-link"], "an ignored memory's link is not broken"

        frozen = await server.command("memory.read", {"name": "frozen_notes"})
        assert frozen["readOnly"] is True
        assert await refusal(
            server, "memory.edit", {"name": "frozen_notes", "content": "changed"}
        ) == ("read-only")
        assert workspace.path(".serena/memories/frozen_notes.md").read_text() == "# Frozen\n"

        workspace.path(PROJECT_YML).write_text("project_name: demo\n", encoding="utf-8")
        await server.eventually(
            lambda: _with(server, "secret_plan"), "secret_plan back", APPLY_TIMEOUT
        )
        assert "secret_plan" in await offered(server, "secret")
        edited = await server.command("memory.edit", {"name": "frozen_notes", "content": "new"})
        assert edited["name"] == "frozen_notes"
        assert await server.wait_for_codes(link, lambda codes: not codes) == []


async def test_a_broken_pattern_is_reported_and_the_others_still_apply(
    workspace: Workspace,
) -> None:
    workspace.write(".serena/memories/secret_plan.md", "# Secret plan\n")
    async with session(workspace) as server:
        workspace.write(PROJECT_YML, "ignored_memory_patterns: ['secret_.*', '(unclosed']\n")
        message = await server.wait_for_message("(unclosed")
        assert "not a valid regular expression" in message.message
        await server.eventually(
            lambda: _without(server, "secret_plan"), "secret_plan ignored", APPLY_TIMEOUT
        )


async def _without(server: Session, name: str) -> bool:
    return name not in await listed(server)


async def _with(server: Session, name: str) -> bool:
    return name in await listed(server)
