"""The MCP server (`memory-ls mcp`), driven by the official MCP client over stdio."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from e2e_support import SERVER_ENV, make_workspace, session
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent, Tool

from memory_ls.core.storage.gate import version_of

# Serena 2.1.0's six memory tools, then memory-ls's own.
# A change made behind the server's back shows once its watch reported it (within a
# fraction of a second; the deadline is for a loaded machine).
WATCH_DEADLINE_SECONDS = 10.0
TOOLS = {
    "write_memory",
    "read_memory",
    "list_memories",
    "delete_memory",
    "rename_memory",
    "edit_memory",
    "search_memories",
    "find_memories_about",
}
# The input schemas Serena 2.1.0's MCP server publishes for its memory tools (generated from
# the apply() signatures in serena/tools/memory_tools.py; titles and descriptions left out).
SERENA_SCHEMAS: dict[str, dict[str, Any]] = {
    "write_memory": {
        "properties": {
            "memory_name": {"type": "string"},
            "content": {"type": "string"},
            "max_chars": {"default": -1, "type": "integer"},
        },
        "required": ["memory_name", "content"],
    },
    "read_memory": {
        "properties": {"memory_name": {"type": "string"}},
        "required": ["memory_name"],
    },
    "list_memories": {"properties": {"topic": {"default": "", "type": "string"}}},
    "delete_memory": {
        "properties": {"memory_name": {"type": "string"}},
        "required": ["memory_name"],
    },
    "rename_memory": {
        "properties": {"old_name": {"type": "string"}, "new_name": {"type": "string"}},
        "required": ["old_name", "new_name"],
    },
    "edit_memory": {
        "properties": {
            "memory_name": {"type": "string"},
            "needle": {"type": "string"},
            "repl": {"type": "string"},
            "mode": {"enum": ["literal", "regex"], "type": "string"},
            "allow_multiple_occurrences": {"default": False, "type": "boolean"},
        },
        "required": ["memory_name", "needle", "repl", "mode"],
    },
}


@dataclass
class Workspace:
    """A store in tmp_path: root, shared folders, a global folder and HOME, all inside it."""

    tmp: Path
    root: Path
    primary: Path
    feature: Path
    spec: Path
    vendor: Path
    plan: Path
    global_folder: Path

    def flags(self) -> list[str]:
        """Store flags of `memory-ls mcp` for this workspace."""
        return [
            "--root",
            str(self.root),
            "--additional-folders",
            f"{self.feature},{self.spec},{self.vendor}:ro,{self.plan}",
            "--global-folder",
            str(self.global_folder),
        ]


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    """Shared folders `feature`, `spec` and `vendor` (read-only) exist; `plan` does not, yet."""
    shared = tmp_path / "shared"
    space = Workspace(
        tmp=tmp_path,
        root=tmp_path / "repo",
        primary=tmp_path / "repo" / ".serena" / "memories",
        feature=shared / "feature",
        spec=shared / "spec",
        vendor=shared / "vendor",
        plan=shared / "plan",
        global_folder=tmp_path / "home" / "global-memories",
    )
    for folder in (space.root, space.feature, space.spec, space.vendor, tmp_path / "home"):
        folder.mkdir(parents=True)
    return space


@asynccontextmanager
async def mcp_process(
    args: list[str], env: Mapping[str, str], cwd: Path
) -> AsyncIterator[ClientSession]:
    """A `memory-ls mcp` process with these flags, and an initialized client session."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_ls.cli", "mcp", *args],
        env={**env, "PYTHONPATH": os.pathsep.join(sys.path)},
        cwd=str(cwd),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def mcp_server(ws: Workspace, *flags: str) -> AbstractAsyncContextManager[ClientSession]:
    """`memory-ls mcp` on the workspace (its own flags unless given)."""
    # HOME and the lock-file cache inside tmp_path: the real home is never touched.
    env = {"HOME": str(ws.tmp / "home"), "XDG_CACHE_HOME": str(ws.tmp / "cache")}
    return mcp_process(list(flags or ws.flags()), env, ws.tmp)


async def call(session: ClientSession, tool: str, **arguments: Any) -> CallToolResult:
    """Call a tool and return its result."""
    result = await session.call_tool(tool, arguments)
    assert isinstance(result, CallToolResult)
    return result


