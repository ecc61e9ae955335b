"""Fuzzing every store command over `workspace/executeCommand` (issue 7).

One real server over stdio gets hypothesis-generated arguments: wrong types, missing and
extra keys, huge strings, hostile names (traversal spellings, absolute paths, NUL and
control characters, lone surrogates, bidi marks), non-object and several arguments.
Every call must be answered with a result or a JSON-RPC error carrying a SPEC code; a
failed call changes nothing at all; no call changes (or reveals) anything outside the
configured folders, where symlinks and bait files wait; and the server stays up.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from e2e_support import SERVER_ENV, Session, Workspace, make_workspace, session, write_file
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygls.exceptions import JsonRpcException

pytestmark = pytest.mark.asyncio(loop_scope="module")

SPEC_CODES = {
    "invalid-name",
    "not-found",
    "exists",
    "read-only",
    "too-large",
    "no-match",
    "ambiguous-match",
    "outside-store",
    "invalid-arguments",
    "version-conflict",
    "invalid-encoding",
    "invalid-frontmatter",
    "possible-secret",
}
# SPEC 3.3: each command's required and optional keys.
COMMANDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "memory.save": (("name", "content"), ("tags", "scope", "expectedVersion", "createOnly")),
    "memory.read": (("name",), ("scope",)),
    "memory.edit": (
        ("name",),
        (
            "scope",
            "content",
            "needle",
            "replacement",
            "mode",
            "allowMultiple",
            "expectedVersion",
        ),
    ),
    "memory.delete": (("name",), ("scope", "expectedVersion")),
    "memory.move": (("name", "newName"), ("scope", "expectedVersion")),
    "memory.list": ((), ("scope", "tags", "prefix", "topic")),
    "memory.search": (("query",), ("tags", "scope", "limit")),
    "memory.route": (("name",), ("scope",)),
    "memory.tags": ((), ("scope",)),
    "memory.about": (("target",), ("limit",)),
    "memory.links": ((), ("uri", "name", "scope")),
}
WRITERS = {"memory.save", "memory.edit", "memory.delete", "memory.move"}
CALL_TIMEOUT = 10.0
EXAMPLES_PER_COMMAND = 250
# Written in every bait file: no result may ever show it.
BAIT_MARK = "BAIT-7f3a-do-not-read"
# How calls ended: "result" or the SPEC code of the refusal.
OUTCOMES: Counter[str] = Counter()
# Replaced by the absolute path of the bait folder when a call is sent.
BAIT = "<BAIT>"

# ----- strategies ------------------------------------------------------------------------

NAME_TOKENS = [
    "note",
    "FEATURE_",
    "SPEC_",
    "x",
    "_",
    "-",
    " ",
    ".",
    "..",
    "/",
    "\\",
    "../",
    "..\\",
    "..%2f",
    "%2e%2e/",
    "....//",
    "./",
    "~/",
    "mem:",
    "global/",
    ".md",
    ":",
    "*",
    "?",
    "|",
    '"',
    "<",
    ">",
    "\x00",
    "\n",
    "\r",
    "\t",
    "\x1b",
    "\x7f",
    "\u202e",  # right-to-left override
    "\u200f",  # right-to-left mark
    "\u200b",  # zero-width space
    "\ufeff",
    "\ud800",  # a lone surrogate (JSON can carry it as an escape)
    "\udfff",
    "é",
    "e\u0301",  # e + combining acute
    "Ａ",  # fullwidth A
    "日本",
    "𝐀",
    "CON",
    "NUL",
    "C:\\",
    "\\\\server\\share\\",
    "escape",
    "escape_dir/",
    BAIT + "/",
]
HOSTILE_NAMES = [
    "../../../bait/pwned",
    "../../../bait/target",
    "global/../bait/pwned",
    "global/../../bait/pwned",
    "mem:../../../bait/pwned",
    "/etc/passwd",
    BAIT + "/pwned",
    BAIT + "/target",
    "escape",
    "escape_dir/pwned",
    "escape_dir/inner",
    "global/escape_dir/pwned",
    "team_escape",
    "..",
    ".",
    "",
    " ",
    "/",
    "global/",
    "mem:",
    ".md",
    "a/../../../bait/pwned",
    "a/./b",
    "a//b",
    "a/",
    "x" * 101,
    "/".join(["deep"] * 60),
    "ü" * 100,
    "style_guide",
    "project_overview",
    "global/style_guide",
    "FEATURE_checkout",
    "SPEC_payments_api",
    "team_rules",
    "auth/login_flow",
]
odd_characters = st.one_of(
    st.characters(),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),  # lone surrogates
    st.characters(max_codepoint=0x1F),  # control characters
    st.sampled_from(["\u202e", "\u200f", "\u2028", "\ufffe", "\U0010ffff"]),
)
names = st.one_of(
    st.sampled_from(HOSTILE_NAMES),
    st.sampled_from(HOSTILE_NAMES),
    st.lists(st.sampled_from(NAME_TOKENS), min_size=1, max_size=6).map("".join),
    st.text(odd_characters, max_size=20),
    st.from_regex(
        r"[A-Za-z][A-Za-z0-9_ .-]{0,20}(/[A-Za-z][A-Za-z0-9_-]{0,10}){0,2}", fullmatch=True
    ),
    st.integers(1, 5).map(lambda n: "n" * 10**n),
)
# JSON values of any shape (finite numbers: JSON has no NaN).
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(odd_characters, max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
huge = st.sampled_from([100_000, 524_288, 600_000, 3_000_000]).map(lambda n: "y" * n)
texts = st.one_of(
    st.text(odd_characters, max_size=40),
    st.sampled_from(
        [
            "# Body\n[[style_guide]] and `mem:team_rules`\n",
            "---\ntags: [fuzz]\n---\nwith frontmatter\n",
            "---\na: &a [x, x]\nb: [*a, *a]\n---\nalias\n",
            "---\nnot: [closed\n---\n",
            "aws key AKIAIOSFODNN7EXAMPLE\n",
            "",
        ]
    ),
    huge,
)
needles = st.one_of(
    texts,
    st.sampled_from(["(", "[", "\\", "(?P<x>a)", "a{99999999999}", ".*", "^", "$", "(?s).+"]),
)
tag_lists = st.lists(st.one_of(st.text(odd_characters, max_size=10), st.just(""), huge), max_size=3)
scopes = st.one_of(
    st.sampled_from(["project", "global", "all"]),
    st.sampled_from(["project", "global", "all", "", "GLOBAL", " project", "any"]),
)
KEY_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "name": names,
    "newName": names,
    "content": texts,
    "replacement": st.one_of(texts, st.sampled_from(["\\1", "\\g<9>", "\\g<x>", "\\"])),
    "needle": needles,
    "query": st.one_of(texts, names),
    "prefix": st.one_of(names, texts),
    "topic": st.one_of(names, texts, st.sampled_from(["global", "global/", "/", "auth/"])),
    "tags": tag_lists,
    "scope": st.one_of(scopes, st.text(odd_characters, max_size=8)),
    "mode": st.sampled_from(["literal", "regex", "literal", "regex", "REGEX", "", "glob"]),
    "allowMultiple": st.one_of(st.booleans(), st.sampled_from([0, 1, "true", None])),
    "target": st.one_of(
        names,
        texts,
        st.sampled_from(["src/x.py", "./a/b.md", "/etc/passwd", "../../x", "Cart.total", "/"]),
    ),
    "uri": st.one_of(
        texts,
        st.sampled_from(
            [
                f"file://{BAIT}/target.md",
                f"file://{BAIT}/../project/README.md",
                f"file://{BAIT}/../project/.serena/memories/escape.md",
                f"file://{BAIT}/../project/.serena/memories/escape_dir/inner.md",
                f"file://{BAIT}/../project/.serena/memories/style_guide.md",
                "file:///etc/passwd",
                "untitled:Untitled-1",
                "file:",
            ]
        ),
    ),
    "limit": st.one_of(st.integers(-3, 5), st.integers(-(2**70), 2**70), st.just(True)),
    "expectedVersion": st.one_of(
        st.text("0123456789abcdefABCDEF", min_size=0, max_size=20), texts, st.just(None)
    ),
    "createOnly": st.one_of(st.booleans(), st.sampled_from([0, 1, "true", None])),
}
extra_keys = st.dictionaries(
    st.one_of(
        st.sampled_from(["__proto__", "constructor", "path", "folder", "NAME", "name ", ""]),
        st.text(odd_characters, max_size=8),
    ),
    json_values,
    min_size=1,
    max_size=2,
)


@st.composite
def argument_object(draw: st.DrawFn, command: str) -> dict[str, Any]:
    """An argument object: each known key present or not, right type or not, maybe extras."""
    required, optional = COMMANDS[command]
    arguments: dict[str, Any] = {}
    for key in (*required, *optional):
        # Required keys are usually there; optional ones sometimes.
        if draw(st.integers(0, 19)) < (18 if key in required else 6):
            wrong_type = draw(st.integers(0, 19)) == 0
            arguments[key] = draw(json_values if wrong_type else KEY_VALUES[key])
    if draw(st.integers(0, 9)) == 0:
        arguments.update(draw(extra_keys))
    return arguments


@st.composite
def calls(draw: st.DrawFn, command: str) -> Any:
    """The `arguments` of one executeCommand call (usually, but not always, a list)."""
    shape = draw(st.integers(0, 19))
    if shape < 14:
        return [draw(argument_object(command))]
    if shape == 14:
        return []
    if shape == 15:
        return [
            draw(argument_object(command)),
            draw(st.one_of(argument_object(command), json_values)),
        ]
    if shape < 19:
        return [draw(json_values.filter(lambda value: not isinstance(value, dict)))]
    return draw(json_values.filter(lambda value: not isinstance(value, list)))


# ----- the workspace, its bait, and what may change ----------------------------------------


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The standard workspace with bait outside every folder and symlinks leading to it."""
    workspace = make_workspace(tmp_path_factory.mktemp("fuzz"))
    bait = workspace.base / "bait"
    for relative in ("target.md", "pwned.md", "inner.md", "dir/inner.md", "cwd/note.md"):
        # A link on the mark's line: a command that answers with linking lines shows it.
        write_file(bait / relative, f"{BAIT_MARK} [[style_guide]]\n")
    write_file(workspace.root / "README.md", f"{BAIT_MARK} [[style_guide]]\n")
    write_file(workspace.root / ".serena" / "project.yml", f"{BAIT_MARK}\n")
    os.symlink(bait / "target.md", workspace.primary / "escape.md")
    os.symlink(bait / "dir", workspace.primary / "escape_dir")
    os.symlink(bait / "target.md", workspace.outside / "team_escape.md")
    workspace.global_folder.mkdir(exist_ok=True)
    os.symlink(bait / "dir", workspace.global_folder / "escape_dir")
    return workspace


