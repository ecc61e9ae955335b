"""The MCP server (`memory-ls mcp`): agents read and write memories through the store's rules.

Tools are named and shaped as agents know them from Serena (`write_memory`, `read_memory`,
...). Each answer is a sentence for the model (where a memory went and why) plus the
SPEC 3.3 result object as structured content. A refusal is a tool error whose text starts
with the SPEC code: `[invalid-name] Invalid memory name '../x': ...`.

The MCP SDK (and with it pydantic and starlette) is imported only when the server is
built, so importing this module stays cheap.
"""

import inspect
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from typing_extensions import TypedDict

from memory_ls import __version__
from memory_ls.config import Layer, Settings, merge_layers
from memory_ls.core.errors import InvalidArguments, MemoryStoreError
from memory_ls.core.folders import Folder, StoreConfig, resolve_store_config
from memory_ls.core.names import caps_prefixes
from memory_ls.core.routing import routing_prefixes, unknown_prefix
from memory_ls.core.store import Store

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.types import CallToolResult, InputRequiredResult
    from pydantic import ValidationError

log = logging.getLogger("memory_ls.mcp")

SERVER_NAME = "memory-ls"

# ----- result shapes (SPEC 3.3), published as the tools' output schemas ----------------


class SaveResult(TypedDict):
    """The result of write_memory (`memory.save`)."""

    name: str
    path: str
    scope: Literal["project", "global"]
    folder: str
    created: bool
    routedBy: Literal["existing", "prefix", "topic", "global", "default"]


class ReadResult(TypedDict):
    """The result of read_memory (`memory.read`)."""

    name: str
    path: str
    scope: Literal["project", "global"]
    folder: str
    content: str
    tags: list[str]
    createdAt: str | None
    updatedAt: str | None
    readOnly: bool


class EditResult(TypedDict):
    """The result of edit_memory (`memory.edit`)."""

    name: str
    path: str
    replacements: int


class DeleteResult(TypedDict):
    """The result of delete_memory (`memory.delete`)."""

    name: str
    path: str


class MoveResult(TypedDict):
    """The result of move_memory (`memory.move`)."""

    name: str
    newName: str
    path: str
    updatedReferences: int


class ListedMemory(TypedDict):
    """One memory in a listing."""

    name: str
    path: str
    scope: Literal["project", "global"]
    folder: str
    tags: list[str]
    updatedAt: str | None
    readOnly: bool
    shadows: list[str]


class ListResult(TypedDict):
    """The result of list_memories (`memory.list`)."""

    memories: list[ListedMemory]


class SearchHit(TypedDict):
    """One matching line of a search."""

    name: str
    path: str
    line: int
    text: str
    score: float


class SearchResult(TypedDict):
    """The result of search_memories (`memory.search`)."""

    results: list[SearchHit]


# ----- tool descriptions -----------------------------------------------------------------

_NAMES = (
    "Names are one or more segments joined by `/` (letters, digits, `_`, `-`, `.`, space; "
    "a leading `mem:` and a trailing `.md` are dropped); case matters."
)

WRITE_DESCRIPTION = f"""Create or overwrite a memory: a Markdown note kept between sessions.

Where it goes:
- A memory that already exists is overwritten in place, wherever it is.
- A name with an ALL-CAPS prefix, such as `FEATURE_auth` or `FEATURE_BUILDER_x`, goes to the
  additional (shared) folder named after the prefix (`feature/`, `feature_builder/`; the
  longest prefix wins) when that folder is configured. `list_memories` shows the prefixes.
- A topic path such as `auth/login_flow` goes under the primary folder.
- A `global/` name (or scope "global") goes to the personal global folder, outside the
  repository: use it for notes that are about you, not this project.
- Anything else goes to the primary folder.
{_NAMES} The content may start with YAML frontmatter; `tags` are stored there. Refer to
other memories in the text as [[NAME]] or `mem:NAME`. The answer says where the memory went
and why."""

READ_DESCRIPTION = f"""Read a memory's Markdown body (frontmatter left out) and where it is stored.

Lookup order: the primary folder (with its topics), then the additional folders, then the
global folder; the first hit wins. `global/NAME` or scope "global" reads the global one.
{_NAMES}"""