def text_of(result: CallToolResult) -> str:
    """The result's text blocks, joined."""
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def ok(session: ClientSession, tool: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
    """Call a tool that must succeed; return (text, structured content)."""
    result = await call(session, tool, **arguments)
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return text_of(result), result.structured_content


async def until(
    session: ClientSession,
    tool: str,
    done: Callable[[dict[str, Any]], bool],
    timeout: float = WATCH_DEADLINE_SECONDS,
    **arguments: Any,
) -> tuple[str, dict[str, Any]]:
    """Call a tool until its answer satisfies `done` (a change made behind the server's back
    shows once the watch reported it); fail with the last answer after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        text, result = await ok(session, tool, **arguments)
        if done(result):
            return text, result
        assert time.monotonic() < deadline, f"{tool} {arguments} never satisfied: {text}"
        await asyncio.sleep(0.02)


async def refused(session: ClientSession, tool: str, **arguments: Any) -> str:
    """Call a tool that must be refused; return the error text."""
    result = await call(session, tool, **arguments)
    assert result.is_error, text_of(result)
    if text_of(result).startswith("[not-found] "):
        # The closest names, for a program, beside the sentence that names them.
        assert result.structured_content is not None
        assert result.structured_content["code"] == "not-found"
        assert isinstance(result.structured_content["suggestions"], list)
    else:
        assert result.structured_content is None
    return text_of(result)


def snapshot(base: Path) -> dict[str, Any]:
    """Every directory, file (with its bytes) and symlink (with its target) under base."""
    state: dict[str, Any] = {}
    for path in sorted(base.rglob("*")):
        rel = str(path.relative_to(base))
        if path.is_symlink():
            state[rel] = ("link", os.readlink(path))
        elif path.is_dir():
            state[rel] = ("dir",)
        else:
            state[rel] = ("file", path.read_bytes())
    return state


def outside(folder: str, state: Mapping[str, Any]) -> dict[str, Any]:
    """A snapshot without one top-level folder (the user's cache: the server indexes the
    store there from its start, whatever the calls)."""
    return {k: v for k, v in state.items() if Path(k).parts[0] != folder}


def schema_of(tool: Tool, argument: str) -> Mapping[str, Any]:
    """An argument's schema, with `X | None` unwrapped to X."""
    schema: Mapping[str, Any] = tool.input_schema["properties"][argument]
    for option in schema.get("anyOf", []):
        if option.get("type") != "null":
            return {**schema, **option}
    return schema


async def check_wrong_arguments_are_refused(session: ClientSession) -> None:
    """Arguments against the schemas are `invalid-arguments` refusals, not crashes."""
    cases: list[tuple[str, dict[str, Any], list[str]]] = [
        ("write_memory", {"memory_name": 5, "content": "x"}, ["memory_name", "got integer"]),
        ("write_memory", {"memory_name": "FEATURE_a"}, ["content is required"]),
        ("write_memory", {"memory_name": "a", "content": "x", "tags": "t"}, ["tags"]),
        ("write_memory", {"memory_name": "a", "content": "x", "tags": [1]}, ["tags.0"]),
        ("write_memory", {"memory_name": "a", "content": "x", "scope": "all"}, ["scope"]),
        ("write_memory", {"name": "a", "content": "x"}, ["does not take name"]),
        ("write_memory", {"memory_name": "a", "content": "x", "tags": [" "]}, ["tag"]),
        ("write_memory", {"memory_name": "a", "content": "x", "max_chars": "9"}, ["max_chars"]),
        ("edit_memory", {"memory_name": "a", "needle": "x", "repl": "y", "mode": "glob"}, []),
        ("edit_memory", {"memory_name": "a", "needle": "x", "repl": "y"}, ["mode is required"]),
        (
            "edit_memory",
            {
                "memory_name": "a",
                "needle": "x",
                "repl": "y",
                "mode": "literal",
                "allow_multiple_occurrences": 1,
            },
            ["allow_multiple_occurrences", "got integer"],
        ),
        ("rename_memory", {"old_name": "a"}, ["new_name is required"]),
        ("rename_memory", {"memory_name": "a", "new_name": "b"}, ["does not take memory_name"]),
        ("search_memories", {"query": "x", "limit": 0}, ["limit"]),
        ("search_memories", {"query": "x", "limit": "5"}, ["limit", "got string"]),
        ("search_memories", {"query": "  "}, ["query"]),
        ("list_memories", {"prefix": ["F"]}, ["prefix"]),
        ("list_memories", {"topic": None}, ["topic", "got null"]),
    ]
    for tool, arguments, words in cases:
        text = await refused(session, tool, **arguments)
        assert text.startswith("[invalid-arguments] "), (tool, arguments, text)
        for word in words:
            assert word in text, (tool, arguments, text)
    # A server that survived all of that still answers.
    await ok(session, "list_memories")


async def test_tools_are_listed_with_schemas_and_annotations_that_are_enforced(
    ws: Workspace,
) -> None:
    before = snapshot(ws.tmp)
    async with mcp_server(ws) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        await check_wrong_arguments_are_refused(session)
    assert outside("cache", snapshot(ws.tmp)) == outside("cache", before)

    assert set(tools) == TOOLS
    # Serena's six tools take Serena's parameters: the same names in the same order, types,
    # defaults and required ones; memory-ls's own parameters follow them and are optional.
    for name, serena in SERENA_SCHEMAS.items():
        schema = tools[name].input_schema
        assert schema.get("required", []) == serena.get("required", []), name
        assert list(schema["properties"])[: len(serena["properties"])] == list(
            serena["properties"]
        ), name
        for argument, expected in serena["properties"].items():
            published = schema["properties"][argument]
            assert {key: published.get(key) for key in expected} == expected, (name, argument)
    write = tools["write_memory"]
    assert write.input_schema["required"] == ["memory_name", "content"]
    assert schema_of(write, "scope")["enum"] == ["project", "global"]
    assert schema_of(write, "tags")["items"] == {"type": "string"}
    for word in ("ALL-CAPS", "global/", "topic", "in place"):
        assert word in (write.description or "")
    assert schema_of(tools["list_memories"], "scope")["enum"] == ["project", "global", "all"]
    assert schema_of(tools["search_memories"], "limit")["minimum"] == 1

    assert schema_of(tools["find_memories_about"], "limit")["minimum"] == 1
    assert "before changing a file" in (tools["find_memories_about"].description or "")
    for name in ("read_memory", "list_memories", "search_memories", "find_memories_about"):
        annotations = tools[name].annotations
        assert annotations is not None and annotations.read_only_hint is True, name
    for name, idempotent in (
        ("write_memory", True),
        ("edit_memory", False),
        ("delete_memory", True),
        ("rename_memory", False),
    ):
        annotations = tools[name].annotations
        assert annotations is not None
        assert annotations.read_only_hint is False, name
        assert annotations.destructive_hint is True, name
        assert annotations.idempotent_hint is idempotent, name
        assert annotations.open_world_hint is False, name

    # The structured results are published in the SPEC 3.3 shapes.
    output = write.output_schema
    assert output is not None
    assert set(output["required"]) == {
        "name",
        "path",
        "scope",
        "folder",
        "created",
        "routedBy",
        "version",
        "previousVersion",
        "bytesBefore",
        "bytesAfter",
        "diagnostics",
    }
    assert output["properties"]["routedBy"]["enum"] == [
        "existing",
        "prefix",
        "topic",
        "global",
        "default",
    ]
    search_output = tools["search_memories"].output_schema
    assert search_output is not None and "memories" in search_output["properties"]


async def test_write_is_routed_and_says_where_and_why(ws: Workspace) -> None:
    async with mcp_server(ws) as session:
        text, result = await ok(session, "write_memory", memory_name="FEATURE_auth", content="A\n")
        target = ws.feature / "FEATURE_auth.md"
        version = version_of(b"A\n")
        assert text == (
            f"Saved FEATURE_auth: created at {target} "
            f"(routed by prefix FEATURE to the additional folder feature); 2 bytes, version "
            f"{version}.\nChecked: no problems found."
        )
        assert result == {
            "name": "FEATURE_auth",
            "path": str(target),
            "scope": "project",
            "folder": str(ws.feature),
            "created": True,
            "routedBy": "prefix",
            "version": version,
            "previousVersion": None,
            "bytesBefore": None,
            "bytesAfter": 2,
            "diagnostics": [],
        }
        assert target.read_text() == "A\n"

        text, result = await ok(session, "write_memory", memory_name="notes", content="n")
        assert result["routedBy"] == "default"
        assert text.startswith(
            f"Saved notes: created at {ws.primary / 'notes.md'} "
            "(no routing prefix applies, so the primary folder); 1 bytes, version"
        )

        text, result = await ok(session, "write_memory", memory_name="BUGFIX_x", content="b")
        assert result["path"] == str(ws.primary / "BUGFIX_x.md")
        assert "prefix BUGFIX matches no additional folder" in text
        assert "FEATURE_" in text and "SPEC_" in text

        text, result = await ok(session, "write_memory", memory_name="auth/login", content="t")
        assert (result["path"], result["routedBy"]) == (
            str(ws.primary / "auth" / "login.md"),
            "topic",
        )
        assert "topic path" in text

        text, result = await ok(
            session, "write_memory", memory_name="global/prefs", content="g", tags=["me"]
        )
        assert result["path"] == str(ws.global_folder / "prefs.md")
        assert (result["scope"], result["routedBy"]) == ("global", "global")
        assert "global folder" in text
        assert "tags: [me]\n" in (ws.global_folder / "prefs.md").read_text()

        text, result = await ok(session, "write_memory", memory_name="FEATURE_auth", content="B\n")
        assert (result["created"], result["routedBy"]) == (False, "existing")
        assert text == (
            f"Saved FEATURE_auth: replaced in place at {target} "
            f"(it already existed in the additional folder feature); 2 -> 2 bytes, version "
            f"{version} -> {version_of(target.read_bytes())}.\nChecked: no problems found."
        )
        assert target.read_text() == "B\n"
        assert not (ws.primary / "FEATURE_auth.md").exists()

        # The configured folder plan does not exist: PLAN_ names go to the primary folder...
        text, result = await ok(session, "write_memory", memory_name="PLAN_a", content="a")
        assert result["path"] == str(ws.primary / "PLAN_a.md")
        assert f"the additional folder {ws.plan} is configured but does not exist" in text
        assert not ws.plan.exists()  # routing never creates an additional folder
        # ...until it appears while the server runs.
        ws.plan.mkdir()
        _, result = await ok(session, "write_memory", memory_name="PLAN_b", content="b")
        assert (result["path"], result["routedBy"]) == (str(ws.plan / "PLAN_b.md"), "prefix")


async def test_edit_changes_a_memory_in_place_in_an_additional_folder(ws: Workspace) -> None:
    target = ws.spec / "SPEC_api.md"
    target.write_text("---\nowner: team\n---\nThe API uses v1.\nv1 is old.\n")
    async with mcp_server(ws) as session:
        text, result = await ok(
            session,
            "edit_memory",
            memory_name="SPEC_api",
            needle="uses v1",
            repl="uses v2",
            mode="literal",
        )
        assert {k: result[k] for k in ("name", "path", "replacements", "diagnostics")} == {
            "name": "SPEC_api",
            "path": str(target),
            "replacements": 1,
            "diagnostics": [],
        }
        assert text == (
            f"Edited SPEC_api in place at {target} (1 replacement; "
            f"{result['bytesBefore']} -> {result['bytesAfter']} bytes, version "
            f"{result['previousVersion']} -> {version_of(target.read_bytes())}).\n"
            "Checked: no problems found."
        )
        assert "The API uses v2.\nv1 is old.\n" in target.read_text()
        assert "owner: team" in target.read_text()

        before = snapshot(ws.tmp)
        for needle, code in (("v", "[ambiguous-match] "), ("zz", "[no-match] ")):
            text = await refused(
                session,
                "edit_memory",
                memory_name="SPEC_api",
                needle=needle,
                repl="w",
                mode="literal",
            )
            assert text.startswith(code), text
        assert outside("cache", snapshot(ws.tmp)) == outside("cache", before)

        text, result = await ok(
            session,
            "edit_memory",
            memory_name="SPEC_api",
            needle=r"v(\d)",
            repl="version $!1",
            mode="regex",
            allow_multiple_occurrences=True,
        )
        assert result["replacements"] == 2
        assert "uses version 2.\nversion 1 is old.\n" in target.read_text()
        assert sorted(p.name for p in ws.spec.iterdir()) == ["SPEC_api.md"]
        assert not ws.primary.exists()


HOSTILE_NAMES = [
    "../x",
    "../../escape",
    "/etc/passwd_x",
    "FEATURE_a/../../../../x",
    "global/../../x",
    "x\x00y",
    "",
    "..",
    "global",
]
# Names memory-ls will not create, though Serena writes files with them: looked up (so
# not found here), refused only where they would be created.
UNCREATABLE_NAMES = ["a\\b", "a:b", "bidi\u202etxt", "  ", "CON", "a" * 253]


async def test_hostile_names_are_refused_and_nothing_is_written(ws: Workspace) -> None:
    (ws.feature / "FEATURE_keep.md").write_text("keep\n")
    before = snapshot(ws.tmp)
    async with mcp_server(ws) as session:
        for name in HOSTILE_NAMES + UNCREATABLE_NAMES:
            lookup = "[not-found] " if name in UNCREATABLE_NAMES else "[invalid-name] Invalid "
            for tool, arguments, expected in (
                ("write_memory", {"memory_name": name, "content": "pwned"}, None),
                (
                    "write_memory",
                    {"memory_name": name, "content": "pwned", "scope": "global"},
                    None,
                ),
                ("rename_memory", {"old_name": "FEATURE_keep", "new_name": name}, None),
                ("rename_memory", {"old_name": name, "new_name": "FEATURE_x"}, lookup),
                (
                    "edit_memory",
                    {"memory_name": name, "needle": "k", "repl": "p", "mode": "literal"},
                    lookup,
                ),
                ("delete_memory", {"memory_name": name}, lookup),
                ("read_memory", {"memory_name": name}, lookup),
            ):
                text = await refused(session, tool, **arguments)
                prefix = expected or "[invalid-name] Invalid memory name "
                assert text.startswith(prefix), (name, tool, text)
        text = await refused(session, "write_memory", memory_name="../x", content="pwned")
        assert text.startswith("[invalid-name] Invalid memory name '../x': ")
    assert outside("cache", snapshot(ws.tmp)) == outside("cache", before)


async def test_not_found_names_the_folders_searched_and_the_closest_memories(
    ws: Workspace,
) -> None:
    (ws.primary / "payments").mkdir(parents=True)
    (ws.primary / "payments" / "retry_policy.md").write_text("retry\n")
    async with mcp_server(ws, *ws.flags()) as session:
        result = await call(session, "edit_memory", **_edit_args("payments/retry_polcy"))
        assert result.is_error
        assert text_of(result).startswith(
            "[not-found] No memory named 'payments/retry_polcy' in the project scope "
            "(searched .serena/memories, "
        )
        assert text_of(result).endswith(" Did you mean payments/retry_policy?")
        assert result.structured_content == {
            "code": "not-found",
            "suggestions": ["payments/retry_policy"],
        }
        # A file Serena wrote under a name memory-ls would not create is read as Serena reads it.
        (ws.primary / "what?.md").write_text("asked\n")
        text, _result = await ok(session, "read_memory", memory_name="what?")
        assert text == "asked\n"


def _edit_args(name: str) -> dict[str, Any]:
    return {
        "memory_name": name,
        "needle": "retry",
        "repl": "x",
        "mode": "literal",
        "allow_multiple_occurrences": False,
    }


async def test_refusals_carry_the_spec_code(ws: Workspace) -> None:
    (ws.vendor / "VENDOR_lib.md").write_text("vendored\n")
    # A file where the primary folder should be: saving there fails in the file system.
    ws.primary.parent.mkdir()
    ws.primary.write_text("not a folder\n")
    async with mcp_server(ws, *ws.flags(), "--max-memory-bytes", "64") as session:
        await ok(session, "write_memory", memory_name="FEATURE_a", content="a")
        await ok(session, "write_memory", memory_name="FEATURE_b", content="b")
        before = snapshot(ws.tmp)
        assert (await refused(session, "read_memory", memory_name="nope")).startswith(
            "[not-found] No memory named 'nope'"
        )
        assert (
            await refused(session, "rename_memory", old_name="FEATURE_a", new_name="FEATURE_b")
        ).startswith("[exists] ")
        assert (
            await refused(session, "write_memory", memory_name="VENDOR_new", content="x")
        ).startswith("[read-only] ")
        assert (await refused(session, "delete_memory", memory_name="VENDOR_lib")).startswith(
            "[read-only] "
        )
        assert (
            await refused(session, "write_memory", memory_name="FEATURE_big", content="x" * 65)
        ).startswith("[too-large] ")
        assert outside("cache", snapshot(ws.tmp)) == outside("cache", before)
        # The file system refuses: `io-error`, with what failed, not a crash.
        text = await refused(session, "write_memory", memory_name="notes", content="x")
        assert text.startswith("[io-error] The file system refused to create the folder ")
        assert str(ws.primary) in text
        # The write got as far as taking the folder's lock (a file in the user's cache).
        assert outside("cache", snapshot(ws.tmp)) == outside("cache", before)
        # The server is still there for the next call.
        await ok(session, "write_memory", memory_name="FEATURE_c", content="c")


async def test_read_list_search(ws: Workspace) -> None:
    async with mcp_server(ws) as session:
        await ok(
            session,
            "write_memory",
            memory_name="FEATURE_login",
            content="# Login\nUses OAuth tokens.\n",
            tags=["auth", "security"],
        )
        await ok(session, "write_memory", memory_name="style", content="Tabs, not spaces.\n")

        answer = await call(session, "read_memory", memory_name="mem:FEATURE_login.md")
        result = answer.structured_content or {}
        assert result["content"] == "# Login\nUses OAuth tokens.\n"
        assert result["tags"] == ["auth", "security"]
        assert (result["path"], result["readOnly"]) == (str(ws.feature / "FEATURE_login.md"), False)
        assert result["createdAt"] and result["updatedAt"]
        # The text is the whole file, frontmatter and all, as Serena's read_memory answers.
        file_text = (ws.feature / "FEATURE_login.md").read_text()
        assert file_text.startswith("---\n") and file_text.endswith("# Login\nUses OAuth tokens.\n")
        assert [block.text for block in answer.content if isinstance(block, TextContent)] == [
            file_text
        ]

        answer = await call(session, "list_memories")
        result = answer.structured_content or {}
        assert [m["name"] for m in result["memories"]] == ["FEATURE_login", "style"]
        serena_text, text = (b.text for b in answer.content if isinstance(b, TextContent))
        assert json.loads(serena_text) == {"memories": ["FEATURE_login", "style"]}
        assert text.startswith("2 memories, all listed above.")
        assert f"FEATURE_... -> {ws.feature}" in text
        assert [m["title"] for m in result["memories"]] == ["Login", "Tabs, not spaces."]
        text, _ = await ok(session, "list_memories", view="titles")
        assert "- FEATURE_login: Login [tags auth, security]\n- style: Tabs, not spaces.\n" in text
        _, result = await ok(session, "list_memories", tags=["auth"], scope="project")
        assert [m["name"] for m in result["memories"]] == ["FEATURE_login"]
        _, result = await ok(session, "list_memories", prefix="sty")
        assert [m["name"] for m in result["memories"]] == ["style"]
        _, result = await ok(session, "list_memories", scope="global")
        assert result["memories"] == []

        text, result = await ok(session, "search_memories", query="oauth")
        hit = result["memories"][0]
        assert (hit["name"], hit["title"], hit["matched"]) == ("FEATURE_login", "Login", ["oauth"])
        # Line numbers count in the file, frontmatter included.
        lines = (ws.feature / "FEATURE_login.md").read_text().splitlines()
        line = lines.index("Uses OAuth tokens.") + 1
        assert line > 2 and hit["lines"] == [{"line": line, "text": "Uses OAuth tokens."}]
        assert f"   {line}: Uses OAuth tokens." in text
        assert "1. FEATURE_login — Login (score " in text
        text, result = await ok(session, "search_memories", query="tabs", tags=["auth"])
        assert result["memories"] == [] and result["total"] == 0
        assert text == "No memory matched any of these words (tabs). Try other or fewer words."


async def test_a_memory_with_an_unresolved_merge_conflict_is_read_after_a_warning(
    ws: Workspace,
) -> None:
    conflicted = (
        "---\ntags: [ops]\n---\n# Deploy\n<<<<<<< HEAD\nShip weekly.\n=======\n"
        "Ship daily.\n>>>>>>> feature\n"
    )
    (ws.primary).mkdir(parents=True)
    (ws.primary / "deploy.md").write_text(conflicted)
    async with mcp_server(ws) as session:
        answer = await call(session, "read_memory", memory_name="deploy")
        assert not answer.is_error
        warning, text = (b.text for b in answer.content if isinstance(b, TextContent))
        assert warning.startswith(
            "Warning [merge-conflict]: memory 'deploy' holds 1 unresolved git merge conflict(s) "
            "(from line 5: `<<<<<<<`"
        )
        assert "do not act on either side" in warning
        assert text == conflicted  # the file itself, unchanged, after the warning
        result = answer.structured_content or {}
        assert result["warning"] == warning


async def test_find_memories_about_a_file_before_changing_it(ws: Workspace) -> None:
    (ws.root / "src" / "shop").mkdir(parents=True)
    (ws.root / "src" / "shop" / "cart.py").write_text("class Cart: ...\n")
    async with mcp_server(ws) as session:
        await ok(
            session,
            "write_memory",
            memory_name="cart_rules",
            content="# Cart rules\nTotals: [cart](../../src/shop/cart.py).\n"
            "Test `src/shop/cart.py` too.\n",
        )
        await ok(session, "write_memory", memory_name="FEATURE_cart", content="See `cart.py`.\n")
        await ok(session, "write_memory", memory_name="style", content="Use `Cart.total()`.\n")
        await ok(session, "write_memory", memory_name="unrelated", content="A cart, a py.\n")

        text, result = await ok(session, "find_memories_about", target="src/shop/cart.py")
        assert [(m["name"], m["match"]) for m in result["memories"]] == [
            ("cart_rules", "path"),
            ("FEATURE_cart", "name"),
        ]
        rules = (ws.primary / "cart_rules.md").read_text().splitlines()
        link = rules.index("Totals: [cart](../../src/shop/cart.py).") + 1
        assert [line["line"] for line in result["memories"][0]["lines"]] == [link, link + 1]
        assert text.splitlines() == [
            "2 memories mention src/shop/cart.py:",
            f"- cart_rules (Cart rules): {link}: Totals: [cart](../../src/shop/cart.py). | "
            f"{link + 1}: Test `src/shop/cart.py` too.",
            f"- FEATURE_cart: {result['memories'][1]['lines'][0]['line']}: See `cart.py`.",
        ]

        text, result = await ok(session, "find_memories_about", target="cart.py", limit=1)
        assert [m["name"] for m in result["memories"]] == ["cart_rules"]
        assert result["more"] == 1
        assert "2 memories mention cart.py (the best 1 here):" in text
        assert text.endswith("1 more memory: pass a larger limit.")

        _, result = await ok(session, "find_memories_about", target="Cart.total")
        assert [(m["name"], m["match"]) for m in result["memories"]] == [("style", "symbol")]

        # Changed behind the server's back: seen once the watch reported it.
        (ws.primary / "cart_rules.md").write_text("Nothing about it any more.\n")
        (ws.primary / "new_note.md").write_text("Moved from `./src/shop/cart.py:10`.\n")
        text, result = await until(
            session,
            "find_memories_about",
            lambda found: "new_note" in [m["name"] for m in found["memories"]],
            target="./src/shop/cart.py",
        )
        assert [m["name"] for m in result["memories"]] == ["new_note", "FEATURE_cart"]

        text, result = await ok(session, "find_memories_about", target="src/shop/none.py")
        assert (text, result["memories"], result["more"]) == (
            "No memory mentions src/shop/none.py.",
            [],
            0,
        )
        assert "[invalid-arguments]" in await refused(
            session, "find_memories_about", target="../../etc/passwd"
        )
        assert "[invalid-arguments]" in await refused(session, "find_memories_about", target=" ")


async def test_rename_reroutes_and_rewrites_references_then_delete(ws: Workspace) -> None:
    async with mcp_server(ws) as session:
        await ok(session, "write_memory", memory_name="draft", content="Draft.\n")
        await ok(session, "write_memory", memory_name="index", content="See [[draft]].\n")

        text, result = await ok(session, "rename_memory", old_name="draft", new_name="SPEC_v2")
        target = ws.spec / "SPEC_v2.md"
        assert result == {
            "name": "draft",
            "newName": "SPEC_v2",
            "path": str(target),
            "updatedReferences": 1,
            "rewritten": ["index"],
            "moreRewritten": 0,
            "diagnostics": [],
        }
        assert text == (
            f"Renamed draft to SPEC_v2 at {target} (routed by prefix SPEC to the additional "
            "folder spec); 1 reference in other memories updated. References rewritten in "
            "index.\nChecked: no problems found."
        )
        assert target.read_text() == "Draft.\n"
        assert not (ws.primary / "draft.md").exists()
        assert (ws.primary / "index.md").read_text() == "See [[SPEC_v2]].\n"

        text, result = await ok(session, "delete_memory", memory_name="SPEC_v2")
        index = str(ws.primary / "index.md")
        assert result == {
            "name": "SPEC_v2",
            "path": str(target),
            "brokenLinks": [{"name": "index", "path": index, "line": 1}],
            "moreBrokenLinks": 0,
        }
        assert text == (
            f"Deleted SPEC_v2 ({target}). 1 memory links to it and now has a broken link: "
            "index (line 1). Edit it to link elsewhere, or write a memory named SPEC_v2 again."
        )
        assert not target.exists()
        assert ws.spec.is_dir()  # the shared folder stays, empty
        assert (await refused(session, "delete_memory", memory_name="SPEC_v2")).startswith(
            "[not-found] "
        )


async def test_rename_rewrites_references_written_behind_the_server_s_back(
    ws: Workspace,
) -> None:
    async with mcp_server(ws) as session:
        await ok(session, "write_memory", memory_name="draft", content="Draft.\n")
        await ok(session, "write_memory", memory_name="index", content="See [[about]].\n")
        await ok(session, "write_memory", memory_name="FEATURE_plain", content="Nothing.\n")
        # The server has indexed the store for search (and renames) by now.
        _, result = await ok(session, "search_memories", query="Draft")
        assert [hit["name"] for hit in result["memories"]] == ["draft"]

        # Another process writes referrers without the server being told: an edit in place
        # (same size; only the time tells), new files in other folders, code and frontmatter.
        index = ws.primary / "index.md"
        before = index.stat().st_mtime_ns
        index.write_text(index.read_text().replace("[[about]]", "[[draft]]"))
        os.utime(index, ns=(before + 10**9, before + 10**9))
        notes = ws.feature / "FEATURE_notes.md"
        notes.write_text("---\nsee: mem:draft\n---\n[[draft|the draft]]\n```\nmem:draft\n```\n")
        ws.global_folder.mkdir(parents=True, exist_ok=True)
        mine = ws.global_folder / "mine.md"
        mine.write_text("Mine: `mem:draft`.\n")
        # Once the watch reported them (a rename rewrites what the server has seen).
        referrers = {"draft", "index", "FEATURE_notes", "global/mine"}
        await until(
            session,
            "search_memories",
            lambda found: {m["name"] for m in found["memories"]} >= referrers,
            query="draft",
        )

        _, result = await ok(session, "rename_memory", old_name="draft", new_name="SPEC_v2")
        assert result["updatedReferences"] == 5
        assert (ws.primary / "index.md").read_text().endswith("See [[SPEC_v2]].\n")
        assert notes.read_text() == (
            "---\nsee: mem:SPEC_v2\n---\n[[SPEC_v2|the draft]]\n```\nmem:SPEC_v2\n```\n"
        )
        assert mine.read_text() == "Mine: `mem:SPEC_v2`.\n"
        assert (ws.feature / "FEATURE_plain.md").read_text().endswith("Nothing.\n")

        # And again after the rename: what changed since is read as it is now.
        later = ws.spec / "SPEC_later.md"
        later.write_text("After: [[SPEC_v2]]\n")
        await until(
            session,
            "search_memories",
            lambda found: "SPEC_later" in [m["name"] for m in found["memories"]],
            query="After",
        )
        _, result = await ok(session, "rename_memory", old_name="SPEC_v2", new_name="final")
        assert result["updatedReferences"] == 6
        assert later.read_text() == "After: [[final]]\n"
        assert mine.read_text() == "Mine: `mem:final`.\n"


async def test_a_memory_written_through_mcp_completes_in_the_language_server(
    tmp_path: Path,
) -> None:
    # Both servers on one store: the language server with its initialization options,
    # the MCP server with the same folders as flags.
    lsp_ws = make_workspace(tmp_path)
    options = lsp_ws.init_options()
    flags = [
        "--root",
        str(lsp_ws.root),
        "--additional-folders",
        ",".join(options["additionalFolders"]),
        "--global-folder",
        options["globalFolder"],
    ]
    shared_env = {k: SERVER_ENV[k] for k in ("HOME", "XDG_CACHE_HOME", "SERENA_HOME")}
    async with session(lsp_ws) as lsp, mcp_process(flags, shared_env, tmp_path) as agent:
        uri = lsp.open("notes/agent.md", "See [[FEATURE_\n")
        position = (0, lsp.units("See [[FEATURE_"))

        async def completed_names() -> set[str]:
            result = await lsp.complete(uri, *position)
            return {item.label for item in result.items} if result else set()

        assert "FEATURE_from_agent" not in await completed_names()
        _, result = await ok(agent, "write_memory", memory_name="FEATURE_from_agent", content="x")
        assert result["path"] == str(lsp_ws.root / "shared" / "feature" / "FEATURE_from_agent.md")

        loop = asyncio.get_running_loop()
        written = loop.time()
        while "FEATURE_from_agent" not in await completed_names():
            assert loop.time() - written < 1.0, "not offered by completion within a second"
            await asyncio.sleep(0.02)


def serena_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool call as an agent configured for Serena sends it (the JSON of `tools/call`)."""
    return {"name": name, "arguments": arguments}


async def send(session: ClientSession, call_: Mapping[str, Any]) -> CallToolResult:
    """Send one tool call verbatim."""
    return await session.call_tool(call_["name"], call_["arguments"])


def texts(result: CallToolResult) -> list[str]:
    """The text blocks of an answer."""
    return [block.text for block in result.content if isinstance(block, TextContent)]


async def test_an_agent_configured_for_serena_works_unchanged(ws: Workspace) -> None:
    (ws.vendor / "VENDOR_lib.md").write_text("Vendored, read-only.\n")
    login = "# Login flow\n\nThe session cookie holds `v1` tokens; see `mem:auth/tokens`.\n"
    tokens = "Tokens expire after 1h.\nRefresh tokens are rotated; tokens live 30d.\n"
    overview = "# Overview\n\nLogin: `mem:auth/login_flow`; tokens: `mem:auth/tokens`.\n"
    async with mcp_server(ws) as session:
        for call_ in (
            serena_call("write_memory", {"memory_name": "auth/login_flow", "content": login}),
            serena_call("write_memory", {"memory_name": "auth/tokens", "content": tokens}),
            serena_call("write_memory", {"memory_name": "global/editor", "content": "Tabs.\n"}),
            serena_call(
                "write_memory",
                {"memory_name": "project_overview", "content": overview, "max_chars": 200},
            ),
        ):
            answer = await send(session, call_)
            assert not answer.is_error, texts(answer)
            assert answer.structured_content is not None
            assert texts(answer)[0].startswith("Saved ")
        assert (ws.primary / "auth" / "login_flow.md").read_text() == login
        assert (ws.primary / "auth" / "tokens.md").read_text() == tokens
        assert (ws.primary / "project_overview.md").read_text() == overview
        assert (ws.global_folder / "editor.md").read_text() == "Tabs.\n"

        # max_chars as Serena checks it: -1 (the default) is Serena's 150000 characters.
        before = snapshot(ws.tmp)
        for arguments, limit in (
            ({"memory_name": "big", "content": "x" * 201, "max_chars": 200}, 200),
            ({"memory_name": "big", "content": "x" * 150_001}, 150_000),
            ({"memory_name": "big", "content": "x" * 150_001, "max_chars": -1}, 150_000),
        ):
            answer = await send(session, serena_call("write_memory", arguments))
            assert answer.is_error
            assert texts(answer) == [
                f"[too-large] Content for big is too long. Max length is {limit} characters. "
                "Please make the content shorter."
            ]
        assert outside("cache", snapshot(ws.tmp)) == outside("cache", before)
        answer = await send(
            session, serena_call("write_memory", {"memory_name": "big", "content": "x" * 150_000})
        )
        assert not answer.is_error, texts(answer)
        await send(session, serena_call("delete_memory", {"memory_name": "big"}))

        # read_memory answers with the file's text and nothing else, as Serena does.
        answer = await send(session, serena_call("read_memory", {"memory_name": "auth/tokens"}))
        assert texts(answer) == [tokens]
        assert answer.structured_content is not None
        assert answer.structured_content["path"] == str(ws.primary / "auth" / "tokens.md")

        # list_memories: Serena's JSON first (sorted names, read-only ones apart).
        listings: dict[str, Any] = {}
        for topic in (None, "auth", "auth/", "global", "nothing_here"):
            arguments = {} if topic is None else {"topic": topic}
            answer = await send(session, serena_call("list_memories", arguments))
            assert not answer.is_error, texts(answer)
            assert answer.structured_content is not None
            listings[str(topic)] = json.loads(texts(answer)[0])
        assert listings == {
            "None": {
                "memories": [
                    "auth/login_flow",
                    "auth/tokens",
                    "global/editor",
                    "project_overview",
                ],
                "read_only_memories": ["VENDOR_lib"],
            },
            "auth": {"memories": ["auth/login_flow", "auth/tokens"]},
            "auth/": {"memories": ["auth/login_flow", "auth/tokens"]},
            "global": {"memories": ["global/editor"]},
            "nothing_here": {},
        }

        # edit_memory: regex with Serena's $!1 (the rest of repl verbatim, backslashes too),
        # literal, and several occurrences only when allowed.
        for call_ in (
            serena_call(
                "edit_memory",
                {
                    "memory_name": "auth/tokens",
                    "needle": r"expire after (\d+)h\.$",
                    "repl": r"expire after $!1 hours (see C:\temp\n).",
                    "mode": "regex",
                },
            ),
            serena_call(
                "edit_memory",
                {
                    "memory_name": "auth/login_flow",
                    "needle": "`v1`",
                    "repl": "`v2`",
                    "mode": "literal",
                },
            ),
            serena_call(
                "edit_memory",
                {
                    "memory_name": "auth/tokens",
                    "needle": "tokens",
                    "repl": "credentials",
                    "mode": "literal",
                    "allow_multiple_occurrences": True,
                },
            ),
        ):
            answer = await send(session, call_)
            assert not answer.is_error, texts(answer)
            assert texts(answer)[0].startswith("Edited ")
        tokens_path = ws.primary / "auth" / "tokens.md"
        assert tokens_path.read_text() == (
            "Tokens expire after 1 hours (see C:\\temp\\n).\n"
            "Refresh credentials are rotated; credentials live 30d.\n"
        )
        assert "`v2` tokens" in (ws.primary / "auth" / "login_flow.md").read_text()
        answer = await send(
            session,
            serena_call(
                "edit_memory",
                {
                    "memory_name": "auth/tokens",
                    "needle": "credentials",
                    "repl": "x",
                    "mode": "literal",
                },
            ),
        )
        assert answer.is_error and texts(answer)[0].startswith("[ambiguous-match] ")

        # rename_memory moves the file and rewrites every `mem:` reference to it.
        answer = await send(
            session,
            serena_call(
                "rename_memory", {"old_name": "auth/tokens", "new_name": "auth/credentials"}
            ),
        )
        assert not answer.is_error, texts(answer)
        assert answer.structured_content == {
            "name": "auth/tokens",
            "newName": "auth/credentials",
            "path": str(ws.primary / "auth" / "credentials.md"),
            "updatedReferences": 2,
            "rewritten": ["auth/login_flow", "project_overview"],
            "moreRewritten": 0,
            "diagnostics": [],
        }
        assert not tokens_path.exists()
        assert "`mem:auth/credentials`" in (ws.primary / "auth" / "login_flow.md").read_text()
        assert "tokens: `mem:auth/credentials`" in (ws.primary / "project_overview.md").read_text()

        answer = await send(
            session, serena_call("delete_memory", {"memory_name": "project_overview"})
        )
        assert not answer.is_error, texts(answer)
        assert not (ws.primary / "project_overview.md").exists()

        answer = await send(session, serena_call("list_memories", {"topic": "auth"}))
        assert json.loads(texts(answer)[0]) == {"memories": ["auth/credentials", "auth/login_flow"]}
        # A refusal is a tool error starting with the code, also for Serena's tools.
        answer = await send(
            session, serena_call("write_memory", {"memory_name": "VENDOR_x", "content": "x"})
        )
        assert answer.is_error and texts(answer)[0].startswith("[read-only] ")

    assert sorted(str(p.relative_to(ws.primary)) for p in ws.primary.rglob("*.md")) == [
        "auth/credentials.md",
        "auth/login_flow.md",
    ]


async def test_a_tool_prefix_keeps_clear_of_serenas_own_tools(ws: Workspace) -> None:
    async with mcp_server(ws, *ws.flags(), "--tool-prefix", "mls_") as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(tools) == {"mls_" + name for name in TOOLS}
        # The descriptions and instructions name the tools as they are offered.
        assert "`mls_list_memories` shows the prefixes" in (
            tools["mls_write_memory"].description or ""
        )
        assert "write_memory" not in (tools["mls_edit_memory"].description or "").replace(
            "mls_write_memory", ""
        )
        assert (
            tools["mls_edit_memory"].input_schema["required"]
            == SERENA_SCHEMAS["edit_memory"]["required"]
        )

        _, result = await ok(session, "mls_write_memory", memory_name="FEATURE_x", content="x")
        assert result["path"] == str(ws.feature / "FEATURE_x.md")
        text = await refused(
            session, "mls_rename_memory", old_name="FEATURE_x", memory_name="FEATURE_y"
        )
        assert text.startswith("[invalid-arguments] mls_rename_memory does not take memory_name")
        # The unprefixed names belong to Serena here: memory-ls does not answer to them.
        answer = await call(session, "write_memory", memory_name="FEATURE_y", content="y")
        assert answer.is_error
        assert not (ws.feature / "FEATURE_y.md").exists()


@pytest.mark.parametrize("prefix", ["mls ", "serena/", "é_", "x" * 65])
def test_a_tool_prefix_that_makes_invalid_tool_names_is_a_usage_error(
    ws: Workspace, prefix: str
) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", "mcp", "--tool-prefix", prefix, *ws.flags()],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "HOME": str(ws.tmp / "home")},
        timeout=30,
    )
    assert run.returncode == 2, run.stderr
    assert "--tool-prefix" in run.stderr and "A-Z a-z 0-9 _ - ." in run.stderr


async def test_a_task_sentence_finds_the_memory_ranked_with_what_it_matched(ws: Workspace) -> None:
    async with mcp_server(ws) as session:
        await ok(
            session,
            "write_memory",
            memory_name="auth/session_tokens",
            content="# Session tokens\nA session token expires after 4 hours of inactivity.\n",
        )
        await ok(
            session,
            "write_memory",
            memory_name="payments/retry_policy",
            content="# Retry policy\nFailed captures are retried 5 times.\n",
        )
        await ok(session, "write_memory", memory_name="style", content="Tabs, not spaces.\n")

        text, result = await ok(session, "search_memories", query="how long do session tokens last")
        first = result["memories"][0]
        assert first["name"] == "auth/session_tokens"
        assert first["title"] == "Session tokens"
        assert first["matched"] == ["session", "tokens"]
        assert result["ignoredWords"] == ["how", "do"]
        assert [m["name"] for m in result["memories"]] == ["auth/session_tokens"]
        assert text.startswith("1 of 1 memory, best first (relevance: ")

        # `refund retry`: not every word matches, the memory holding some still comes back.
        _, result = await ok(session, "search_memories", query="refund retries")
        assert [(m["name"], m["matched"]) for m in result["memories"]] == [
            ("payments/retry_policy", ["retries"])
        ]
        # Strict mode: every word as written; the answer says what matches some of them.
        text, result = await ok(session, "search_memories", query="refund retries", all_words=True)
        assert result["memories"] == [] and result["someWords"] == 1
        assert text == (
            "No memory holds every one of these words (refund, retries); 1 memory match some "
            "of them (search without all_words to see them ranked)."
        )


async def test_a_search_answer_is_bounded_and_pages_with_a_cursor(ws: Workspace) -> None:
    long_line = "deploy " + "word " * 60
    for number in range(40):
        ws.primary.mkdir(parents=True, exist_ok=True)
        text = f"# Note {number}\n" + (long_line + "\n") * 5
        (ws.primary / f"note_{number:02d}.md").write_text(text)
    async with mcp_server(ws) as session:
        answer = await call(session, "search_memories", query="deploy")
        result = answer.structured_content or {}
        text = "".join(b.text for b in answer.content if isinstance(b, TextContent))
        assert len(result["memories"]) == 10, "the default limit"
        assert (result["total"], result["more"], result["next_cursor"]) == (40, 30, "10")
        assert all(len(m["lines"]) <= 3 for m in result["memories"])
        assert '30 more: call search_memories again with cursor="10".' in text
        # About 8,000 tokens at most, however large the limit.
        answer = await call(session, "search_memories", query="deploy", limit=40)
        result = answer.structured_content or {}
        size = sum(len(b.text) for b in answer.content if isinstance(b, TextContent))
        size += len(json.dumps(result))
        assert size <= 34_000 and 0 < len(result["memories"]) < 40
        assert result["more"] == 40 - len(result["memories"])
        # The next page starts where this one ended, and none comes twice.
        seen = [m["name"] for m in result["memories"]]
        _, page = await ok(session, "search_memories", query="deploy", cursor=result["next_cursor"])
        assert not set(seen) & {m["name"] for m in page["memories"]}


async def test_a_search_with_no_match_says_so_and_suggests_the_closest_words(
    ws: Workspace,
) -> None:
    # Issue 34: a search is never answered for other words than it asked ("kubernetes helm
    # chart" answered with `cart` memories); the closest words are a suggestion.
    async with mcp_server(ws) as session:
        await ok(session, "write_memory", memory_name="SPEC_payments_api", content="# API\n")
        await ok(
            session,
            "write_memory",
            memory_name="retries",
            content="---\ntags: [billing]\n---\nRetry failed billing runs.\n",
        )
        await ok(
            session, "write_memory", memory_name="tagged", content="---\ntags: [ledger]\n---\nx\n"
        )
        await ok(session, "write_memory", memory_name="cart", content="# Cart\nThe cart total.\n")
        text, result = await ok(session, "search_memories", query="paymnt")
        assert result["suggestion"] == "payments"
        assert result["memories"] == [] and result["total"] == 0
        assert text == (
            "No memory matched any of these words (paymnt). The closest words of memory names "
            'and tags: "payments" (not searched; search it if that is what you meant).'
        )
        text, result = await ok(session, "search_memories", query="kubernetes helm chart")
        assert result["memories"] == [] and result["suggestion"] == "kubernetes helm cart"
        assert text.startswith("No memory matched any of these words (kubernetes, helm, chart).")
        # A tag's words count too.
        _, result = await ok(session, "search_memories", query="biling")
        assert result["suggestion"] == "billing" and result["memories"] == []
        # A word only a tag holds is no text to find: no suggestion.
        text, tag_only = await ok(session, "search_memories", query="ledgr")
        assert "suggestion" not in tag_only and tag_only["memories"] == []
        assert text.endswith("Try other or fewer words.")
        # An exact match has none; no close word: nothing, and no suggestion.
        _, exact = await ok(session, "search_memories", query="payments")
        assert "suggestion" not in exact and exact["memories"]
        text, nothing = await ok(session, "search_memories", query="zqxwvj")
        assert "suggestion" not in nothing and nothing["memories"] == []
        assert text.startswith("No memory matched any of these words")
        # all_words means the words as typed.
        _, strict = await ok(session, "search_memories", query="paymnt", all_words=True)
        assert "suggestion" not in strict and strict["memories"] == []
