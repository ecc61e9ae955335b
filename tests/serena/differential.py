"""The differential harness: the same tool calls on identical folders, Serena vs memory-ls.

Serena runs a whole scenario in the driver first (outcome and trees after every call).
memory-ls then replays it call by call from the same start; after each call its trees are
compared with Serena's and, where they differ, reset to Serena's, so every call is compared
from identical folders and one divergence does not cascade into the calls after it.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import intended
import mls_adapter
import tree_snapshot
from tree_snapshot import Snapshot

DRIVER = Path(__file__).with_name("serena_driver.py")
DRIVER_TIMEOUT_SECONDS = 600
# Where each side's memories live, relative to the labelled roots of a snapshot.
PROJECT_MEMORIES = "project/.serena/memories/"
GLOBAL_MEMORIES = "home/memories/global/"
SHOWN_CHARS = 160


@dataclass(frozen=True)
class Scenario:
    """A start (both trees) and the tool calls to make from it."""

    id: str
    tree: Snapshot
    ops: Sequence[Mapping[str, Any]]
    # Put around SERENA_HOME's value on both sides (Serena strips it).
    home_padding: str = ""
    # SERENA_HOME relative (`home`), both sides running in the folder that holds it.
    home_relative: bool = False
    # op index -> the Serena outcome kind the case is about (guards the case itself).
    expect: Mapping[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Divergence:
    """One way one call came out differently: its kind, its value, or a file after it."""

    scenario: str
    index: int
    op: Mapping[str, Any]
    aspect: str  # "kind", "value" or "file"
    serena: str
    mls: str
    path: str = ""

    def line(self) -> str:
        """One line: where, which call, and both sides."""
        where = f"{self.scenario} #{self.index} {describe_op(self.op)}"
        what = f"[{self.aspect}{' ' + self.path if self.path else ''}]"
        return f"{where} {what} serena={self.serena} | memory-ls={self.mls}"


def shorten(text: str, limit: int = SHOWN_CHARS) -> str:
    """Cut a shown value to a readable length."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_op(op: Mapping[str, Any]) -> str:
    """A tool call as it would be written: write_memory(memory_name='x', ...)."""
    args = ", ".join(f"{k}={shorten(repr(v), 60)}" for k, v in op.items() if k != "tool")
    return f"{op['tool']}({args})"


def describe_outcome(outcome: Mapping[str, Any]) -> str:
    """An outcome in a few words: its kind and error or value."""
    if outcome["kind"] != "ok":
        return f"{outcome['kind']} ({shorten(outcome.get('error', ''), 200)})"
    if "value" in outcome:
        return f"ok {shorten(repr(outcome['value']))}"
    return "ok"


def run_serena(
    python: Path, scenarios: Sequence[Scenario], workdir: Path
) -> dict[str, list[dict[str, Any]]]:
    """Run the scenarios in the driver, one process per SERENA_HOME spelling."""
    by_home: dict[tuple[str, bool], list[Scenario]] = {}
    for scenario in scenarios:
        by_home.setdefault((scenario.home_padding, scenario.home_relative), []).append(scenario)
    steps: dict[str, list[dict[str, Any]]] = {}
    for number, ((padding, relative), group) in enumerate(by_home.items()):
        base = workdir / f"serena-{number}"
        base.mkdir(parents=True, exist_ok=True)
        roots = {label: str(base / label) for label in ("project", "home")}
        request = {
            **roots,
            "scenarios": [{"id": s.id, "tree": s.tree, "ops": list(s.ops)} for s in group],
        }
        home = "home" if relative else roots["home"]
        env = {**os.environ, "SERENA_HOME": padding + home + padding}
        # The driver must not see this interpreter's packages (memory-ls, its pins).
        env.pop("PYTHONPATH", None)
        done = subprocess.run(
            [str(python), str(DRIVER)],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            env=env,
            cwd=base,
            timeout=DRIVER_TIMEOUT_SECONDS,
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"the Serena driver failed (exit {done.returncode}):\n{done.stderr[-4000:]}"
            )
        for result in json.loads(done.stdout)["scenarios"]:
            steps[result["id"]] = result["steps"]
    return steps


def describe_entries(
    serena: Mapping[str, str] | None, mls: Mapping[str, str] | None
) -> tuple[str, str]:
    """Two snapshot entries shown around their first difference."""

    def show(entry: Mapping[str, str] | None, start: int) -> str:
        if entry is None:
            return "(absent)"
        if entry["kind"] == "link":
            return f"link -> {entry['target']}"
        data = tree_snapshot.entry_bytes(entry)
        cut = data[start : start + 70]
        more = "..." if start + 70 < len(data) else ""
        lead = "..." if start else ""
        return f"{len(data)} bytes {lead}{cut!r}{more}"

    start = 0
    if serena and mls and serena["kind"] == mls["kind"] == "file":
        left, right = tree_snapshot.entry_bytes(serena), tree_snapshot.entry_bytes(mls)
        first = next((i for i, (a, b) in enumerate(zip(left, right, strict=False)) if a != b), None)
        start = max(0, (min(len(left), len(right)) if first is None else first) - 20)
    return show(serena, start), show(mls, start)


