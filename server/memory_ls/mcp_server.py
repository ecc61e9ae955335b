"""The MCP server (`memory-ls mcp`): agents read and write memories through the store's rules.

Serena 2.1.0's six memory tools are offered under Serena's names and parameters, so an agent
configured for Serena works unchanged; memory-ls adds optional parameters and its own tools.
Each answer is a sentence for the model (where a memory went and why) plus the SPEC 3.3
result object as structured content; read_memory and list_memories answer first with the
very text Serena gives. A refusal is a tool error whose text starts with the SPEC code:
`[invalid-name] Invalid memory name '../x': ...`.

The MCP SDK (and with it pydantic and starlette) is imported only when the server is
built, so importing this module stays cheap.
"""

import inspect
import json
import logging
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from typing_extensions import TypedDict

from memory_ls import __version__
from memory_ls.config import ConfigError, Layer, Settings, merge_layers
from memory_ls.core.errors import (
    InvalidArguments,
    MemoryStoreError,
    NotFound,
    OutsideStore,
    TooLarge,
)
from memory_ls.core.folders import Folder, StoreConfig, resolve_store_config
from memory_ls.core.fsio import is_within, read_text
from memory_ls.core.fulltext import SearchIndex, fingerprint
from memory_ls.core.names import GLOBAL_PREFIX, caps_prefixes
from memory_ls.core.routing import routing_prefixes, unknown_prefix
from memory_ls.core.store import Store

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.types import CallToolResult, InputRequiredResult
    from pydantic import ValidationError

log = logging.getLogger("memory_ls.mcp")

SERVER_NAME = "memory-ls"

# Serena's memory tools (serena/tools/memory_tools.py, 2.1.0), offered under these names.
SERENA_TOOLS = (
    "write_memory",
    "read_memory",
    "list_memories",
    "delete_memory",
    "rename_memory",
    "edit_memory",
)
TOOLS = (*SERENA_TOOLS, "search_memories")
# Serena's `default_max_tool_answer_chars`: the content limit of write_memory(max_chars=-1).
SERENA_DEFAULT_MAX_CHARS = 150_000
# Tool names as the MCP specification allows them (at most 128 characters).
_TOOL_PREFIX = re.compile(r"[A-Za-z0-9_.-]{0,64}")

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
    """The result of rename_memory (`memory.move`)."""

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


# ----- tool descriptions (templates: `{write_memory}` is that tool's name as offered) -------

_NAMES = (
    "Names are one or more segments joined by `/` (letters, digits, `_`, `-`, `.`, space; "
    "a leading `mem:` and a trailing `.md` are dropped); case matters."
)

WRITE_DESCRIPTION = f"""Create or overwrite a memory: a Markdown note kept between sessions.

Where it goes:
- A memory that already exists is overwritten in place, wherever it is.
- A name with an ALL-CAPS prefix, such as `FEATURE_auth` or `FEATURE_BUILDER_x`, goes to the
  additional (shared) folder named after the prefix (`feature/`, `feature_builder/`; the
  longest prefix wins) when that folder is configured. `{{list_memories}}` shows the prefixes.
- A topic path such as `auth/login_flow` goes under the primary folder.
- A `global/` name (or scope "global") goes to the personal global folder, outside the
  repository: use it for notes that are about you, not this project.
- Anything else goes to the primary folder.
{_NAMES} The content may start with YAML frontmatter; `tags` are stored there. Refer to
other memories in the text as `mem:NAME` (in backticks) or [[NAME]]. Content longer than
max_chars characters is refused. The answer says where the memory went and why."""

READ_DESCRIPTION = f"""Read a memory: the answer is the file's text exactly as stored
(frontmatter included), with where it is stored as structured content.

Lookup order: the primary folder (with its topics), then the additional folders, then the
global folder; the first hit wins. `global/NAME` or scope "global" reads the global one.
{_NAMES}"""

