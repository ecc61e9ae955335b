"""The MCP server (`memory-ls mcp`): agents read and write memories through the store's rules.

Serena 2.1.0's six memory tools are offered under Serena's names and parameters, so an agent
configured for Serena works unchanged; memory-ls adds optional parameters and its own tools.
Each answer is a sentence for the model (where a memory went and why, and what the store's
check finds in it) plus the SPEC 3.3 result object as structured content; read_memory and
list_memories answer first with the very text Serena gives. A refusal is a tool error whose
text starts with the SPEC code: `[invalid-name] Invalid memory name '../x': ...`.

Modules: `server` builds the server and wires the tools (`tools/`, one function each);
`answers` and `wording` say things; `stores` makes each call's store; `session` keeps the
versions this session read, against which a write without `expected_version` is checked
(a memory changed since by anyone else is not overwritten). The MCP SDK (and with
it pydantic and starlette) is imported only when the server is built, so importing this
package stays cheap.
"""
