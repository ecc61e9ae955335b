"""Start and end of a session: initialize, initialized, shutdown, and the client's process."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time

from lsprotocol import types
from pygls.uris import to_fs_path

from memory_ls.lsp import configuration, startup
from memory_ls.lsp.server import MemoryServer

# How often the client's process is checked; the server exits within two of these.
PARENT_POLL_SECONDS = 1.0
# How long after `initialized` the start is over (see startup.py).
STARTUP_SECONDS = 1.0

logger = logging.getLogger(__name__)


def register(server: MemoryServer) -> None:
    """Register the lifecycle handlers."""

    @server.feature(types.INITIALIZE)
    def initialize(ls: MemoryServer, params: types.InitializeParams) -> None:
        ls.loop = asyncio.get_running_loop()
        ls.root = workspace_root(ls, params)
        configuration.load_initialization_options(ls, params.initialization_options)
        ls.reconfigure()
        if params.process_id is not None:
            watch_client_process(params.process_id)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: MemoryServer, params: types.InitializedParams) -> None:
        await configuration.pull(ls)
        ls.reconfigure()
        ls.started = True
        ls.configured.set()
        ls.folders_changed()
        # The first messages of a session make pygls build converters for their types
        # (generated code, see startup.py): the cache covers them too.
        asyncio.get_running_loop().call_later(STARTUP_SECONDS, startup.end)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: MemoryServer, params: None) -> None:
        ls.stopping = True
        startup.end()  # a client that never said `initialized`
        for close in ls.closers:
            close()


def workspace_root(ls: MemoryServer, params: types.InitializeParams) -> str:
    """The workspace root: rootUri, else the first workspace folder, else the current directory."""
    root_path: str | None = ls.workspace.root_path
    if root_path:
        return os.path.abspath(root_path)
    for folder in params.workspace_folders or ():
        path = to_fs_path(folder.uri)
        if path:
            return os.path.abspath(path)
    return os.getcwd()


def process_alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, owned by someone else
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            # The state follows the command name in parentheses; Z is a zombie.
            return handle.read().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def watch_client_process(pid: int) -> None:
    """Exit when the editor that started us is gone, even if it left our stdin open."""
    if os.name == "nt":
        return  # os.kill(pid, 0) is not a probe on Windows; stdin closing still ends us

    def poll() -> None:
        while process_alive(pid):
            time.sleep(PARENT_POLL_SECONDS)
        logger.warning("client process %s is gone; exiting", pid)
        os._exit(1)

    threading.Thread(target=poll, name="memory-ls-client-process", daemon=True).start()