def listing_difference(
    serena: Mapping[str, list[str]], mls: Mapping[str, list[str]]
) -> tuple[str, str]:
    """What each of two listings has that the other lacks, by writable / read-only."""
    sides: tuple[list[str], list[str]] = ([], [])
    for key, label in (("memories", "writable"), ("read_only_memories", "read-only")):
        left, right = set(serena.get(key, [])), set(mls.get(key, []))
        for side, extra in zip(sides, (left - right, right - left), strict=True):
            if extra:
                side.append(f"{label} {sorted(extra)}")
    return tuple("listed " + "; ".join(side) if side else "-" for side in sides)  # type: ignore[return-value]


def compare_step(
    scenario_id: str,
    index: int,
    op: Mapping[str, Any],
    serena: Mapping[str, Any],
    mls: Mapping[str, Any],
    serena_tree: Snapshot,
    mls_tree: Snapshot,
) -> list[Divergence]:
    """Every way one call came out differently."""
    found: list[Divergence] = []

    def add(aspect: str, left: str, right: str, path: str = "") -> None:
        found.append(Divergence(scenario_id, index, op, aspect, left, right, path))

    if serena["kind"] != mls["kind"]:
        add("kind", describe_outcome(serena), describe_outcome(mls))
    elif serena["kind"] == "ok" and mls_adapter.tool_returns_text(op):
        left, right = serena["value"], mls["value"]
        if left != right:
            if op["tool"] == "list_memories":
                add("value", *listing_difference(left, right))
            else:
                add("value", shorten(repr(left)), shorten(repr(right)))
    left_tree = tree_snapshot.compared(serena_tree)
    right_tree = tree_snapshot.compared(mls_tree)
    for key in sorted(set(left_tree) | set(right_tree)):
        if left_tree.get(key) != right_tree.get(key):
            add("file", *describe_entries(left_tree.get(key), right_tree.get(key)), path=key)
    return found


@dataclass
class Report:
    """What one scenario found: divergences left unexplained, and explained ones by id."""

    unexplained: list[Divergence] = field(default_factory=list)
    explained: dict[str, int] = field(default_factory=dict)
    case_errors: list[str] = field(default_factory=list)

    def text(self) -> str:
        """The report as the failure message: one line per divergence."""
        lines = [*self.case_errors, *(d.line() for d in self.unexplained)]
        if self.explained:
            counts = ", ".join(f"{k}={v}" for k, v in sorted(self.explained.items()))
            lines.append(f"(explained by intended differences: {counts})")
        return "\n".join(lines)


def run_memory_ls(scenario: Scenario, serena_steps: list[dict[str, Any]], workdir: Path) -> Report:
    """Replay a scenario on memory-ls and compare every call with Serena's."""
    base = workdir / "mls"
    roots = {label: str(base / label) for label in ("project", "home")}
    tree_snapshot.restore(scenario.tree, roots)
    home = "home" if scenario.home_relative else roots["home"]
    # A relative SERENA_HOME is relative to the working directory (as for Serena's driver).
    with contextlib.chdir(base):
        return _replay(scenario, serena_steps, roots, scenario.home_padding + home)


def _replay(
    scenario: Scenario,
    serena_steps: list[dict[str, Any]],
    roots: dict[str, str],
    home: str,
) -> Report:
    """Replay the calls on a store over `roots` with this SERENA_HOME (padding in front)."""
    store = mls_adapter.make_store(roots["project"], home + scenario.home_padding)
    trace = os.environ.get("SERENA_DIFF_TRACE") == "1"
    report = Report()
    before: Snapshot = scenario.tree
    for index, op in enumerate(scenario.ops):
        serena = serena_steps[index]["outcome"]
        serena_tree: Snapshot = serena_steps[index]["tree"]
        expected = scenario.expect.get(index)
        if expected is not None and serena["kind"] != expected:
            report.case_errors.append(
                f"{scenario.id} #{index} {describe_op(op)}: the case expects Serena to give "
                f"{expected}, it gave {describe_outcome(serena)} (fix the case)"
            )
        mls = mls_adapter.outcome(store, op)
        mls_tree = tree_snapshot.take(roots)
        if trace:
            print(f"{scenario.id} #{index} {describe_op(op)}", file=sys.stderr)
            print(f"    serena={describe_outcome(serena)}", file=sys.stderr)
            print(f"    memory-ls={describe_outcome(mls)}", file=sys.stderr)
        context = intended.OpContext(op, serena, mls, before, serena_tree, mls_tree)
        for divergence in compare_step(scenario.id, index, op, serena, mls, serena_tree, mls_tree):
            reason = intended.explain(context, divergence.aspect, divergence.path)
            if reason is None:
                report.unexplained.append(divergence)
            else:
                report.explained[reason] = report.explained.get(reason, 0) + 1
        if tree_snapshot.compared(mls_tree) != tree_snapshot.compared(serena_tree):
            tree_snapshot.restore(serena_tree, roots)
        before = serena_tree
    return report


def ids_of(scenarios: Iterable[Scenario]) -> list[str]:
    """The ids of scenarios, checked to be unique."""
    ids = [s.id for s in scenarios]
    duplicates = {i for i in ids if ids.count(i) > 1}
    if duplicates:
        raise ValueError(f"duplicate scenario ids: {sorted(duplicates)}")
    return ids
