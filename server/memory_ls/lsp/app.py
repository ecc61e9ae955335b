"""The composition root of the language server: every feature registered on the shared
state (lsp/server.py), and `serve`. Nothing in lsp/ imports this module (an
import-linter contract in pyproject.toml checks it), so the features and the state they
share form no import circle.
"""

from __future__ import annotations

import logging
import os

from memory_ls.config import Layer
from memory_ls.lsp import (
    agent_context,
    agents,
    code_actions,
    commands,
    completion,
    configuration,
    definition,
    diagnostics,
    graph,
    hover,
    indexing,
    journal,
    lifecycle,
    link_view,
    links,
    patterns,
    project,
    references,
    rename,
    repository,
    symbols,
    watching,
    workspace_diagnostics,
)
from memory_ls.lsp.server import (
    EXIT_GRACE_SECONDS,
    LOG_LEVEL_ENV,
    MemoryServer,
    exit_without_waiting,
    quiet_refusals,
)


def build_server(cli: Layer) -> MemoryServer:
    """A server with every feature registered."""
    server = MemoryServer(cli)
    for feature in (
        lifecycle,
        configuration,
        # Watching before indexing: each new configuration is watched before it is listed.
        watching,
        indexing,
        patterns,
        # Other agents' files, listed before the features that read them.
        agents,
        diagnostics,
        workspace_diagnostics,
        completion,
        commands,
        hover,
        definition,
        links,
        link_view,
        agent_context,
        references,
        symbols,
        rename,
        repository,
        code_actions,
        journal,
        graph,
        project,
    ):
        feature.register(server)
    return server


def serve(cli: Layer, tcp: tuple[str, int] | None = None) -> None:
    """Run the language server over stdio, or over TCP when `tcp` is (host, port)."""
    logging.basicConfig(
        level=os.environ.get(LOG_LEVEL_ENV, "WARNING"),
        format="memory-ls: %(levelname)s: %(message)s",
    )
    logging.getLogger("pygls.protocol.json_rpc").addFilter(quiet_refusals)
    server = build_server(cli)
    try:
        if tcp is None:
            from memory_ls.lsp.transport import start_stdio

            start_stdio(server)
        else:
            server.start_tcp(*tcp)
    finally:
        server.store_pool.shutdown(wait=False, cancel_futures=True)
    exit_without_waiting(EXIT_GRACE_SECONDS)