LIST_DESCRIPTION = """List memories, optionally filtered by topic.

The first text is Serena's listing, JSON `{{"memories": [...], "read_only_memories": [...]}}`
(sorted names; a key with no names is left out). topic "auth" lists the memories named
`auth/...` (at any depth); "global" lists the global memories, "global/x" those named
`global/x/...`. memory-ls also filters by scope ("project", "global", "all"), by tags (all
must match) and by a name prefix (`FEATURE_`); the second text gives each memory's folder,
scope and tags, and the routing prefixes that send new memories to additional folders."""

EDIT_DESCRIPTION = f"""Replace content in an existing memory, in place (it is never moved).

mode "literal" matches `needle` exactly; mode "regex" takes a Python regular expression
with the MULTILINE and DOTALL flags (`.` matches newlines). `repl` is inserted verbatim,
except that in regex mode $!1, $!2, ... insert the groups the needle matched. Zero matches
is an error; more than one is an error unless allow_multiple_occurrences is true. To
replace the whole text use {{write_memory}}. {_NAMES}"""

DELETE_DESCRIPTION = f"""Delete a memory from wherever it is found (lookup order: primary,
additional folders, global; `global/NAME` deletes the global one). Only call it if
instructed explicitly or permission was granted by the user. {_NAMES}"""

RENAME_DESCRIPTION = f"""Rename or move a memory; use "/" in the name to organize it into
topics. The new name is routed like a new {{write_memory}} (an ALL-CAPS prefix moves it to
the matching additional folder, `global/` to the global folder), and every `mem:reference`
or [[reference]] to the old name in other memories is rewritten. Refused if the new name
is taken. {_NAMES}"""

SEARCH_DESCRIPTION = """Full-text search over memory names and bodies, case-insensitive, best
first, with line numbers and the matching line. Filter by tags (all must match) and scope
("project", "global", or "all", the default); `limit` caps the number of lines returned."""

# ----- argument types with their schema descriptions --------------------------------------

Scope = Literal["project", "global"]
ListScope = Literal["project", "global", "all"]


def run_mcp(layer: Layer, root: str, tool_prefix: str = "") -> None:
    """Serve the MCP tools over stdio on the store configured by the CLI flags in `layer`."""
    server = build_server(layer, root, tool_prefix)
    server.run("stdio")


def check_tool_prefix(prefix: str) -> None:
    """Refuse a --tool-prefix that would make tool names the MCP specification does not allow."""
    if not _TOOL_PREFIX.fullmatch(prefix):
        raise ConfigError(
            "--tool-prefix",
            [f"{prefix!r} is not a tool-name prefix: use up to 64 of A-Z a-z 0-9 _ - ."],
        )


