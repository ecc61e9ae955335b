"""Reading the client's messages from stdin with one thread hop per chunk, not per line.

pygls's stdin reader asks its thread pool for every header line and every body, so each
message waits for three round trips between threads; a keystroke (a change, then a
completion request) waited for six. Here one thread reads whatever the pipe holds and
hands it to the event loop in one go; pygls's message loop then takes its lines and
bodies from that buffer without waiting.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from typing import BinaryIO

from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer

CHUNK_BYTES = 1 << 16

logger = logging.getLogger(__name__)


class BufferedReader:
    """`readline` and `readexactly` over bytes a reader thread has already read."""

    def __init__(self, stdin: BinaryIO) -> None:
        self._fd = stdin.fileno()
        self._buffer = bytearray()
        self._eof = False
        self._more: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._more = asyncio.Event()
        threading.Thread(target=self._read, name="memory-ls-stdin", daemon=True).start()

    def _read(self) -> None:
        loop = self._loop
        assert loop is not None
        while True:
            try:
                data = os.read(self._fd, CHUNK_BYTES)
            except OSError as exc:
                logger.error("reading stdin failed: %s", exc)
                data = b""
            try:
                loop.call_soon_threadsafe(self._received, data)
            except RuntimeError:  # the loop is closed: nobody is listening any more
                return
            if not data:
                return

    def _received(self, data: bytes) -> None:
        assert self._more is not None
        if data:
            self._buffer += data
        else:
            self._eof = True
        self._more.set()

    async def _wait(self) -> bool:
        """Wait for more input; False at the end of it."""
        if self._more is None:
            self._start()
        assert self._more is not None
        if self._eof:
            return False
        self._more.clear()
        await self._more.wait()
        return True

    async def readline(self) -> bytes:
        """The next line, with its newline (what is left at the end of input)."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                return self._take(end + 1)
            if not await self._wait():
                return self._take(len(self._buffer))

    async def readexactly(self, count: int) -> bytes:
        """The next `count` bytes (fewer only at the end of input)."""
        while len(self._buffer) < count:
            if not await self._wait():
                break
        return self._take(min(count, len(self._buffer)))

    def _take(self, count: int) -> bytes:
        data = bytes(self._buffer[:count])
        del self._buffer[:count]
        return data


def start_stdio(server: LanguageServer) -> None:
    """Serve over stdin and stdout, as pygls's `start_io` does, with the buffered reader."""
    server._stop_event = threading.Event()
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    reader = BufferedReader(sys.stdin.buffer)
    try:
        asyncio.run(
            run_async(
                stop_event=server._stop_event,
                reader=reader,
                protocol=server.protocol,
                logger=logger,
                error_handler=server.report_server_error,
            )
        )
    except BrokenPipeError:
        logger.error("Connection to the client is lost! Shutting down the server.")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]  # pygls leaves it unannotated
