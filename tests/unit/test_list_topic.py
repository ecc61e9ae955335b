"""`list_memories(topic=...)`: Serena's topic filter on the store's listing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from store_helpers import Workspace

from memory_ls.core.store import in_topic


def listed(ws: Workspace, **filters: object) -> list[tuple[str, str]]:
    """(scope, name as Serena spells it) of each memory the filtered listing holds."""
    store = ws.store(["shared/feature"])
    found = []
    for memory in store.list_memories(**filters)["memories"]:
        name, scope = memory["name"], memory["scope"]
        # Global memories are named `global/NAME` (SPEC 2.3), whether the store says so yet.
        if scope == "global" and not name.startswith("global/"):
            name = "global/" + name
        found.append((scope, name))
    return found


@pytest.fixture
def topics(ws: Workspace) -> Workspace:
    """Project memories at several depths, one in an additional folder, and global ones."""
    for name in ("auth", "auth/login_flow", "auth/oauth/tokens", "authz/roles", "notes"):
        ws.write(ws.primary / f"{name}.md", f"{name}\n")
    ws.write(ws.root / "shared" / "feature" / "auth" / "FEATURE_sso.md", "sso\n")
    for name in ("prefs", "x/deep", "x/deeper/deepest", "xy/other"):
        ws.write(ws.global_dir / f"{name}.md", f"{name}\n")
    return ws


def test_a_project_topic_lists_its_folder_at_every_depth(topics: Workspace) -> None:
    assert listed(topics, topic="auth") == [
        ("project", "auth/FEATURE_sso"),
        ("project", "auth/login_flow"),
        ("project", "auth/oauth/tokens"),
    ]
    # `auth` itself is not under the topic, nor is `authz/`; a trailing `/` changes nothing.
    assert listed(topics, topic="auth/") == listed(topics, topic="auth")
    assert listed(topics, topic="auth/oauth") == [("project", "auth/oauth/tokens")]
    assert listed(topics, topic="auth/login_flow") == []
    assert listed(topics, topic="nowhere") == []


def test_the_global_topic_lists_global_memories_and_its_subtopics(topics: Workspace) -> None:
    assert listed(topics, topic="global") == [
        ("global", "global/prefs"),
        ("global", "global/x/deep"),
        ("global", "global/x/deeper/deepest"),
        ("global", "global/xy/other"),
    ]
    assert listed(topics, topic="global/") == listed(topics, topic="global")
    assert listed(topics, topic="global/x") == [
        ("global", "global/x/deep"),
        ("global", "global/x/deeper/deepest"),
    ]
    # Combined with the other filters, all must hold.
    assert listed(topics, topic="global", scope="project") == []
    assert listed(topics, topic="auth", prefix="auth/o") == [("project", "auth/oauth/tokens")]


def test_no_topic_lists_everything_and_a_wrong_type_is_refused(topics: Workspace) -> None:
    assert len(listed(topics)) == len(listed(topics, topic="")) == 10
    store = topics.store(["shared/feature"])
    with topics.refuses("invalid-arguments"):
        store.list_memories(topic=["auth"])


@pytest.mark.parametrize(
    ("name", "is_global", "topic", "expected"),
    [
        ("auth/a", False, "auth", True),
        ("auth/a", False, "aut", False),
        ("global/a", True, "global", True),
        ("global/a/b", True, "global/a", True),
        ("global/ab", True, "global/a", False),
        # A project file under a `global` folder is not a global memory: Serena's topic
        # "global" reads the global folder only.
        ("global/a", False, "global", False),
        ("auth/a", True, "auth", False),
    ],
)
def test_in_topic(name: str, is_global: bool, topic: str, expected: bool) -> None:
    assert in_topic(name, is_global, topic) is expected


def test_cli_list_topic(topics: Workspace) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", "--json", "list", "--topic", "auth/oauth"],
        cwd=topics.root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        check=True,
    )
    assert [m["name"] for m in json.loads(run.stdout)["memories"]] == ["auth/oauth/tokens"]
