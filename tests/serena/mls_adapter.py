"""Serena's memory tool calls mapped onto memory-ls's core Store: the one place to adjust."""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from typing import Any

from memory_ls.config import Settings
from memory_ls.core.rules.errors import MemoryStoreError
from memory_ls.core.storage.folders import resolve_store_config
from memory_ls.core.store import Store
from memory_ls.mcp.tools.writing import check_max_chars

GLOBAL_TOPIC = "global"


def make_store(project_root: str, serena_home: str) -> Store:
    """A Store on the project as Serena sees it: layout serena, no additional folders."""
    config = resolve_store_config(
        Settings(layout="serena"), project_root, environ={"SERENA_HOME": serena_home}
    )
    return Store(config)


def _listing(entries: list[Mapping[str, Any]]) -> dict[str, list[str]]:
    """A Store listing in the shape of Serena's MemoriesList.to_dict (both keys always)."""
    writable = sorted(e["name"] for e in entries if not e["readOnly"])
    read_only = sorted(e["name"] for e in entries if e["readOnly"])
    return {"memories": writable, "read_only_memories": read_only}


def list_memories(store: Store, topic: str) -> dict[str, list[str]]:
    """list_memories(topic): the Store's listing with Serena's topic filter."""
    return _listing(store.list_memories(topic=topic)["memories"])


def call_tool(store: Store, op: Mapping[str, Any]) -> Any:
    """One Serena tool call through the Store; returns what the Store returned."""
    tool = op["tool"]
    if tool == "write_memory":
        # The MCP tool's own check first, as an agent's call goes through it.
        check_max_chars(op["memory_name"], op["content"], op.get("max_chars", -1))
        return store.save(op["memory_name"], op["content"])
    if tool == "read_memory":
        return store.read(op["memory_name"])["content"]
    if tool == "list_memories":
        return list_memories(store, op.get("topic", ""))
    if tool == "delete_memory":
        return store.delete(op["memory_name"])
    if tool == "rename_memory":
        return store.move(op["old_name"], op["new_name"])
    if tool == "edit_memory":
        return store.edit(
            op["memory_name"],
            needle=op["needle"],
            replacement=op["repl"],
            mode=op["mode"],
            allow_multiple=op.get("allow_multiple_occurrences", False),
        )
    raise KeyError(f"unknown tool {tool!r}")


def outcome(store: Store, op: Mapping[str, Any]) -> dict[str, Any]:
    """The outcome of one call in the driver's terms: kind, value or error."""
    try:
        value = call_tool(store, op)
    except MemoryStoreError as exc:
        return {"kind": exc.code, "error": f"{type(exc).__name__}: {exc}"}
    except Exception as exc:
        # Not a refusal the Store means to make: always a divergence, shown with its origin.
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return {
            "kind": "crash",
            "error": f"{type(exc).__name__}: {exc} (at {where.filename}:{where.lineno})",
        }
    if tool_returns_text(op):
        return {"kind": "ok", "value": value}
    return {"kind": "ok"}


def tool_returns_text(op: Mapping[str, Any]) -> bool:
    """Whether the tool's value is compared: reads and listings (messages never are)."""
    return op["tool"] in ("read_memory", "list_memories")
