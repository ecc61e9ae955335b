"""The server's message dispatch tells requests, notifications and responses apart as pygls does."""

from __future__ import annotations

from lsprotocol.types import METHOD_TO_TYPES
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
)

from memory_ls.lsp.protocol import _kind

MESSAGE_CLASSES = sorted(
    {cls for message, response, _, _ in METHOD_TO_TYPES.values() for cls in (message, response)}
    - {None},
    key=lambda cls: cls.__name__,
)


def test_every_lsp_message_class_is_classified() -> None:
    expected = {"Request": "request", "Notification": "notification", "Response": "response"}
    wrong = {}
    for cls in MESSAGE_CLASSES:
        suffix = next(s for s in expected if cls.__name__.endswith(s))
        if _kind(cls) != expected[suffix]:
            wrong[cls.__name__] = _kind(cls)
    assert len(MESSAGE_CLASSES) > 100
    assert wrong == {}


def test_pygls_fallback_messages_and_other_objects() -> None:
    assert _kind(JsonRPCRequestMessage) == "request"
    assert _kind(JsonRPCNotification) == "notification"
    assert _kind(JsonRPCResponseMessage) == "response"
    assert _kind(dict) is None  # left to pygls
