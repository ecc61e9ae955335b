"""The JSON-RPC protocol, with one repair: every request that can be told apart gets an answer.

pygls drops a request whose parameters do not fit the LSP types (for example
`workspace/executeCommand` with `"arguments": false`): it logs the error and sends
nothing, so the client waits forever. Here such a request is answered with an
InvalidParams error whose `data.code` is `invalid-arguments`, like our own refusals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lsprotocol.types import ResponseError
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol

INVALID_PARAMS = -32602


@dataclass(frozen=True)
class Unreadable:
    """A message whose parameters could not be structured."""

    request_id: str | int | None
    method: str


class MemoryProtocol(LanguageServerProtocol):
    """LanguageServerProtocol that answers requests it cannot read."""

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
            super().handle_message(message)
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
