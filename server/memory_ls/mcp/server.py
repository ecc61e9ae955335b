"""Builds the MCP server: the tools wired in under their (optionally prefixed) names."""

import inspect
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memory_ls import __version__
from memory_ls.config import ConfigError, Layer
from memory_ls.core.rules.errors import InvalidArguments
from memory_ls.core.services.search import start_file_helper
from memory_ls.mcp.answers import explain_validation, refusal
from memory_ls.mcp.schemas import compact_input_schema, compact_output_schema
from memory_ls.mcp.stores import StoreFactory
from memory_ls.mcp.wording import (
    DELETE_DESCRIPTION,
    EDIT_DESCRIPTION,
    LIST_DESCRIPTION,
    READ_DESCRIPTION,
    RENAME_DESCRIPTION,
    SEARCH_DESCRIPTION,
    WRITE_DESCRIPTION,
    instructions,
)

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.types import CallToolResult, InputRequiredResult
    from mcp.types import Tool as MCPTool

SERVER_NAME = "memory-ls"
# A client name is cut to this many characters in the journal's source (`mcp:<name>`).
MAX_CLIENT_NAME = 64

# Serena's memory tools (serena/tools/memory_tools.py, 2.1.0), offered under these names.
SERENA_TOOLS = (
    "write_memory",
    "read_memory",
    "list_memories",
    "delete_memory",
    "rename_memory",
    "edit_memory",
)
TOOLS = (*SERENA_TOOLS, "search_memories", "find_memories_about")
# Tool names as the MCP specification allows them (at most 128 characters).
_TOOL_PREFIX = re.compile(r"[A-Za-z0-9_.-]{0,64}")


def run_mcp(layer: Layer, root: str, tool_prefix: str = "") -> None:
    """Serve the MCP tools over stdio on the store the project file found from `root`
    defines, under the CLI flags in `layer`."""
    # Before any thread: the first listing of the folders (and, where they cannot be
    # watched, every call) states the memory files in two processes.
    start_file_helper()
    server = build_server(layer, root, tool_prefix, watch=True)
    server.run("stdio")


def check_tool_prefix(prefix: str) -> None:
    """Refuse a --tool-prefix that would make tool names the MCP specification does not allow."""
    if not _TOOL_PREFIX.fullmatch(prefix):
        raise ConfigError(
            "--tool-prefix",
            [f"{prefix!r} is not a tool-name prefix: use up to 64 of A-Z a-z 0-9 _ - ."],
        )


def journal_source(context: Any) -> str:
    """`mcp:<name>` of the client that called (its `initialize` clientInfo), else `mcp`."""
    try:
        params = context.request_context.session.client_params
        name = str(params.client_info.name).strip()
    except (AttributeError, ValueError):  # no request context, or no client info
        return "mcp"
    # One short line: it is shown in lists and history.
    name = " ".join(name.split())[:MAX_CLIENT_NAME]
    return f"mcp:{name}" if name else "mcp"


def build_server(
    layer: Layer, root: str, tool_prefix: str = "", *, watch: bool = False
) -> "MCPServer[Any]":
    """An MCP server with the memory tools (names prefixed), on the store at `root`;
    `watch`: its folders watched and its indexes loaded from now on (core/operations/live.py)."""
    check_tool_prefix(tool_prefix)
    stores = StoreFactory(layer, os.path.abspath(os.path.expanduser(root)), watch=watch)
    # Before the SDK is imported: the store is listed meanwhile.
    stores.start()

    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations
    from pydantic import ValidationError

    from memory_ls.mcp.tools import about, listing, managing, reading, searching, writing
    from memory_ls.mcp.tools.context import ToolContext

    names = {tool: tool_prefix + tool for tool in TOOLS}
    context = ToolContext(stores, names)

    # The argument names of each tool, to refuse ones the tool does not take.
    known_arguments: dict[str, frozenset[str]] = {}

    class MemoryMCPServer(MCPServer[Any]):
        """MCPServer whose argument problems are `invalid-arguments` refusals, and whose
        tool list is kept small (mcp/schemas.py)."""

        async def list_tools(self) -> "list[MCPTool]":
            """The tools as offered: schemas without derived titles, outputs to one level."""
            return [
                tool.model_copy(
                    update={
                        "input_schema": compact_input_schema(tool.input_schema),
                        "output_schema": compact_output_schema(tool.output_schema),
                    }
                )
                for tool in await self.full_tools()
            ]

        async def full_tools(self) -> "list[MCPTool]":
            """The tools with the schemas in full, as the documentation shows them."""
            return await super().list_tools()

        async def call_tool(
            self,
            name: str,
            arguments: dict[str, Any],
            context: "Context[Any, Any] | None" = None,
        ) -> "CallToolResult | InputRequiredResult":
            """Run a tool; a misspelt or mistyped argument is refused, never guessed at."""
            stores.source = journal_source(context)
            known = known_arguments.get(name)
            unknown = sorted(set(arguments) - known) if known is not None else []
            if known is not None and unknown:
                return refusal(
                    InvalidArguments(
                        f"{name} does not take {', '.join(unknown)} "
                        f"(its arguments: {', '.join(sorted(known))})."
                    )
                )
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                # The SDK's own text is a pydantic dump; say which arguments are wrong instead.
                if isinstance(exc.__cause__, ValidationError):
                    return refusal(InvalidArguments(explain_validation(name, exc.__cause__)))
                raise

    server = MemoryMCPServer(
        SERVER_NAME,
        title="memory-ls",
        version=__version__,
        instructions=instructions(stores.config(), names),
        # Refusals are answers to the agent, not server trouble: keep stderr for warnings.
        log_level="WARNING",
    )

    def tool(
        make: Callable[[ToolContext], Callable[..., Any]],
        title: str,
        description: str,
        *,
        read_only: bool,
        destructive: bool = False,
        idempotent: bool = False,
    ) -> None:
        fn = make(context)
        name = names[fn.__name__]
        server.add_tool(
            fn,
            name=name,
            title=title,
            description=description.format(**names),
            # The title once, on the tool: the list is read into every agent's context.
            annotations=ToolAnnotations(
                read_only_hint=read_only,
                destructive_hint=None if read_only else destructive,
                idempotent_hint=idempotent,
                open_world_hint=False,
            ),
        )
        known_arguments[name] = frozenset(inspect.signature(fn).parameters)

    write = (writing.write_memory, "Write memory", WRITE_DESCRIPTION)
    tool(*write, read_only=False, destructive=True, idempotent=True)
    tool(reading.read_memory, "Read memory", READ_DESCRIPTION, read_only=True)
    tool(listing.list_memories, "List memories", LIST_DESCRIPTION, read_only=True)
    delete = (managing.delete_memory, "Delete memory", DELETE_DESCRIPTION)
    tool(*delete, read_only=False, destructive=True, idempotent=True)
    rename = (managing.rename_memory, "Rename memory", RENAME_DESCRIPTION)
    tool(*rename, read_only=False, destructive=True)
    tool(writing.edit_memory, "Edit memory", EDIT_DESCRIPTION, read_only=False, destructive=True)
    tool(searching.search_memories, "Search memories", SEARCH_DESCRIPTION, read_only=True)
    find_about = (about.find_memories_about, "Find memories about", about.ABOUT_DESCRIPTION)
    tool(*find_about, read_only=True)
    return server
