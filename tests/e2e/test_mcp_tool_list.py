"""The tool list an agent reads before anything else is kept small (issue 34, point 7),
through `memory-ls mcp` and the SDK's stdio client: names, titles, descriptions, input and
output schemas at most 16,000 characters of JSON, and still true of every answer."""

from __future__ import annotations

import json

from test_mcp import Workspace, mcp_server, ok
from test_mcp import ws as ws  # the fixture, shared with test_mcp

from memory_ls.mcp.schemas import TOOL_LIST_BUDGET


async def test_the_whole_tool_list_fits_the_budget(ws: Workspace) -> None:
    async with mcp_server(ws) as session:
        tools = (await session.list_tools()).tools
    size = sum(
        len(json.dumps(tool.model_dump(exclude_none=True, by_alias=True), separators=(",", ":")))
        for tool in tools
    )
    assert len(tools) == 8
    assert TOOL_LIST_BUDGET == 16_000 and size <= TOOL_LIST_BUDGET, size
    for tool in tools:
        dumped = json.dumps(tool.model_dump(exclude_none=True, by_alias=True))
        # The titles pydantic derives from names are gone; the tool's own title stays.
        assert '"title": "Memory Name"' not in dumped, tool.name
        assert tool.title and tool.description, tool.name
        # Output schemas to one level: every key of the structured content, no nesting.
        assert tool.output_schema is not None, tool.name
        assert "$defs" not in tool.output_schema, tool.name
        required = set(tool.output_schema.get("required", []))
        assert required <= set(tool.output_schema["properties"]), tool.name


async def test_the_structured_content_still_validates_against_the_cut_schemas(
    ws: Workspace,
) -> None:
    # The SDK's client validates structured content against each tool's output schema and
    # raises on a mismatch: these calls going through is the check.
    ws.primary.mkdir(parents=True, exist_ok=True)
    async with mcp_server(ws) as session:
        _, written = await ok(session, "write_memory", memory_name="auth", content="# Auth\n")
        assert written["routedBy"] == "default"
        _, read = await ok(session, "read_memory", memory_name="auth")
        assert read["version"] == written["version"]
        await ok(session, "list_memories")
        await ok(session, "search_memories", query="auth")
        await ok(session, "find_memories_about", target="src/auth.py")
        await ok(
            session, "edit_memory", memory_name="auth", needle="Auth", repl="Login", mode="literal"
        )
        await ok(session, "rename_memory", old_name="auth", new_name="login")
        await ok(session, "delete_memory", memory_name="login")
