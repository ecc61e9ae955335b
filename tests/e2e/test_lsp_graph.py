"""`memory.graph` and `memory.preview` over workspace/executeCommand, on the real server."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from e2e_support import SERVER_ENV, Session, Workspace, make_workspace, session
from pygls.exceptions import JsonRpcException

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The standard workspace, with a broken link, a linked global memory and an orphan."""
    workspace = make_workspace(tmp_path_factory.mktemp("graph"))
    workspace.write(
        "shared/spec/SPEC_payments_api.md",
        "# Payments API\n\nUsed by [[FEATURE_checkout]]; see [[global/editor_tips]]"
        " and [[nowhere]].\n",
    )
    workspace.write("shared/feature/FEATURE_checkout.md", "# Checkout\n\n`mem:SPEC_payments_api`\n")
    return workspace


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(ws: Workspace) -> AsyncIterator[Session]:
    async with session(ws) as running:
        yield running


def names_and_edges(graph: dict[str, Any]) -> tuple[list[str], set[tuple[str, str]]]:
    names = [row[0] for row in graph["nodes"]]
    flat = graph["edges"]
    return names, {(names[flat[i]], names[flat[i + 1]]) for i in range(0, len(flat), 2)}


def cli_graph(ws: Workspace) -> dict[str, Any]:
    """What `memory-ls graph --json` says of the same store."""
    folders = ",".join(ws.init_options()["additionalFolders"])
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from memory_ls.cli import main; main(sys.argv[1:])",
            "graph",
            "--json",
            "--root",
            str(ws.root),
            "--additional-folders",
            folders,
            "--global-folder",
            str(ws.global_folder),
        ],
        env=SERVER_ENV,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


async def test_graph_has_every_memory_and_link_as_the_cli_says(
    server: Session, ws: Workspace
) -> None:
    graph = await server.command("memory.graph", {})
    names, edges = names_and_edges(graph)
    assert edges == {
        ("project_overview", "auth/login_flow"),
        ("SPEC_payments_api", "FEATURE_checkout"),
        ("SPEC_payments_api", "global/editor_tips"),
        ("SPEC_payments_api", "nowhere"),
        ("FEATURE_checkout", "SPEC_payments_api"),
    }
    # Two style_guide files: the global one is a different name; none is shadowed here.
    assert sorted(names) == sorted(
        [
            "project_overview",
            "auth/login_flow",
            "style_guide",
            "FEATURE_checkout",
            "SPEC_payments_api",
            "team_rules",
            "global/style_guide",
            "global/editor_tips",
            "nowhere",
        ]
    )
    flags = graph["flags"]
    rows = {row[0]: row for row in graph["nodes"]}
    assert rows["nowhere"][4] == flags["missing"]
    assert rows["team_rules"][4] & flags["orphan"]
    assert rows["SPEC_payments_api"][2:4] == [1, 3]
    cli = cli_graph(ws)
    assert cli["total"] == graph["total"] == {"nodes": 9, "edges": 5}
    assert sorted(names_and_edges(cli)[1]) == sorted(edges)


async def test_a_file_written_outside_appears(server: Session, ws: Workspace) -> None:
    ws.write(".serena/memories/late_arrival.md", "# Late\n\n[[project_overview]]\n")

    async def arrived() -> bool:
        graph = await server.command("memory.graph", {})
        return ("late_arrival", "project_overview") in names_and_edges(graph)[1]

    await server.eventually(arrived, "late_arrival's link in the graph")


async def test_broken_links_count_as_problems(server: Session) -> None:
    async def counted() -> bool:
        graph = await server.command("memory.graph", {"name": "SPEC"})
        rows = {row[0]: row for row in graph["nodes"]}
        return rows["SPEC_payments_api"][5] >= 1

    await server.eventually(counted, "SPEC_payments_api's broken-link problem")


async def test_filters_neighbourhood_and_limit(server: Session) -> None:
    near = await server.command("memory.graph", {"center": "FEATURE_checkout", "depth": 1})
    names, _ = names_and_edges(near)
    assert sorted(names) == ["FEATURE_checkout", "SPEC_payments_api"]
    assert near["nodes"][near["center"]][0] == "FEATURE_checkout"
    spec = await server.command("memory.graph", {"folder": "spec"})
    assert names_and_edges(spec)[0] == ["SPEC_payments_api", "nowhere"]
    top = await server.command("memory.graph", {"limit": 1})
    assert [row[0] for row in top["nodes"]] == ["SPEC_payments_api"]
    assert top["truncated"] is True


async def test_refusals_carry_the_spec_code(server: Session) -> None:
    for arguments, code in (
        ({"limit": "ten"}, "invalid-arguments"),
        ({"depth": 99}, "invalid-arguments"),
        ({"folder": "nowhere"}, "invalid-arguments"),
        ({"center": "no_such_memory"}, "not-found"),
        ({"colour": "red"}, "invalid-arguments"),
    ):
        with pytest.raises(JsonRpcException) as refused:
            await server.command("memory.graph", arguments)
        assert refused.value.data["code"] == code, arguments


async def test_preview_is_the_first_lines(server: Session) -> None:
    preview = await server.command("memory.preview", {"name": "project_overview"})
    assert preview["preview"].startswith("# Project overview")
    assert preview["tags"] == ["overview", "onboarding"]
    with pytest.raises(JsonRpcException) as refused:
        await server.command("memory.preview", {"name": "project_overvew"})
    assert refused.value.data["code"] == "not-found"
