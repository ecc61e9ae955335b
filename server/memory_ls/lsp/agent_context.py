"""`memory.context` over `workspace/executeCommand`: what an agent loads working on a
document, for an editor's view. The answer is `memory-ls context --json`'s
(core/operations/context/: the files in load order with their estimated tokens and
cuts, the total against the budget), for the file the URI names, relative to the
store's root; without a URI, a session at the root before any file is touched.

The files are read from disk, as the agent reads them (not the editor's unsaved text);
the server's environment (HOME, CLAUDE_CONFIG_DIR, CODEX_HOME…) says where the user's
files are. Arguments are checked and refusals sent as the store commands' are
(lsp/commands.py).
"""

from __future__ import annotations

import os
from typing import Any

from pygls.uris import to_fs_path

from memory_ls.core.operations.context import DEFAULT_BUDGET, agent_context
from memory_ls.core.rules.errors import InvalidArguments, MemoryStoreError
from memory_ls.lsp.commands import INTEGER, STRING, Command, check_arguments, refusal
from memory_ls.lsp.server import MemoryServer

COMMAND = "memory.context"
DEFAULT_AGENT = "claude"
# Only the keys are checked here; the call is this module's own.
_ARGUMENTS = Command({}, {"uri": STRING, "agent": STRING, "budget": INTEGER}, lambda s, a: {})


def register(server: MemoryServer) -> None:
    """Register the `memory.context` command."""

    @server.command(COMMAND)
    async def memory_context(ls: MemoryServer, *arguments: object) -> dict[str, Any]:
        try:
            args = check_arguments(COMMAND, _ARGUMENTS, arguments)
            file = _file(args["uri"]) if "uri" in args else None
            return await ls.in_store_thread(
                context_answer,
                ls,
                args.get("agent", DEFAULT_AGENT),
                file,
                args.get("budget", DEFAULT_BUDGET),
            )
        except MemoryStoreError as error:
            raise refusal(error) from error


def _file(uri: str) -> str:
    """The path of a `file:` URI; invalid-arguments for any other."""
    raw = to_fs_path(uri) if uri.startswith("file:") else None
    if not raw:
        raise InvalidArguments(f"{COMMAND} answers for files on disk; {uri!r} is no file: URI.")
    return os.path.normpath(os.path.abspath(raw))


def context_answer(ls: MemoryServer, agent: str, file: str | None, budget: int) -> dict[str, Any]:
    """The answer of `memory.context` (blocking: reads the agent's files)."""
    store = ls.store
    found = agent_context(agent, store.config.root, file, budget=budget, store=store)
    return found.to_json()
