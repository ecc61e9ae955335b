"""What agents are told for issue 34's point 7, through `memory-ls mcp` (the SDK's stdio client).

A malformed expected_version is a wrong argument, not a conflict.
"""

from __future__ import annotations

from test_mcp import Workspace, call, mcp_server, ok, refused, text_of
from test_mcp import ws as ws  # the fixture, shared with test_mcp

from memory_ls.core.storage.gate import version_of


async def test_a_malformed_version_is_a_wrong_argument_not_a_conflict(ws: Workspace) -> None:
    ws.primary.mkdir(parents=True)
    plan = ws.primary / "plan.md"
    plan.write_text("# Plan\n\nstep one\n")
    before = plan.read_bytes()
    async with mcp_server(ws) as session:
        for given in ("latest", "abc", "v1", "0" * 64, "   "):
            for tool, args in (
                ("write_memory", {"memory_name": "plan", "content": "mine\n"}),
                (
                    "edit_memory",
                    {"memory_name": "plan", "needle": "one", "repl": "1", "mode": "literal"},
                ),
                ("delete_memory", {"memory_name": "plan"}),
                ("rename_memory", {"old_name": "plan", "new_name": "plan2"}),
            ):
                error = await refused(session, tool, **args, expected_version=given)
                assert error.startswith("[invalid-arguments] "), (tool, given, error)
                assert "16 hex digits" in error and "read_memory" in error, error
                assert "changed since you read it" not in error
        assert plan.read_bytes() == before
        assert not (ws.primary / "plan2.md").exists()

        # The version read_memory answers goes through, in capitals too.
        answer = await call(session, "read_memory", memory_name="plan", include_version=True)
        assert answer.structured_content is not None
        version = answer.structured_content["version"]
        assert version == version_of(before) and f"Version: {version}" in text_of(answer)
        await ok(
            session,
            "write_memory",
            memory_name="plan",
            content="mine\n",
            expected_version=version.upper(),
        )
        assert plan.read_text() == "mine\n"