def configured_folders(ws: Workspace) -> list[Path]:
    """The folders the server may write in (SPEC 2.2), as `init_options` names them."""
    return [
        ws.primary,
        ws.path("shared/feature"),
        ws.path("shared/feature_builder"),
        ws.path("shared/spec"),
        ws.outside,
        ws.global_folder,
    ]


def snapshot(base: Path, skip: tuple[str, ...] = ()) -> dict[str, tuple[Any, ...]]:
    """Every entry under `base`: links with their targets, files with their bytes' digest."""
    state: dict[str, tuple[Any, ...]] = {}
    for directory, dirnames, filenames in os.walk(base):
        dirnames[:] = [d for d in dirnames if os.path.join(directory, d) not in skip]
        for name in dirnames + filenames:
            path = os.path.join(directory, name)
            if os.path.islink(path):
                state[path] = ("link", os.readlink(path))
            elif os.path.isdir(path):
                state[path] = ("dir", os.stat(path).st_mode)
            else:
                info = os.stat(path)
                with open(path, "rb") as handle:
                    digest = hashlib.sha256(handle.read()).hexdigest()
                state[path] = ("file", info.st_mode, digest)
    return state


def outside_state(ws: Workspace) -> dict[str, tuple[Any, ...]]:
    """Everything outside the configured folders: the workspace, the bait, the server's home."""
    lock_cache = os.path.join(SERVER_ENV["HOME"], ".cache")
    return {
        **snapshot(ws.base, tuple(str(folder) for folder in configured_folders(ws))),
        **snapshot(Path(SERVER_ENV["HOME"]), (lock_cache,)),
    }


