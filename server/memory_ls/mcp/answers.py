"""How the MCP tools answer: text for the model, the result object for programs, refusals."""

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from memory_ls.core.rules.errors import MemoryStoreError, NotFound

if TYPE_CHECKING:
    from mcp.types import CallToolResult
    from pydantic import ValidationError


def answer(text: str, result: Mapping[str, Any], *more: str) -> "CallToolResult":
    """A successful answer: readable text (and any extra blocks) plus the SPEC result object."""
    from mcp.types import CallToolResult, TextContent

    blocks = [TextContent(type="text", text=t) for t in (text, *more)]
    return CallToolResult(content=list(blocks), structured_content=dict(result))


def refusal(exc: MemoryStoreError) -> "CallToolResult":
    """A refused operation as a tool error: `[code] message`, and for a program the code
    (and a `not-found`'s closest names) as structured content."""
    result = failure(f"[{exc.code}] {exc.message}")
    if isinstance(exc, NotFound):
        result.structured_content = {"code": exc.code, "suggestions": list(exc.suggestions)}
    return result


def failure(text: str) -> "CallToolResult":
    """A tool error carrying one text block."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def explain_validation(tool: str, error: "ValidationError") -> str:
    """Which arguments were missing or of the wrong type, without echoing their values."""
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        if item["type"] == "missing":
            problems.append(f"{where} is required")
        elif item["type"].endswith("_type"):
            # A wrong JSON type: name the one received (the value itself may be long).
            got = json_type(type(item.get("input")).__name__)
            problems.append(f"{where}: {item['msg']} (got {got})")
        else:
            problems.append(f"{where}: {item['msg']}")
    return f"Invalid arguments for {tool}: " + "; ".join(problems) + "."


def json_type(python_type: str) -> str:
    """The JSON name of a Python type name, as the agent wrote the value."""
    return {
        "str": "string",
        "int": "integer",
        "float": "number",
        "bool": "boolean",
        "NoneType": "null",
        "list": "array",
        "dict": "object",
    }.get(python_type, python_type)