LIST_DESCRIPTION = """List memories: name, folder, scope and tags of each.

Filter by scope ("project": primary and additional folders; "global": the personal folder;
"all", the default), by tags (all must match) and by a name prefix (`FEATURE_`, `auth/`).
The answer also shows the routing prefixes that send new memories to additional folders."""

EDIT_DESCRIPTION = f"""Change part of an existing memory in place (it is never moved).

Replaces `needle` with `repl` in the body. mode "literal" (default) matches the text as
is; mode "regex" takes a Python regular expression (multi-line, `.` matches newlines) and
`repl` may use \\1 or \\g<name>. Zero matches is an error; more than one is an error unless
allow_multiple_occurrences is true. To replace the whole body use write_memory. {_NAMES}"""

DELETE_DESCRIPTION = f"""Delete a memory from wherever it is found (lookup order: primary,
additional folders, global; `global/NAME` deletes the global one). {_NAMES}"""

MOVE_DESCRIPTION = f"""Rename a memory. The new name is routed like a new write_memory (an
ALL-CAPS prefix moves it to the matching additional folder, `global/` to the global folder),
and every [[reference]] or `mem:reference` to the old name in other memories is rewritten.
Refused if the new name is taken. {_NAMES}"""

SEARCH_DESCRIPTION = """Full-text search over memory names and bodies, case-insensitive, best
first, with line numbers and the matching line. Filter by tags (all must match) and scope
("project", "global", or "all", the default); `limit` caps the number of lines returned."""

# ----- argument types with their schema descriptions --------------------------------------

Scope = Literal["project", "global"]
ListScope = Literal["project", "global", "all"]


def run_mcp(layer: Layer, root: str) -> None:
    """Serve the MCP tools over stdio on the store configured by the CLI flags in `layer`."""
    server = build_server(layer, root)
    server.run("stdio")


