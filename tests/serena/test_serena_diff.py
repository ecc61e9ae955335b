"""memory-ls behaves as Serena 2.1.0 on the same folders, except where the docs say why not.

Run one seed or case: `pytest tests/serena -k seed-03` (or `-k symlinked-folder`); set
SERENA_DIFF_TRACE=1 to print every call with both outcomes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import intended
import pytest
import scenarios
from differential import Divergence, Scenario, compare_step, ids_of, run_memory_ls
from tree_snapshot import file_entry

# The docs' page of intended differences (README.md links to it).
DIFFERENCES = Path(__file__).resolve().parents[2] / "docs" / "guides" / "compatibility.md"
ALL = scenarios.all_scenarios()


@pytest.mark.parametrize("scenario", ALL, ids=ids_of(ALL))
def test_same_as_serena(
    scenario: Scenario,
    serena_steps: dict[str, list[dict[str, Any]]],
    tmp_path: Path,
) -> None:
    """Every call gives Serena's outcome, value and files, or an intended difference."""
    report = run_memory_ls(scenario, serena_steps[scenario.id], tmp_path)
    if report.unexplained or report.case_errors:
        count = len(report.unexplained)
        pytest.fail(f"{count} divergences from Serena:\n{report.text()}", pytrace=False)


def test_every_intended_difference_is_in_the_docs() -> None:
    """Each registry id has its line in the docs' "Differences from Serena"."""
    text = DIFFERENCES.read_text(encoding="utf-8")
    section = re.search(r"^## Differences from Serena\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert section, f"{DIFFERENCES} has no section '## Differences from Serena'"
    missing = [d.id for d in intended.REGISTRY if f"`{d.id}`" not in section.group(1)]
    assert not missing, f"intended differences not explained in {DIFFERENCES}: {missing}"


def test_a_changed_file_is_a_divergence_no_intended_difference_excuses() -> None:
    """The harness itself: one changed byte is reported, and nothing explains it away."""
    op = {"tool": "write_memory", "memory_name": "notes", "content": "a\n"}
    key = "project/.serena/memories/notes.md"
    outcome = {"kind": "ok", "value": "Memory notes written."}
    serena_tree = {key: file_entry(b"a\n")}
    mls_tree = {key: file_entry(b"b\n")}
    found = compare_step("self-test", 0, op, outcome, {"kind": "ok"}, serena_tree, mls_tree)
    assert [(d.aspect, d.path) for d in found] == [("file", key)]
    context = intended.OpContext(op, outcome, {"kind": "ok"}, {}, serena_tree, mls_tree)
    assert intended.explain(context, "file", key) is None
    assert isinstance(found[0], Divergence)
    assert "notes.md" in found[0].line()
