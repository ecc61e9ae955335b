"""`not-found` says which scope and folders were searched and names the closest memories."""

from __future__ import annotations

import time

import pytest
from store_helpers import Workspace

from memory_ls.core.rules.errors import NotFound


def _refused(call: object) -> NotFound:
    with pytest.raises(NotFound) as info:
        assert callable(call)
        call()
    return info.value


def test_a_typo_names_the_scope_the_folders_and_the_closest_memory(ws: Workspace) -> None:
    store = ws.store(["shared/feature"])
    ws.write(ws.primary / "payments" / "retry_policy.md", "x\n")
    ws.write(ws.primary / "unrelated.md", "x\n")
    error = _refused(lambda: store.edit("payments/retry_polcy", content="y"))
    assert error.code == "not-found"
    assert error.suggestions == ("payments/retry_policy",)
    assert str(error) == (
        "No memory named 'payments/retry_polcy' in the project scope (searched "
        ".serena/memories, shared/feature). Did you mean payments/retry_policy?"
    )


def test_a_read_names_both_scopes_it_searched(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.global_dir / "team_tips.md", "x\n")
    ws.write(ws.primary / "team_tops.md", "x\n")
    error = _refused(lambda: store.read("team_tipz"))
    assert str(error).startswith(
        "No memory named 'team_tipz' in the project scope (searched .serena/memories), "
        "nor 'global/team_tipz' in the global scope (searched ~/.serena/memories/global)."
    )
    assert set(error.suggestions) == {"team_tops", "global/team_tips"}
    assert str(error).endswith("?") and "Did you mean " in str(error)


def test_the_same_name_in_the_other_scope_comes_first(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.global_dir / "prefs.md", "x\n")
    ws.write(ws.primary / "prefz.md", "x\n")
    # A delete never reaches a global memory by a bare name (SPEC 2.3): say where it is.
    error = _refused(lambda: store.delete("prefs"))
    assert error.suggestions == ("global/prefs", "prefz")
    assert str(error).endswith("Did you mean global/prefs or prefz?")


def test_a_name_without_its_topic_folder_suggests_the_names_under_topics(
    ws: Workspace,
) -> None:
    store = ws.store()
    ws.write(ws.primary / "payments" / "retry_policy.md", "x\n")
    ws.write(ws.primary / "unrelated.md", "x\n")
    for call in (
        lambda: store.read("retry_policy"),
        lambda: store.edit("retry_policy", content="y"),
        lambda: store.delete("Retry_Policy"),
        # In another topic folder, or mistyped: the last segment still leads there.
        lambda: store.read("billing/retry_policy"),
        lambda: store.read("retry_polcy"),
    ):
        error = _refused(call)
        assert error.suggestions[0] == "payments/retry_policy", error
        assert "Did you mean payments/retry_policy" in str(error)
    # Under a topic folder, the exact last segment comes before names spelled alike.
    ws.write(ws.primary / "retry_policies.md", "x\n")
    ws.write(ws.primary / "orders" / "retry_policy.md", "x\n")
    ws.write(ws.global_dir / "ops" / "retry_policy.md", "x\n")
    error = _refused(lambda: store.read("retry_policy"))
    assert error.suggestions == (
        "orders/retry_policy",
        "payments/retry_policy",
        "global/ops/retry_policy",
    )
    error = _refused(lambda: store.delete("retry_policy"))
    assert error.suggestions == ("orders/retry_policy", "payments/retry_policy", "retry_policies")


def test_nothing_close_suggests_nothing(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "architecture.md", "x\n")
    error = _refused(lambda: store.read("zebra"))
    assert error.suggestions == ()
    assert "Did you mean" not in str(error)


def test_ignored_memories_are_never_suggested(ws: Workspace) -> None:
    ws.write(ws.root / ".serena" / "project.yml", "ignored_memory_patterns: ['secret_plan']\n")
    ws.write(ws.primary / "secret_plan.md", "x\n")
    store = ws.store()
    assert _refused(lambda: store.read("secret_plen")).suggestions == ()


def test_names_with_surrounding_spaces_are_quoted_in_the_sentence(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / " padded .md", "x\n")
    error = _refused(lambda: store.read("padded"))
    assert error.suggestions == (" padded ",)
    assert str(error).endswith("Did you mean ' padded '?")


def test_ten_thousand_memories_answer_quickly(ws: Workspace) -> None:
    ws.primary.mkdir(parents=True)
    for number in range(10_000):
        (ws.primary / f"topic_{number % 50}_note_{number}.md").write_bytes(b"x\n")
    store = ws.store()
    started = time.perf_counter()
    error = _refused(lambda: store.read("topic_7_note_1007x"))
    elapsed = time.perf_counter() - started
    print(f"not-found at 10,000 memories: {elapsed * 1000:.1f} ms")
    assert error.suggestions[0] == "topic_7_note_1007"
    # A scan of 10,000 names and their distances: well under a second even on a slow runner.
    assert elapsed < 2.0, f"not-found took {elapsed:.3f} s at 10,000 memories"
