"""The MCP tools, one function each; `memory_ls.mcp.server` wires them into the server."""