def build_server(layer: Layer, root: str, tool_prefix: str = "") -> "MCPServer[Any]":
    """An MCP server with the memory tools (names prefixed), on the store at `root`."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import CallToolResult, ToolAnnotations
    from pydantic import Field, Strict, ValidationError

    check_tool_prefix(tool_prefix)
    settings = merge_layers(layer)
    stores = _StoreFactory(settings, os.path.abspath(os.path.expanduser(root)))
    start_config = stores.config()
    names = {tool: tool_prefix + tool for tool in TOOLS}

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
        instructions=_instructions(start_config, names),
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
        name = names[fn.__name__]
        server.add_tool(
            fn,
            name=name,
            title=title,
            description=description.format(**names),
            annotations=ToolAnnotations(
                title=title,
                read_only_hint=read_only,
                destructive_hint=None if read_only else destructive,
                idempotent_hint=idempotent,
                open_world_hint=False,
            ),
        )
        known_arguments[name] = frozenset(inspect.signature(fn).parameters)

    Name = Annotated[str, Field(description="The memory name, e.g. `FEATURE_auth`, `auth/login`.")]
    Tags = Annotated[list[str] | None, Field(description="Tags to store in the frontmatter.")]
    TagFilter = Annotated[
        list[str] | None, Field(description="Only memories that have all of these tags.")
    ]

    # Serena's six tools: names, parameter names, order, types, required ones and defaults as
    # in serena/tools/memory_tools.py; memory-ls's own optional parameters come after them.

    def write_memory(
        memory_name: Name,
        content: Annotated[str, Field(description="The Markdown text of the memory (UTF-8).")],
        max_chars: Annotated[
            int,
            Strict(),
            Field(description=f"The longest content accepted; -1: {SERENA_DEFAULT_MAX_CHARS}."),
        ] = -1,
        tags: Tags = None,
        scope: Annotated[
            Scope | None,
            Field(description='"global" writes to the personal global folder; default project.'),
        ] = None,
    ) -> Annotated[CallToolResult, SaveResult]:
        def act(store: Store) -> CallToolResult:
            check_max_chars(memory_name, content, max_chars)
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
            # The file's text alone, as Serena answers: an agent that reads a memory and
            # writes it back changed must not find anything else in it.
            return _answer(_file_text(store.config, result), result)

        return stores.run(act)

    def list_memories(
        topic: Annotated[
            str,
            Field(description='Only memories under this topic: "auth", "global", "global/x".'),
        ] = "",
        scope: Annotated[
            ListScope | None, Field(description='"project", "global" or "all" (default).')
        ] = None,
        tags: TagFilter = None,
        prefix: Annotated[
            str | None, Field(description="Only names starting with this, e.g. `FEATURE_`.")
        ] = None,
    ) -> Annotated[CallToolResult, ListResult]:
        def act(store: Store) -> CallToolResult:
            result = store.list_memories(scope, tags, prefix, topic=topic)
            memories = result["memories"]
            return _answer(_serena_listing(memories), result, _listing_text(memories, store.config))

        return stores.run(act)

    def delete_memory(memory_name: Name) -> Annotated[CallToolResult, DeleteResult]:
        def act(store: Store) -> CallToolResult:
            result = store.delete(memory_name)
            return _answer(f"Deleted {result['name']} ({result['path']}).", result)

        return stores.run(act)

    def rename_memory(
        old_name: Annotated[str, Field(description="The current name of the memory.")],
        new_name: Annotated[str, Field(description="The new name; routed like a new memory.")],
    ) -> Annotated[CallToolResult, MoveResult]:
        def act(store: Store) -> CallToolResult:
            result = store.move(old_name, new_name)
            count = result["updatedReferences"]
            text = (
                f"Renamed {result['name']} to {result['newName']} at {result['path']} "
                f"({_placement_reason(result['newName'], result['path'], store.config)}); "
                f"{count} reference{'' if count == 1 else 's'} in other memories updated."
            )
            return _answer(text, result)

        return stores.run(act)

    def edit_memory(
        memory_name: Name,
        needle: Annotated[
            str, Field(description='The text to find, or a regular expression in mode "regex".')
        ],
        repl: Annotated[
            str, Field(description="The replacement, verbatim; in regex mode $!1 is group 1.")
        ],
        mode: Annotated[
            Literal["literal", "regex"],
            Field(description='"literal" or "regex" (Python syntax, MULTILINE and DOTALL).'),
        ],
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
    tool(
        delete_memory,
        "Delete memory",
        DELETE_DESCRIPTION,
        read_only=False,
        destructive=True,
        idempotent=True,
    )
    tool(rename_memory, "Rename memory", RENAME_DESCRIPTION, read_only=False, destructive=True)
    tool(edit_memory, "Edit memory", EDIT_DESCRIPTION, read_only=False, destructive=True)
    tool(search_memories, "Search memories", SEARCH_DESCRIPTION, read_only=True)
    return server


class _StoreFactory:
    """Builds the Store for each tool call from settings fixed at start."""

    def __init__(self, settings: Settings, root: str) -> None:
        self.settings = settings
        self.root = root
        self.reported_missing: tuple[str, ...] | None = None
        # The full-text index of the configuration last used: kept open between calls.
        self.search_index: SearchIndex | None = None

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
            config = self.config()
            if self.search_index is None or fingerprint(self.search_index.config) != fingerprint(
                config
            ):
                if self.search_index is not None:
                    self.search_index.close()
                self.search_index = SearchIndex(config, live=False)
            return act(Store(config, self.search_index))
        except MemoryStoreError as exc:
            return _refusal(exc)
        except OSError as exc:
            # Not a refusal with a SPEC code (a full disk, a permission), but the agent should
            # still learn what failed rather than see a bare "Error executing tool".
            where = f" ({exc.filename})" if exc.filename else ""
            return _failure(f"The file system refused the operation: {exc.strerror or exc}{where}.")


# ----- answers ----------------------------------------------------------------------------


def check_max_chars(memory_name: str, content: str, max_chars: int) -> None:
    """Serena's write_memory limit and words (repl/api/mem_api.py), before the store's bytes."""
    limit = SERENA_DEFAULT_MAX_CHARS if max_chars == -1 else max_chars
    if len(content) > limit:
        raise TooLarge(
            f"Content for {memory_name} is too long. Max length is {limit} characters. "
            "Please make the content shorter."
        )


def _answer(text: str, result: Mapping[str, Any], *more: str) -> "CallToolResult":
    """A successful answer: readable text (and any extra blocks) plus the SPEC result object."""
    from mcp.types import CallToolResult, TextContent

    blocks = [TextContent(type="text", text=t) for t in (text, *more)]
    return CallToolResult(content=list(blocks), structured_content=dict(result))


def _refusal(exc: MemoryStoreError) -> "CallToolResult":
    """A refused operation as a tool error: `[code] message`, and for a program the code
    (and a `not-found`'s closest names) as structured content."""
    result = _failure(f"[{exc.code}] {exc.message}")
    if isinstance(exc, NotFound):
        result.structured_content = {"code": exc.code, "suggestions": list(exc.suggestions)}
    return result


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


# ----- Serena's answers --------------------------------------------------------------------


def _file_text(config: StoreConfig, result: Mapping[str, Any]) -> str:
    """The whole text of the memory file just read (what Serena's read_memory answers)."""
    folder = _folder_at(config, result["folder"])
    path = result["path"]
    # The store checked this on its read; a link swapped in since must not lead outside.
    if folder is None or not is_within(path, folder.real):
        raise OutsideStore(f"{path} leads outside its memory folder.")
    return read_text(path)


def _serena_listing(memories: Sequence[Mapping[str, Any]]) -> str:
    """Serena's list_memories text: JSON of the sorted names, writable and read-only."""
    listing: dict[str, list[str]] = {}
    # As Serena's MemoriesList.to_dict: a key with no names is left out.
    for key, read_only in (("memories", False), ("read_only_memories", True)):
        listed = sorted(_serena_name(m) for m in memories if m["readOnly"] is read_only)
        if listed:
            listing[key] = listed
    return json.dumps(listing, ensure_ascii=False)


def _serena_name(memory: Mapping[str, Any]) -> str:
    """A listed memory's name as Serena spells it: `global/NAME` for a global one (SPEC 2.3)."""
    name: str = memory["name"]
    if memory["scope"] == "global" and not name.startswith(GLOBAL_PREFIX):
        return GLOBAL_PREFIX + name
    return name


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


def _instructions(config: StoreConfig, names: Mapping[str, str]) -> str:
    """The server instructions: what this store is and where memories go (as at start)."""
    return (
        "memory-ls keeps project memories (Markdown notes) for the workspace "
        f"{config.root}. Write them with {names['write_memory']}; read with "
        f"{names['read_memory']}, {names['list_memories']} and {names['search_memories']}. "
        + _routing_summary(config)
    )