def build_server(layer: Layer, root: str) -> "MCPServer[Any]":
    """An MCP server with the memory tools, on the store at `root` configured by `layer`."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import CallToolResult, ToolAnnotations
    from pydantic import Field, Strict, ValidationError

    settings = merge_layers(layer)
    stores = _StoreFactory(settings, os.path.abspath(os.path.expanduser(root)))
    start_config = stores.config()

    # The argument names of each tool, to refuse ones the tool does not take.
    known_arguments: dict[str, frozenset[str]] = {}

    class MemoryMCPServer(MCPServer[Any]):
        """MCPServer whose argument problems are `invalid-arguments` refusals."""

        async def call_tool(
            self,
            name: str,
            arguments: dict[str, Any],
            context: "Context[Any, Any] | None" = None,
        ) -> "CallToolResult | InputRequiredResult":
            """Run a tool; a misspelt or mistyped argument is refused, never guessed at."""
            known = known_arguments.get(name)
            unknown = sorted(set(arguments) - known) if known is not None else []
            if known is not None and unknown:
                return _refusal(
                    InvalidArguments(
                        f"{name} does not take {', '.join(unknown)} "
                        f"(its arguments: {', '.join(sorted(known))})."
                    )
                )
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                # The SDK's own text is a pydantic dump; say which arguments are wrong instead.
                if isinstance(exc.__cause__, ValidationError):
                    return _refusal(InvalidArguments(_explain_validation(name, exc.__cause__)))
                raise

    server = MemoryMCPServer(
        SERVER_NAME,
        title="memory-ls",
        version=__version__,
        instructions=_instructions(start_config),
        # Refusals are answers to the agent, not server trouble: keep stderr for warnings.
        log_level="WARNING",
    )

    def tool(
        fn: Callable[..., Any],
        title: str,
        description: str,
        *,
        read_only: bool,
        destructive: bool = False,
        idempotent: bool = False,
    ) -> None:
        server.add_tool(
            fn,
            title=title,
            description=description,
            annotations=ToolAnnotations(
                title=title,
                read_only_hint=read_only,
                destructive_hint=None if read_only else destructive,
                idempotent_hint=idempotent,
                open_world_hint=False,
            ),
        )
        known_arguments[fn.__name__] = frozenset(inspect.signature(fn).parameters)

    Name = Annotated[str, Field(description="The memory name, e.g. `FEATURE_auth`, `auth/login`.")]
    Tags = Annotated[list[str] | None, Field(description="Tags to store in the frontmatter.")]
    TagFilter = Annotated[
        list[str] | None, Field(description="Only memories that have all of these tags.")
    ]

    def write_memory(
        memory_name: Name,
        content: Annotated[str, Field(description="The Markdown text of the memory.")],
        tags: Tags = None,
        scope: Annotated[
            Scope | None,
            Field(description='"global" writes to the personal global folder; default project.'),
        ] = None,
    ) -> Annotated[CallToolResult, SaveResult]:
        def act(store: Store) -> CallToolResult:
            result = store.save(memory_name, content, tags, scope)
            why = _save_reason(result, store.config)
            if result["routedBy"] == "existing":
                text = f"Saved {result['name']}: updated in place at {result['path']} ({why})."
            else:
                text = f"Saved {result['name']} to {result['path']} ({why})."
            return _answer(text, result)

        return stores.run(act)

    def read_memory(
        memory_name: Name,
        scope: Annotated[
            Scope | None, Field(description="Search only this scope; default: all scopes.")
        ] = None,
    ) -> Annotated[CallToolResult, ReadResult]:
        def act(store: Store) -> CallToolResult:
            result = store.read(memory_name, scope)
            folder = _folder_phrase(_folder_at(store.config, result["folder"]))
            about = [f"{result['name']}: {result['path']}", f"{result['scope']} scope, {folder}"]
            if result["tags"]:
                about.append("tags: " + ", ".join(result["tags"]))
            if result["updatedAt"]:
                about.append(f"updated {result['updatedAt']}")
            if result["readOnly"]:
                about.append("read-only")
            # The body comes first and alone, so an agent can quote it exactly in edit_memory.
            return _answer(result["content"], result, "(" + "; ".join(about) + ")")

        return stores.run(act)

    def list_memories(
        scope: Annotated[
            ListScope | None, Field(description='"project", "global" or "all" (default).')
        ] = None,
        tags: TagFilter = None,
        prefix: Annotated[
            str | None, Field(description="Only names starting with this, e.g. `FEATURE_`.")
        ] = None,
    ) -> Annotated[CallToolResult, ListResult]:
        def act(store: Store) -> CallToolResult:
            result = store.list_memories(scope, tags, prefix)
            return _answer(_listing_text(result["memories"], store.config), result)

        return stores.run(act)

    def edit_memory(
        memory_name: Name,
        needle: Annotated[str, Field(description="The text (or regex) to replace.")],
        repl: Annotated[str, Field(description="The replacement text.")],
        mode: Annotated[
            Literal["literal", "regex"],
            Field(description='"literal" (default) or "regex" (Python syntax).'),
        ] = "literal",
        allow_multiple_occurrences: Annotated[
            bool,
            Strict(),
            Field(description="Replace every match; otherwise more than one match is refused."),
        ] = False,
    ) -> Annotated[CallToolResult, EditResult]:
        def act(store: Store) -> CallToolResult:
            result = store.edit(
                memory_name,
                needle=needle,
                replacement=repl,
                mode=mode,
                allow_multiple=allow_multiple_occurrences,
            )
            count = result["replacements"]
            text = (
                f"Edited {result['name']} in place at {result['path']} "
                f"({count} replacement{'' if count == 1 else 's'})."
            )
            return _answer(text, result)

        return stores.run(act)

    def delete_memory(memory_name: Name) -> Annotated[CallToolResult, DeleteResult]:
        def act(store: Store) -> CallToolResult:
            result = store.delete(memory_name)
            return _answer(f"Deleted {result['name']} ({result['path']}).", result)

        return stores.run(act)

    def move_memory(
        memory_name: Name,
        new_name: Annotated[str, Field(description="The new name; routed like a new memory.")],
    ) -> Annotated[CallToolResult, MoveResult]:
        def act(store: Store) -> CallToolResult:
            result = store.move(memory_name, new_name)
            count = result["updatedReferences"]
            text = (
                f"Moved {result['name']} to {result['newName']} at {result['path']} "
                f"({_placement_reason(result['newName'], result['path'], store.config)}); "
                f"{count} reference{'' if count == 1 else 's'} in other memories updated."
            )
            return _answer(text, result)

        return stores.run(act)

    def search_memories(
        query: Annotated[str, Field(description="Words or a phrase; case-insensitive.")],
        tags: TagFilter = None,
        scope: Annotated[
            ListScope | None, Field(description='"project", "global" or "all" (default).')
        ] = None,
        limit: Annotated[
            int | None, Strict(), Field(ge=1, description="At most this many lines (default 50).")
        ] = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        def act(store: Store) -> CallToolResult:
            result = store.search(query, tags, scope, limit)
            hits = result["results"]
            if not hits:
                return _answer(f"No memory matches {query!r}.", result)
            lines = [f"{len(hits)} matching line{'' if len(hits) == 1 else 's'}:"]
            lines += [f"{h['name']}:{h['line']}: {h['text']}" for h in hits]
            return _answer("\n".join(lines), result)

        return stores.run(act)

    tool(
        write_memory,
        "Write memory",
        WRITE_DESCRIPTION,
        read_only=False,
        destructive=True,
        idempotent=True,
    )
    tool(read_memory, "Read memory", READ_DESCRIPTION, read_only=True)
    tool(list_memories, "List memories", LIST_DESCRIPTION, read_only=True)
    tool(edit_memory, "Edit memory", EDIT_DESCRIPTION, read_only=False, destructive=True)
    tool(
        delete_memory,
        "Delete memory",
        DELETE_DESCRIPTION,
        read_only=False,
        destructive=True,
        idempotent=True,
    )
    tool(move_memory, "Move or rename memory", MOVE_DESCRIPTION, read_only=False, destructive=True)
    tool(search_memories, "Search memories", SEARCH_DESCRIPTION, read_only=True)
    return server


class _StoreFactory:
    """Builds the Store for each tool call from settings fixed at start."""

    def __init__(self, settings: Settings, root: str) -> None:
        self.settings = settings
        self.root = root
        self.reported_missing: tuple[str, ...] | None = None

    def config(self) -> StoreConfig:
        """Resolve the folders now; report configured folders that do not exist when that changes.

        Resolving is a handful of stat calls, so it is done on every call: an additional
        folder that appears while the agent works (a clone, a mount) is used at once.
        """
        config = resolve_store_config(self.settings, self.root)
        if config.missing_additional != self.reported_missing:
            self.reported_missing = config.missing_additional
            for missing in config.missing_additional:
                log.warning("memory-ls: additional folder %s does not exist; skipped", missing)
        return config

    def run(self, act: Callable[[Store], "CallToolResult"]) -> "CallToolResult":
        """Run one tool's action on a fresh Store; a refusal becomes a tool error."""
        try:
            return act(Store(self.config()))
        except MemoryStoreError as exc:
            return _refusal(exc)
        except OSError as exc:
            # Not a refusal with a SPEC code (a full disk, a permission), but the agent should
            # still learn what failed rather than see a bare "Error executing tool".
            where = f" ({exc.filename})" if exc.filename else ""
            return _failure(f"The file system refused the operation: {exc.strerror or exc}{where}.")


