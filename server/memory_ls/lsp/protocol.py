"""The JSON-RPC protocol, with one repair and one shortcut.

The repair: every request that can be told apart gets an answer. pygls drops a request
whose parameters do not fit the LSP types (for example `workspace/executeCommand` with
`"arguments": false`): it logs the error and sends nothing, so the client waits
forever. Here such a request is answered with an InvalidParams error whose `data.code`
is `invalid-arguments`, like our own refusals.

The shortcut: pygls tells requests, notifications and responses apart by `isinstance`
against runtime-checkable Protocols, 30 to 70 microseconds a message on Python 3.11 (a
keystroke is two messages). Messages are attrs classes with slots, whose attributes are
the same for every instance: the kind is decided once per class.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import logging
from dataclasses import dataclass
from typing import Any

import attrs
from lsprotocol.types import EXIT, ResponseError
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import RPCError, RPCNotification, RPCRequest, RPCResponse

INVALID_PARAMS = -32602

logger = logging.getLogger(__name__)
# Writes under way on an asynchronous transport, kept until done (asyncio holds tasks weakly).
_WRITES: set[asyncio.Future[Any]] = set()


class RawJson:
    """A result already in its JSON shape (a list of dicts, say), sent as it is.

    cattrs would copy a plain list of dicts item by item against the result's declared
    type (a millisecond for a hundred workspace symbols); an object it does not know it
    passes through, and the serializer below writes its value.
    """

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class JsonText:
    """A result already written as JSON text (a completion list), sent as it is.

    Fifty completion items as dicts cost json.dumps four times what writing their JSON
    with the shared parts made once does (nested objects, the same edit range each time).
    """

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


@dataclass(frozen=True)
class Unreadable:
    """A message whose parameters could not be structured."""

    request_id: str | int | None
    method: str


class MemoryProtocol(LanguageServerProtocol):
    """LanguageServerProtocol that answers requests it cannot read."""

    def _serialize_message(self, data: Any) -> Any:
        """JSON for what json.dumps cannot write itself: RawJson as it is, else as pygls."""
        if isinstance(data, RawJson):
            return data.value
        return super()._serialize_message(data)

    def _send_data(self, data: Any) -> None:
        """Send a message; a response whose result is JsonText with that text as it is."""
        result = getattr(data, "result", None)
        if not isinstance(result, JsonText) or self.writer is None:
            super()._send_data(data)
            return
        # ASCII only (json.dumps' default, kept by JsonText's makers): characters are bytes.
        body = f'{{"id":{json.dumps(data.id)},"jsonrpc":"2.0","result":{result.text}}}'
        if self._include_headers:
            body = (
                f"Content-Length: {len(body)}\r\n"
                f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n{body}"
            )
        try:
            written = self.writer.write(body.encode(self.CHARSET))
            if inspect.isawaitable(written):  # an asynchronous transport (TCP)
                task = asyncio.ensure_future(written)
                _WRITES.add(task)
                task.add_done_callback(_WRITES.discard)
        except BrokenPipeError:
            logger.exception("Error sending data. BrokenPipeError", exc_info=True)
            raise

    def structure_message(self, data: dict[str, Any]) -> Any:
        """Structure a message; one that does not fit its type becomes `Unreadable`."""
        try:
            return super().structure_message(data)
        except JsonRpcException:
            method = data.get("method")
            if not isinstance(method, str):
                raise
            request_id = data.get("id")
            # JSON-RPC ids are strings or numbers; anything else cannot be answered.
            if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
                request_id = None
            # Handled in handle_message when this is the whole message; nested in another
            # message's parameters, it is just a value there.
            return Unreadable(request_id, method)

    def handle_message(self, message: Any) -> None:
        """Answer an unreadable request with an error; handle anything else as pygls does."""
        if not isinstance(message, Unreadable):
            kind = _kind(type(message))
            if kind is None:
                super().handle_message(message)
            else:
                self._dispatch(kind, message)
            return
        if message.request_id is None:
            return  # a notification: nobody waits for an answer
        self._send_response(
            message.request_id,
            error=ResponseError(
                code=INVALID_PARAMS,
                message=f"The parameters of {message.method} do not have the shape LSP defines.",
                data={"code": "invalid-arguments"},
            ),
        )

    def _dispatch(self, kind: str, message: Any) -> None:
        """pygls's `handle_message`, with the kind of message known."""
        if message.jsonrpc != self.VERSION:
            super().handle_message(message)  # pygls logs and drops it
            return
        if self._shutdown and getattr(message, "method", "") != EXIT:
            super().handle_message(message)  # pygls logs and drops it
            return
        # Each handler runs in its own context, as in pygls.
        run = contextvars.copy_context().run
        if kind == "request":
            run(self._handle_request, message.id, message.method, message.params)
        elif kind == "notification":
            run(self._handle_notification, message.method, message.params)
        elif kind == "response":
            run(self._handle_response, message.id, message.result)
        else:
            run(self._handle_response, message.id, None, message.error)


_KINDS: dict[type, str | None] = {}


def _kind(cls: type) -> str | None:
    """What a message class is (pygls's tests, once per class); None: left to pygls."""
    try:
        return _KINDS[cls]
    except KeyError:
        pass
    kind: str | None = None
    if attrs.has(cls):
        fields = {field.name for field in attrs.fields(cls)}
        if _has_all(fields, RPCRequest):
            kind = "request"
        elif _has_all(fields, RPCNotification):
            kind = "notification"
        elif _has_all(fields, RPCResponse):
            kind = "response"
        elif _has_all(fields, RPCError):
            kind = "error"
    _KINDS[cls] = kind
    return kind


def _has_all(fields: set[str], protocol: type) -> bool:
    return set(protocol.__annotations__) <= fields
