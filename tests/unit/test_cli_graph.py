"""`memory-ls graph` on the example workspace, run as a real process."""

from __future__ import annotations

import json
from pathlib import Path

from test_cli import cli, example  # noqa: F401  (the fixture)


def test_graph_json_and_summary_agree_on_the_example(example: Path) -> None:  # noqa: F811
    shown = cli(example, "graph", "--json")
    assert shown.returncode == 0, shown.stderr
    graph = json.loads(shown.stdout)
    rows = {(row[0], row[1]): row for row in graph["nodes"]}
    folders = [folder["label"] for folder in graph["folders"]]
    primary, vendor = folders.index("memories"), folders.index("vendor")
    # The seven problems `check` reports on the example, on the files that have them.
    assert sum(row[5] for row in graph["nodes"]) == 7
    assert rows["style_guide", vendor][4] & graph["flags"]["shadowed"]
    assert rows["style_guide", vendor][4] & graph["flags"]["readOnly"]
    assert rows["deployment_checklist", -1][4] == graph["flags"]["missing"]
    assert rows["project_overview", primary][3] == 7
    memories = sum(1 for row in graph["nodes"] if row[1] >= 0)
    summary = cli(example, "graph")
    assert summary.returncode == 0, summary.stderr
    assert summary.stdout.startswith(
        f"{memories} memories, {len(graph['edges']) // 2} links (1 missing names)"
    )
    near = json.loads(cli(example, "graph", "--json", "--center", "auth/login_flow").stdout)
    assert sorted(row[0] for row in near["nodes"]) == [
        "SPEC_payments_api",
        "auth/login_flow",
        "project_overview",
    ]
    refused = cli(example, "graph", "--center", "nowhere_at_all")
    assert refused.returncode != 0 and "not-found" in refused.stderr