def inside_state(ws: Workspace) -> dict[str, tuple[Any, ...]]:
    """The configured folders (file identity and size: every write replaces the inode)."""
    state: dict[str, tuple[Any, ...]] = {}
    for folder in configured_folders(ws):
        for directory, dirnames, filenames in os.walk(folder):
            for name in dirnames + filenames:
                path = os.path.join(directory, name)
                info = os.lstat(path)
                state[path] = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode)
    return state


def changed(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Paths created, removed or changed."""
    return sorted(key for key in before.keys() | after.keys() if before.get(key) != after.get(key))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(ws: Workspace) -> AsyncIterator[Session]:
    """One server for the whole run, started from inside the bait (relative paths land there)."""
    previous = os.getcwd()
    os.chdir(ws.base / "bait" / "cwd")
    try:
        starting = session(ws)
        running = await starting.__aenter__()
    finally:
        os.chdir(previous)
    try:
        yield running
    finally:
        await starting.__aexit__(None, None, None)


# ----- sending anything ------------------------------------------------------------------


def substitute(value: Any, bait: str) -> Any:
    """The value with every BAIT placeholder replaced by the bait folder's path."""
    if isinstance(value, str):
        return value.replace(BAIT, bait)
    if isinstance(value, list):
        return [substitute(item, bait) for item in value]
    if isinstance(value, dict):
        return {substitute(k, bait): substitute(v, bait) for k, v in value.items()}
    return value


async def send_raw(server: Session, body: bytes, request_id: str) -> Any:
    """Send one request's raw JSON body; return its result or raise its JsonRpcException.

    The test client would refuse to send malformed parameters, so this writes the
    message itself and waits for the response with the client's own bookkeeping.
    """
    protocol = server.client.protocol
    future: Future[Any] = Future()
    protocol._request_futures[request_id] = future
    assert protocol.writer is not None
    protocol.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    try:
        return await asyncio.wait_for(asyncio.wrap_future(future), CALL_TIMEOUT)
    finally:
        protocol._request_futures.pop(request_id, None)


async def execute(server: Session, params: Any) -> Any:
    """Send workspace/executeCommand with any params (lone surrogates travel as JSON escapes)."""
    request_id = str(uuid.uuid4())
    message = {"jsonrpc": "2.0", "id": request_id, "method": "workspace/executeCommand"}
    message["params"] = params
    return await send_raw(server, json.dumps(message, allow_nan=False).encode(), request_id)


def strings(value: Any) -> Iterator[tuple[str, str]]:
    """(key, string) pairs anywhere in a result."""
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str):
                yield key, item
            else:
                for _, found in strings(item):
                    yield key, found
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def as_plain(value: Any) -> Any:
    """A result as plain JSON data (the client hands back named tuples for objects)."""
    if hasattr(value, "_asdict"):
        return {key: as_plain(item) for key, item in value._asdict().items()}
    if isinstance(value, dict):
        return {key: as_plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_plain(item) for item in value]
    return value


