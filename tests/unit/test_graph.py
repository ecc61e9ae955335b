"""The memory graph (core/operations/graph.py): nodes, edges, flags and filters from the indexes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory_ls.config import FolderSetting, Settings
from memory_ls.core.operations.graph import (
    MISSING,
    ORPHAN,
    READ_ONLY,
    SHADOWED,
    STALE,
    UNREAD,
    GraphCache,
    GraphQuery,
    memory_graph,
    store_graph,
)
from memory_ls.core.rules.errors import InvalidArguments, NotFound
from memory_ls.core.services.index import MemoryIndex
from memory_ls.core.storage.folders import StoreConfig, resolve_store_config
from memory_ls.core.store import Store


def make_config(tmp: Path) -> StoreConfig:
    """A primary folder, an additional one, a read-only vendor folder and a global folder."""
    root = tmp / "ws"
    for folder in (".serena/memories", "shared/spec", "shared/vendor", "../global"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    settings = Settings(
        additional_folders=(FolderSetting("shared/spec"), FolderSetting("shared/vendor", True)),
        global_folder=str(tmp / "global"),
    )
    return resolve_store_config(settings, str(root), environ={"SERENA_HOME": str(tmp / "serena")})


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def indexed(config: StoreConfig) -> MemoryIndex:
    index = MemoryIndex(config)
    index.scan()
    index.warm()
    return index


def by_name(graph: dict[str, Any]) -> dict[str, list[Any]]:
    return {row[0] + ("@" + str(row[1]) if row[1] >= 0 else ""): row for row in graph["nodes"]}


def edge_names(graph: dict[str, Any]) -> set[tuple[str, str]]:
    names = [row[0] for row in graph["nodes"]]
    flat = graph["edges"]
    return {(names[flat[i]], names[flat[i + 1]]) for i in range(0, len(flat), 2)}


@pytest.fixture
def store(tmp_path: Path) -> StoreConfig:
    config = make_config(tmp_path)
    ws = tmp_path / "ws"
    memories = ws / ".serena" / "memories"
    write(
        memories / "hub.md",
        "---\ntags: [core]\n---\n# Hub\nSee [[a]], [[a|again]], `mem:SPEC_api` and [[gone]].\n"
        "```\n[[in_code]]\n```\n",
    )
    write(memories / "a.md", "# A\nBack to [[hub]] and [[a]] itself, and [[global/tips]].\n")
    write(memories / "lonely.md", "# Nobody links here\nmem:hub is a bare mention.\n")
    write(memories / "paths.md", "# Paths\nSee `src/gone.py`.\n")
    write(ws / "shared" / "spec" / "SPEC_api.md", "---\ntags: [api, core]\n---\n# API\n")
    write(ws / "shared" / "vendor" / "a.md", "# Vendor's a, hidden by the primary a\n")
    write(tmp_path / "global" / "tips.md", "# Tips\n")
    return config


def test_nodes_and_edges_come_from_the_link_index(store: StoreConfig) -> None:
    graph = memory_graph(indexed(store), {})
    names = [row[0] for row in graph["nodes"]]
    # Every file is a node (the shadowed vendor `a` too) and one node per missing name.
    assert sorted(names) == sorted(
        ["a", "a", "global/tips", "hub", "lonely", "paths", "SPEC_api", "gone"]
    )
    # Links once per pair, no self-link, none from code blocks or bare `mem:` mentions.
    assert edge_names(graph) == {
        ("hub", "a"),
        ("hub", "SPEC_api"),
        ("hub", "gone"),
        ("a", "hub"),
        ("a", "global/tips"),
    }
    assert graph["total"] == {"nodes": 8, "edges": 5}
    assert graph["truncated"] is False
    assert graph["pending"] == 0
    assert graph["fields"] == ["name", "folder", "linksIn", "linksOut", "flags", "problems", "tags"]


def test_flags_counts_and_tags(store: StoreConfig, tmp_path: Path) -> None:
    paths_file = str(tmp_path / "ws" / ".serena" / "memories" / "paths.md")
    graph = memory_graph(indexed(store), {paths_file: ["stale-path", "broken-link"]})
    folders = [folder["label"] for folder in graph["folders"]]
    assert folders == ["memories", "spec", "vendor", "global"]
    nodes = by_name(graph)
    hub = nodes["hub@0"]
    assert hub[2:4] == [1, 3]  # linked from a; links to a, SPEC_api, gone
    assert [graph["tags"][i] for i in hub[6]] == ["core"]
    assert nodes["SPEC_api@1"][2] == 1
    assert {graph["tags"][i] for i in nodes["SPEC_api@1"][6]} == {"api", "core"}
    vendor_a = nodes["a@2"]
    assert vendor_a[4] & SHADOWED and vendor_a[4] & READ_ONLY and vendor_a[4] & ORPHAN
    assert not nodes["a@0"][4] & SHADOWED
    assert nodes["lonely@0"][4] & ORPHAN
    assert nodes["paths@0"][4] & STALE and nodes["paths@0"][5] == 2
    assert nodes["gone"][1] == -1 and nodes["gone"][4] == MISSING
    assert nodes["global/tips@3"][2] == 1


def test_filters_keep_the_links_among_what_they_select(store: StoreConfig) -> None:
    index = indexed(store)
    by_tag = memory_graph(index, {}, GraphQuery(tag="core"))
    assert sorted(row[0] for row in by_tag["nodes"]) == ["SPEC_api", "gone", "hub"]
    assert edge_names(by_tag) == {("hub", "SPEC_api"), ("hub", "gone")}
    by_folder = memory_graph(index, {}, GraphQuery(folder="spec"))
    assert [row[0] for row in by_folder["nodes"]] == ["SPEC_api"]
    by_name_part = memory_graph(index, {}, GraphQuery(name="HU"))
    assert sorted(row[0] for row in by_name_part["nodes"]) == ["gone", "hub"]
    with pytest.raises(InvalidArguments):
        memory_graph(index, {}, GraphQuery(folder="nowhere"))


def test_neighbourhood_follows_links_both_ways(store: StoreConfig) -> None:
    index = indexed(store)
    near = memory_graph(index, {}, GraphQuery(center="SPEC_api", depth=1))
    assert sorted(row[0] for row in near["nodes"]) == ["SPEC_api", "hub"]
    assert near["nodes"][near["center"]][0] == "SPEC_api"
    two = memory_graph(index, {}, GraphQuery(center="SPEC_api", depth=2))
    assert sorted(row[0] for row in two["nodes"]) == ["SPEC_api", "a", "gone", "hub"]
    with pytest.raises(NotFound) as refused:
        memory_graph(index, {}, GraphQuery(center="hu"))
    assert "hub" in refused.value.suggestions


def test_limit_keeps_the_most_linked_and_says_so(store: StoreConfig) -> None:
    graph = memory_graph(indexed(store), {}, GraphQuery(limit=2))
    assert sorted(row[0] for row in graph["nodes"]) == ["a", "hub"]
    assert graph["truncated"] is True
    assert graph["total"] == {"nodes": 8, "edges": 5}
    assert edge_names(graph) == {("hub", "a"), ("a", "hub")}
    centred = memory_graph(indexed(store), {}, GraphQuery(limit=1, center="lonely", depth=0))
    assert [row[0] for row in centred["nodes"]] == ["lonely"]


def test_a_changed_file_is_unread_until_indexed_and_nothing_is_read_for_it(
    store: StoreConfig, tmp_path: Path
) -> None:
    index = indexed(store)
    lonely = tmp_path / "ws" / ".serena" / "memories" / "lonely.md"
    write(lonely, "# Now linking\n[[hub]] and more text to change the size.\n")
    index.update_path(str(lonely))
    graph = memory_graph(index, {})
    assert graph["pending"] == 1
    assert by_name(graph)["lonely@0"][4] & UNREAD
    index.learn_links()
    assert ("lonely", "hub") in edge_names(memory_graph(index, {}))


def test_store_graph_counts_check_problems_and_is_json(store: StoreConfig) -> None:
    graph = store_graph(Store(store))
    json.dumps(graph)
    # hub's [[gone]] is a broken link `check` reports.
    assert by_name(graph)["hub@0"][5] >= 1
    assert graph["total"]["edges"] == 5


def test_the_cache_is_reused_until_the_index_changes_and_problems_stay_current(
    store: StoreConfig, tmp_path: Path
) -> None:
    index = indexed(store)
    cache = GraphCache()
    first = cache.whole(index)
    assert cache.whole(index) is first
    assert memory_graph(index, {}, GraphQuery(tag="core"), cache)["total"]["nodes"] == 3
    newcomer = tmp_path / "ws" / ".serena" / "memories" / "newcomer.md"
    write(newcomer, "# New\n[[lonely]]\n")
    index.update_path(str(newcomer))
    index.learn_links()
    assert cache.whole(index) is not first
    assert ("newcomer", "lonely") in edge_names(memory_graph(index, {}, cache=cache))
    flagged = memory_graph(index, {str(newcomer): ["stale-path"]}, cache=cache)
    assert by_name(flagged)["newcomer@0"][4] & STALE
