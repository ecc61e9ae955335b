"""The store commands of SPEC 3.3 over `workspace/executeCommand`.

Each takes one JSON object and returns the core's result object unchanged. A refusal
is a JSON-RPC error whose `data.code` is the SPEC code; arguments of the wrong shape
are `invalid-arguments` before the store is touched.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pygls.exceptions import JsonRpcException
from pygls.uris import to_fs_path

from memory_ls.core.operations.mentions import memories_about
from memory_ls.core.operations.report import answer_with_findings
from memory_ls.core.rules.errors import InvalidArguments, MemoryStoreError, NotFound
from memory_ls.core.store import Store
from memory_ls.lsp.server import MemoryServer

# JSON-RPC error codes: bad arguments are InvalidParams; a refused operation is LSP's
# RequestFailed ("syntactically correct, but failed").
INVALID_PARAMS = -32602
REQUEST_FAILED = -32803

STRING, TAGS, BOOLEAN, INTEGER = "a string", "a list of strings", "true or false", "a whole number"


def _is(kind: str, value: object) -> bool:
    if kind == STRING:
        return isinstance(value, str)
    if kind == TAGS:
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    if kind == BOOLEAN:
        return isinstance(value, bool)
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Command:
    """One store command: its argument keys and how it calls the store."""

    required: Mapping[str, str]
    optional: Mapping[str, str]
    call: Callable[[Store, dict[str, Any]], dict[str, Any]]
    writes: bool = False
    # Given the open memories' texts (`_texts`, by path): the editor's unsaved edits count.
    reads_documents: bool = False


def _search(store: Store, args: dict[str, Any]) -> dict[str, Any]:
    """`memory.search`; with no match, the closest words of the names and tags are
    searched instead (`closest` says which), so that a typo still finds its memory."""

    def search(query: str) -> dict[str, Any]:
        return store.search(
            query,
            args.get("tags"),
            args.get("scope"),
            args.get("limit"),
            mode="all_words" if args.get("allWords") else "relevance",
        )

    found = search(args["query"])
    if found["results"] or args.get("allWords"):
        return found
    corrected = store.closest_query(args["query"], args.get("scope"))
    if corrected is None:
        return found
    return {**search(corrected), "closest": corrected}


def _save(store: Store, args: dict[str, Any]) -> dict[str, Any]:
    return store.save(
        args["name"],
        args["content"],
        args.get("tags"),
        args.get("scope"),
        expected_version=args.get("expectedVersion"),
        create_only=args.get("createOnly", False),
    )


def _edit(store: Store, args: dict[str, Any]) -> dict[str, Any]:
    return store.edit(
        args["name"],
        args.get("scope"),
        content=args.get("content"),
        needle=args.get("needle"),
        replacement=args.get("replacement"),
        mode=args.get("mode", "literal"),
        allow_multiple=args.get("allowMultiple", False),
        expected_version=args.get("expectedVersion"),
    )


def _move(store: Store, args: dict[str, Any]) -> dict[str, Any]:
    old_path = store.find(args["name"], args.get("scope")).path
    result = store.move(
        args["name"],
        args["newName"],
        args.get("scope"),
        expected_version=args.get("expectedVersion"),
    )
    return {**result, "_oldPath": old_path}


def _changes(store: Store, args: dict[str, Any]) -> dict[str, Any]:
    """What `memory-ls changes --format json` prints; with `withText`, also its text form."""
    from memory_ls.core.operations.changes import changes_json, changes_text, memory_changes

    report = memory_changes(store, args.get("rev"))
    result = changes_json(report)
    if args.get("withText"):
        result["text"] = changes_text(report)
    return result


def _checked(call: Callable[[Store, dict[str, Any]], dict[str, Any]]) -> Callable[..., Any]:
    """A write whose result carries the findings of the memory it touched (as MCP's does)."""

    def run(store: Store, args: dict[str, Any]) -> dict[str, Any]:
        own = store.fork()  # its own record of changes: commands run on several threads
        return answer_with_findings(own, call(own, args))[0]

    return run


COMMANDS: Mapping[str, Command] = {
    "memory.save": Command(
        {"name": STRING, "content": STRING},
        {"tags": TAGS, "scope": STRING, "expectedVersion": STRING, "createOnly": BOOLEAN},
        _checked(_save),
        writes=True,
    ),
    "memory.read": Command(
        {"name": STRING},
        {"scope": STRING, "related": BOOLEAN},
        lambda s, a: s.read(a["name"], a.get("scope"), related=a.get("related", False)),
    ),
    "memory.edit": Command(
        {"name": STRING},
        {
            "scope": STRING,
            "content": STRING,
            "needle": STRING,
            "replacement": STRING,
            "mode": STRING,
            "allowMultiple": BOOLEAN,
            "expectedVersion": STRING,
        },
        _checked(_edit),
        writes=True,
    ),
    "memory.delete": Command(
        {"name": STRING},
        {"scope": STRING, "expectedVersion": STRING},
        lambda s, a: s.delete(a["name"], a.get("scope"), expected_version=a.get("expectedVersion")),
        writes=True,
    ),
    "memory.move": Command(
        {"name": STRING, "newName": STRING},
        {"scope": STRING, "expectedVersion": STRING},
        _checked(_move),
        writes=True,
    ),
    "memory.list": Command(
        {},
        {
            "scope": STRING,
            "tags": TAGS,
            "prefix": STRING,
            "topic": STRING,
            "limit": INTEGER,
            "cursor": STRING,
        },
        # Without a limit, every memory (the editor's Memories view lists them all).
        lambda s, a: s.list_memories(
            a.get("scope"),
            a.get("tags"),
            a.get("prefix"),
            topic=a.get("topic"),
            limit=a.get("limit"),
            cursor=a.get("cursor"),
        ),
    ),
    "memory.search": Command(
        {"query": STRING},
        {"tags": TAGS, "scope": STRING, "limit": INTEGER, "allWords": BOOLEAN},
        lambda s, a: _search(s, a),
    ),
    "memory.route": Command(
        {"name": STRING}, {"scope": STRING}, lambda s, a: s.route(a["name"], a.get("scope"))
    ),
    "memory.tags": Command({}, {"scope": STRING}, lambda s, a: s.tags(a.get("scope"))),
    "memory.about": Command(
        {"target": STRING},
        {"limit": INTEGER},
        lambda s, a: memories_about(s, a["target"], a.get("limit"), a["_texts"]),
        reads_documents=True,
    ),
    "memory.changes": Command({}, {"rev": STRING, "withText": BOOLEAN}, _changes),
}


def check_arguments(
    command_name: str, command: Command, arguments: tuple[object, ...]
) -> dict[str, Any]:
    """The single object argument, checked against the command's keys and types."""
    usage = _usage(command_name, command)
    if len(arguments) == 0 and not command.required:
        return {}
    if len(arguments) != 1 or not isinstance(arguments[0], dict):
        raise InvalidArguments(f"{command_name} takes one JSON object as its argument: {usage}.")
    given: dict[str, Any] = {k: v for k, v in arguments[0].items() if v is not None}
    allowed = {**command.required, **command.optional}
    unknown = sorted(str(key) for key in arguments[0] if key not in allowed)
    if unknown:
        raise InvalidArguments(f"{command_name} does not take {', '.join(unknown)}: {usage}.")
    missing = [key for key in command.required if key not in given]
    if missing:
        raise InvalidArguments(f"{command_name} needs {', '.join(missing)}: {usage}.")
    for key, value in given.items():
        if not _is(allowed[key], value):
            raise InvalidArguments(
                f"{command_name}: {key} must be {allowed[key]}, not {_json_type(value)}."
            )
    return given


def _usage(command_name: str, command: Command) -> str:
    keys = [*command.required, *(f"{key}?" for key in command.optional)]
    return "{" + ", ".join(keys) + "}"


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list" if not value or not all(isinstance(v, str) for v in value) else "strings"
    if isinstance(value, dict):
        return "an object"
    return "null"


def refusal(error: MemoryStoreError) -> JsonRpcException:
    """The JSON-RPC error response for a refused store operation."""
    code = INVALID_PARAMS if isinstance(error, InvalidArguments) else REQUEST_FAILED
    return JsonRpcException(message=error.message, code=code, data=refusal_data(error))


def refusal_data(error: MemoryStoreError) -> dict[str, Any]:
    """What a refusal says to a program: its SPEC code, and for `not-found` the closest names."""
    data: dict[str, Any] = {"code": error.code}
    if isinstance(error, NotFound):
        data["suggestions"] = list(error.suggestions)
    return data


def register(server: MemoryServer) -> None:
    """Register every store command."""
    for command_name, command in COMMANDS.items():
        server.command(command_name)(_handler(command_name, command))


def _open_memories(ls: MemoryServer) -> dict[str, str]:
    """The text of each open memory by path, as the editor has it (on the event loop)."""
    texts = {}
    for document in list(ls.workspace.text_documents.values()):
        path = to_fs_path(document.uri)
        if path is not None and ls.config.name_of(path) is not None:
            texts[path] = document.source
    return texts


def _handler(command_name: str, command: Command) -> Callable[..., Any]:
    async def run(ls: MemoryServer, *arguments: object) -> dict[str, Any]:
        try:
            args = check_arguments(command_name, command, arguments)
            if command.reads_documents:
                args["_texts"] = _open_memories(ls)
            result = await ls.in_store_thread(command.call, ls.store, args)
        except MemoryStoreError as error:
            raise refusal(error) from error
        if command.writes:
            written = [result["path"]]
            old_path = result.pop("_oldPath", None)
            if old_path:
                written.append(old_path)
            ls.paths_written(written)
        return result

    run.__name__ = command_name.replace(".", "_")
    return run