# Reads follow symbolic links wherever they lead, as Serena's do (SPEC 2.2): their results
# may show a linked file's text, and its path (inside a folder) may resolve outside.
READERS = frozenset({"memory.read", "memory.list", "memory.search", "memory.about", "memory.links"})


def check_answer(ws: Workspace, outcome: Any, command: str | None = None) -> None:
    """A result stays inside the folders and, but for a read through a link, shows no
    bait; an error has a SPEC code."""
    if isinstance(outcome, JsonRpcException):
        assert outcome.code in (-32602, -32803), outcome
        assert isinstance(outcome.data, dict), f"no data.code: {outcome!r}"
        assert outcome.data.get("code") in SPEC_CODES, outcome.data
        assert outcome.message
        return
    result = as_plain(outcome)
    assert isinstance(result, dict), result
    folders = [str(folder) for folder in configured_folders(ws)]
    reader = command in READERS
    for key, text in strings(result):
        if not reader:
            assert BAIT_MARK not in text, f"a result shows a file outside the store: {key}"
        if key in ("path", "folder", "shadows"):
            real = os.path.realpath(text)
            for candidate in (text,) if reader else (text, real):
                assert any(
                    candidate == folder or candidate.startswith(folder + os.sep)
                    for folder in folders
                ), f"{key} {candidate} is outside the configured folders"


