"""Settings from the client (SPEC 3.6): initializationOptions, workspace/configuration and
workspace/didChangeConfiguration, over the server's CLI flags."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

from lsprotocol import types

from memory_ls.config import (
    CONFIG_SECTION,
    INITIALIZATION_OPTIONS_SOURCE,
    WORKSPACE_CONFIGURATION_SOURCE,
    ConfigError,
    Layer,
    parse_layer,
)
from memory_ls.lsp.server import MemoryServer

# A client that never answers workspace/configuration must not stall the start.
PULL_TIMEOUT_SECONDS = 5.0

logger = logging.getLogger(__name__)


def register(server: MemoryServer) -> None:
    """Register the configuration handlers."""

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: MemoryServer, params: types.DidChangeConfigurationParams
    ) -> None:
        pushed = params.settings
        pushed_layer: Layer | None = None
        if isinstance(pushed, Mapping) and CONFIG_SECTION in pushed:
            pushed_layer = _parse(ls, pushed[CONFIG_SECTION], WORKSPACE_CONFIGURATION_SOURCE)
        if supports_pull(ls):
            pulled = await _pull_raw(ls)
            if pulled is not None or pushed_layer is None:
                pushed_layer = _parse(ls, pulled, WORKSPACE_CONFIGURATION_SOURCE)
        if pushed_layer is not None:
            ls.workspace_layer = pushed_layer
        ls.reconfigure()


def supports_pull(ls: MemoryServer) -> bool:
    """Whether the client answers workspace/configuration."""
    workspace = ls.client_capabilities.workspace
    return bool(workspace and workspace.configuration)


def load_initialization_options(ls: MemoryServer, options: object) -> None:
    """Take the settings the client sent with initialize."""
    layer = _parse(ls, options, INITIALIZATION_OPTIONS_SOURCE)
    if layer is not None:
        ls.init_layer = layer


async def pull(ls: MemoryServer) -> None:
    """Ask the client for the `memoryLs` section, where it can answer."""
    if not supports_pull(ls):
        return
    layer = _parse(ls, await _pull_raw(ls), WORKSPACE_CONFIGURATION_SOURCE)
    if layer is not None:
        ls.workspace_layer = layer


async def _pull_raw(ls: MemoryServer) -> object:
    """The raw `memoryLs` section (None when the client has none or fails to answer)."""
    request = types.ConfigurationParams(
        items=[types.ConfigurationItem(section=CONFIG_SECTION, scope_uri=ls.workspace.root_uri)]
    )
    try:
        answer = await asyncio.wait_for(
            ls.workspace_configuration_async(request), PULL_TIMEOUT_SECONDS
        )
    except Exception as exc:  # an error answer or a timeout: keep what we have
        logger.warning("workspace/configuration failed: %s", exc)
        return None
    return answer[0] if answer else None


def _parse(ls: MemoryServer, raw: object, source: str) -> Layer | None:
    """Parse one source; on error tell the user and return None (the old layer stays)."""
    try:
        layer = parse_layer(raw, source)
    except ConfigError as exc:
        ls.tell(f"memory-ls: {exc}. The previous settings stay in effect.", types.MessageType.Error)
        return None
    unknown = layer.describe_unknown_keys()
    if unknown:
        ls.tell_once(f"memory-ls: {unknown}.", types.MessageType.Warning)
    return layer