# ----- answers ----------------------------------------------------------------------------


def _answer(text: str, result: Mapping[str, Any], *more: str) -> "CallToolResult":
    """A successful answer: readable text (and any extra blocks) plus the SPEC result object."""
    from mcp.types import CallToolResult, TextContent

    blocks = [TextContent(type="text", text=t) for t in (text, *more)]
    return CallToolResult(content=list(blocks), structured_content=dict(result))


def _refusal(exc: MemoryStoreError) -> "CallToolResult":
    """A refused operation as a tool error: `[code] message`."""
    return _failure(f"[{exc.code}] {exc.message}")


def _failure(text: str) -> "CallToolResult":
    """A tool error carrying one text block."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def _explain_validation(tool: str, error: "ValidationError") -> str:
    """Which arguments were missing or of the wrong type, without echoing their values."""
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        if item["type"] == "missing":
            problems.append(f"{where} is required")
        elif item["type"].endswith("_type"):
            # A wrong JSON type: name the one received (the value itself may be long).
            got = _json_type(type(item.get("input")).__name__)
            problems.append(f"{where}: {item['msg']} (got {got})")
        else:
            problems.append(f"{where}: {item['msg']}")
    return f"Invalid arguments for {tool}: " + "; ".join(problems) + "."


def _json_type(python_type: str) -> str:
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


# ----- where and why ----------------------------------------------------------------------


def _folder_at(config: StoreConfig, path: str) -> Folder | None:
    """The configured folder with this path."""
    return next((f for f in config.folders if f.path == path), None)


def _folder_phrase(folder: Folder | None) -> str:
    """How a folder is named to the agent: "the additional folder feature"."""
    if folder is None:
        return "a configured folder"
    if folder.kind == "additional":
        suffix = " (read-only)" if folder.read_only else ""
        return f"the additional folder {folder.label}{suffix}"
    return f"the {folder.kind} folder"


def _save_reason(result: Mapping[str, Any], config: StoreConfig) -> str:
    """Why a save went where it went, from its routedBy."""
    folder = _folder_at(config, result["folder"])
    routed_by = result["routedBy"]
    if routed_by == "existing":
        return f"it already existed in {_folder_phrase(folder)}"
    return _placement_reason(result["name"], result["path"], config)


def _placement_reason(name: str, path: str, config: StoreConfig) -> str:
    """Why a new memory (a fresh save or a move) landed at `path`."""
    folder = config.owner_of(path)
    if folder is None:
        return "outside the configured folders"
    if folder.kind == "global":
        return "global scope, so the personal global folder"
    if folder.kind == "additional":
        # Routing matched the folder's name to the name's ALL-CAPS prefix, case-insensitively.
        prefix = name[: len(folder.label)]
        return f"routed by prefix {prefix} to {_folder_phrase(folder)}"
    if "/" in name:
        return "a topic path, so under the primary folder"
    return "no routing prefix applies, so the primary folder" + _missed_prefix_hint(name, config)


def _missed_prefix_hint(name: str, config: StoreConfig) -> str:
    """Why an ALL-CAPS prefix did not route: no such folder, or one configured but missing."""
    wanted = {p.lower() for p in caps_prefixes(name)}
    for missing in config.missing_additional:
        if os.path.basename(missing).lower() in wanted:
            return f"; the additional folder {missing} is configured but does not exist"
    prefix = unknown_prefix(name, config.additional)
    if prefix is None:
        return ""
    known = ", ".join(routing_prefixes(config.additional))
    return f"; prefix {prefix} matches no additional folder (routing prefixes: {known})"


def _listing_text(memories: Sequence[Mapping[str, Any]], config: StoreConfig) -> str:
    """The list_memories text: one memory a line, then where new names would go."""
    lines = [f"{len(memories)} memor{'y' if len(memories) == 1 else 'ies'}:"]
    for memory in memories:
        where = _folder_phrase(_folder_at(config, memory["folder"])).removeprefix("the ")
        extra = [f"{memory['scope']}, {where}"]
        if memory["tags"]:
            extra.append("tags: " + ", ".join(memory["tags"]))
        if memory["readOnly"]:
            extra.append("read-only")
        if memory["shadows"]:
            extra.append(f"shadows {len(memory['shadows'])} other file(s)")
        lines.append(f"- {memory['name']} ({'; '.join(extra)})")
    lines.append(_routing_summary(config))
    return "\n".join(lines)


def _routing_summary(config: StoreConfig) -> str:
    """Where new memories go, for the agent choosing a name."""
    routes = [f"{p}... -> {f.path}" for p, f in _prefix_routes(config.additional)]
    text = "New memories: " + ("; ".join(routes) + "; " if routes else "")
    text += f"other names -> {config.primary.path}"
    if config.global_folder is not None:
        text += f"; global/... -> {config.global_folder.path}"
    return text + "."


def _prefix_routes(additional: Sequence[Folder]) -> list[tuple[str, Folder]]:
    """(prefix, folder) for each additional folder a prefix routes to, first configured wins."""
    routes: dict[str, Folder] = {}
    for prefix in routing_prefixes(additional):
        folder = next(f for f in additional if f.label.upper() + "_" == prefix)
        routes.setdefault(prefix, folder)
    return list(routes.items())


def _instructions(config: StoreConfig) -> str:
    """The server instructions: what this store is and where memories go (as at start)."""
    return (
        "memory-ls keeps project memories (Markdown notes) for the workspace "
        f"{config.root}. Write them with write_memory; read with read_memory, list_memories "
        "and search_memories. " + _routing_summary(config)
    )