# ----- the properties ---------------------------------------------------------------------


@pytest.mark.parametrize("command", sorted(COMMANDS))
@settings(
    max_examples=EXAMPLES_PER_COMMAND,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
async def test_every_call_is_answered_and_touches_nothing_outside(
    server: Session, ws: Workspace, command: str, data: st.DataObject
) -> None:
    arguments = substitute(data.draw(calls(command), label="arguments"), str(ws.base / "bait"))
    outside_before, inside_before = outside_state(ws), inside_state(ws)
    try:
        outcome: Any = await execute(server, {"command": command, "arguments": arguments})
    except JsonRpcException as error:
        outcome = error
    check_answer(ws, outcome, command)
    OUTCOMES[outcome.data["code"] if isinstance(outcome, JsonRpcException) else "result"] += 1
    assert changed(outside_before, outside_state(ws)) == [], "changed outside the store"
    if isinstance(outcome, JsonRpcException) or command not in WRITERS:
        assert changed(inside_before, inside_state(ws)) == [], f"{command} changed the store"
    process = server.client._server
    assert process is not None and process.returncode is None, "the server died"


# Names built to lead out of the store, each given to every writer in a well-formed call:
# the random calls above reach them only by chance.
# (`team_escape` is left out: a link by that name waits in an additional folder, but a
# new memory of that name is rightly saved in the primary folder.)
ESCAPING_NAMES = [
    name
    for name in HOSTILE_NAMES
    if any(t in name for t in ("..", "escape", BAIT, "/etc/")) and name != "team_escape"
]


def escaping_calls(name: str) -> list[tuple[str, dict[str, Any]]]:
    """Well-formed writer calls with `name` where a memory name goes."""
    return [
        ("memory.save", {"name": name, "content": "fuzz\n", "tags": ["fuzz"]}),
        ("memory.edit", {"name": name, "content": "fuzz\n"}),
        ("memory.edit", {"name": name, "needle": "BAIT", "replacement": "pwned"}),
        ("memory.delete", {"name": name}),
        ("memory.move", {"name": name, "newName": "fuzz_moved"}),
        ("memory.move", {"name": "fuzz_source", "newName": name}),
    ]


async def test_names_that_lead_out_are_refused_by_every_writer(
    server: Session, ws: Workspace
) -> None:
    await server.command("memory.save", {"name": "fuzz_source", "content": "source\n"})
    bait = str(ws.base / "bait")
    # The random calls before may have deleted or moved the `escape` link (which takes
    # the link itself, as it should): every call below must meet it where it was.
    escape = ws.primary / "escape.md"
    if not escape.is_symlink():
        if escape.exists():
            escape.unlink()
        os.symlink(ws.base / "bait" / "target.md", escape)
    refused: Counter[str] = Counter()
    for name in ESCAPING_NAMES:
        for command, arguments in escaping_calls(substitute(name, bait)):
            outside_before, inside_before = outside_state(ws), inside_state(ws)
            # `escape` is itself a link: deleting or moving it takes the link, never its
            # target (as Serena does); what it leads to stays as it was.
            link_itself = arguments["name"] == "escape" and command in (
                "memory.delete",
                "memory.move",
            )
            try:
                result = await execute(server, {"command": command, "arguments": [arguments]})
            except JsonRpcException as error:
                check_answer(ws, error)
                refused[error.data["code"]] += 1
                OUTCOMES[error.data["code"]] += 1
            else:
                if not link_itself:
                    pytest.fail(f"{command} {arguments} was not refused: {result}")
                assert changed(outside_before, outside_state(ws)) == [], (command, arguments)
                # Put the link back for the calls that follow.
                moved = ws.primary / "fuzz_moved.md"
                if moved.exists():
                    moved.unlink()
                os.symlink(ws.base / "bait" / "target.md", ws.primary / "escape.md")
                continue
            assert changed(outside_before, outside_state(ws)) == [], (command, arguments)
            assert changed(inside_before, inside_state(ws)) == [], (command, arguments)
    print("escaping names refused:", dict(sorted(refused.items())))
    assert {"invalid-name", "outside-store"} <= set(refused)


MALFORMED_PARAMS = [
    None,
    [1],
    "memory.save",
    {},
    {"command": None},
    {"command": "memory.list", "arguments": False},
    {"command": "memory.list", "arguments": 7},
    {"command": "memory.list", "arguments": {"scope": "all"}},
    {"command": "memory.read", "arguments": None, "workDoneToken": [1]},
    # A dict shaped like a JSON-RPC message, nested in the arguments.
    {
        "command": "memory.read",
        "arguments": [{"jsonrpc": "2.0", "id": 1, "method": "shutdown", "params": [1]}],
    },
]


@pytest.mark.parametrize("params", MALFORMED_PARAMS)
async def test_malformed_execute_command_params_are_answered(
    server: Session, ws: Workspace, params: Any
) -> None:
    before = outside_state(ws), inside_state(ws)
    with pytest.raises(JsonRpcException) as refused:
        await execute(server, params)
    known = isinstance(params, dict) and params.get("command") in COMMANDS
    if known or refused.value.data is not None:
        check_answer(ws, refused.value)
    else:  # no command of ours: pygls' own "not defined" answer
        assert refused.value.code == -32602, refused.value
    assert (outside_state(ws), inside_state(ws)) == before


@pytest.mark.parametrize(
    "method",
    ["textDocument/completion", "textDocument/hover", "completionItem/resolve", "workspace/symbol"],
)
async def test_other_requests_with_malformed_params_are_answered(
    server: Session, method: str
) -> None:
    request_id = str(uuid.uuid4())
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": [1, 2]})
    with pytest.raises(JsonRpcException) as refused:
        await send_raw(server, body.encode(), request_id)
    assert refused.value.code == -32602


UNPARSEABLE = {
    "invalid UTF-8": b'{"jsonrpc": "2.0", "id": "ID", "method": "workspace/executeCommand", '
    b'"params": {"command": "memory.list", "arguments": ["\xff\xfe"]}}',
    "truncated JSON": b'{"jsonrpc": "2.0", "id": "ID", "method": "workspace/executeCommand", '
    b'"params": {"command": "memory.li',
    "deep nesting": b'{"jsonrpc": "2.0", "id": "ID", "method": "workspace/executeCommand", '
    + b'"params": {"command": "memory.list", "arguments": '
    + b"[" * 100_000
    + b"]" * 100_000
    + b"}}",
    "not an object": b'"ID"',
    "NUL bytes": b"\x00" * 64,
}


@pytest.mark.parametrize("body", list(UNPARSEABLE.values()), ids=list(UNPARSEABLE))
async def test_unparseable_messages_leave_the_server_answering(
    server: Session, body: bytes
) -> None:
    # An unreadable message has no readable id to answer; what matters is that the
    # server drops it and goes on answering.
    request_id = str(uuid.uuid4())
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(
            send_raw(server, body.replace(b"ID", request_id.encode()), request_id), 0.3
        )
    routed = await server.command("memory.route", {"name": "still_here"})
    assert routed["exists"] is False


async def test_the_server_still_answers_after_the_fuzzing(server: Session, ws: Workspace) -> None:
    routed = await server.command("memory.route", {"name": "after_the_storm"})
    assert routed["path"] == str(ws.primary / "after_the_storm.md")
    listed = await server.command("memory.list", {})
    assert listed["memories"], "the store was emptied, or the listing broke"
    for memory in listed["memories"]:
        assert Path(memory["path"]).is_file(), memory
    # The run was not vacuous: calls succeeded, and were refused for many reasons.
    if not OUTCOMES:
        pytest.skip("the fuzzing tests were not selected")
    print("fuzz outcomes:", dict(sorted(OUTCOMES.items())))
    assert OUTCOMES["result"] >= 50
    assert {"invalid-arguments", "invalid-name", "not-found", "outside-store"} <= set(OUTCOMES)
