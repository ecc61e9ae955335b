"""The tool list as offered: schemas without what pydantic adds for people, not for models.

Every tool in the list is read into the agent's context before it does anything, so the
list is kept under a budget (TOOL_LIST_BUDGET characters of JSON, names, descriptions and
both schemas included; Serena's memory tools cost about 4,000). Two things go:
- the `title` pydantic derives from each property's name (`"title": "Memory Name"` beside
  `memory_name`) and the `...Arguments` title of each input schema: they repeat the name;
- the depth of the output schemas: the structured content is described to its first
  level (each key, its type, its values when they are a fixed set); what the nested rows
  hold is in each tool's description, in the answer's text, and in full in the MCP tools
  reference of the documentation site, generated from the same types (`full_tools`).
A looser output schema is still true of every answer, so clients that validate the
structured content against it (the SDK's client does) accept it unchanged.
"""

from typing import Any

# The whole tool list's JSON, at most (issue 34: Serena's memory tools are ~1,000 tokens).
TOOL_LIST_BUDGET = 16_000

_JSON_TYPES = ("string", "integer", "number", "boolean", "null", "array", "object")


def compact_input_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """An input schema without the titles pydantic derives from names."""
    compact: dict[str, Any] = _without_titles(schema)
    return compact


def compact_output_schema(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """An output schema to its first level: each key's type (and its values, when fixed)."""
    if schema is None:
        return None
    definitions: dict[str, Any] = schema.get("$defs", {})
    compact: dict[str, Any] = {"type": "object"}
    properties = schema.get("properties", {})
    compact["properties"] = {key: _shallow(value, definitions) for key, value in properties.items()}
    if "required" in schema:
        compact["required"] = list(schema["required"])
    return compact


def _without_titles(node: Any) -> Any:
    """`node` with every schema's `title` dropped (a property named "title" is kept)."""
    if isinstance(node, list):
        return [_without_titles(item) for item in node]
    if not isinstance(node, dict):
        return node
    kept: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            # Keys of these maps are names chosen by us, never schema keywords.
            kept[key] = {name: _without_titles(sub) for name, sub in value.items()}
        else:
            kept[key] = _without_titles(value)
    return kept


def _shallow(node: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """A property's schema cut to its type and, for a fixed set of values, the values."""
    if "$ref" in node:
        target = definitions.get(str(node["$ref"]).rsplit("/", 1)[-1], {})
        return _shallow(target, definitions) if target else {"type": "object"}
    if "anyOf" in node:
        types = sorted({t for option in node["anyOf"] for t in _types(option, definitions)})
        return {"type": types[0] if len(types) == 1 else types}
    shallow: dict[str, Any] = {}
    if "type" in node:
        shallow["type"] = node["type"]
    if "enum" in node:
        shallow["enum"] = list(node["enum"])
    if "const" in node:
        shallow["const"] = node["const"]
    return shallow or {"type": "object"}


def _types(node: dict[str, Any], definitions: dict[str, Any]) -> list[str]:
    """The JSON types a schema allows (a reference's type; a typeless schema any object)."""
    shallow = _shallow(node, definitions)
    kind = shallow.get("type", "object")
    kinds = kind if isinstance(kind, list) else [kind]
    return [k for k in kinds if k in _JSON_TYPES]
