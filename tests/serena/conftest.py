"""Fixtures of the Serena differential tier: the Serena venv and Serena's side of every run."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from differential import Scenario, run_serena
from serena_venv import SerenaInstallError, ensure_serena_venv

# Timings shown at the end of the run (the issue asks for them).
TIMINGS: dict[str, str] = {}


@pytest.fixture(scope="session")
def serena_python() -> Path:
    """The python of a venv with serena-agent 2.1.0; installed on first use, then reused."""
    try:
        ready = ensure_serena_venv()
    except SerenaInstallError as exc:
        # A missing Serena must fail the tier, never skip it: CI would pass without testing.
        pytest.fail(f"Could not install Serena for the differential tests: {exc}", pytrace=False)
    verb = "installed" if ready.built else "reused"
    TIMINGS["serena venv"] = f"{verb} in {ready.seconds:.1f} s ({ready.python})"
    return ready.python


def _selected_scenarios(session: pytest.Session) -> list[Scenario]:
    """The scenarios of the tests this run selected (so `-k seed-03` runs one in Serena)."""
    chosen: dict[str, Scenario] = {}
    for item in session.items:
        callspec = getattr(item, "callspec", None)
        scenario = callspec.params.get("scenario") if callspec else None
        if isinstance(scenario, Scenario):
            chosen[scenario.id] = scenario
    return list(chosen.values())


@pytest.fixture(scope="session")
def serena_steps(
    request: pytest.FixtureRequest,
    serena_python: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, list[dict[str, Any]]]:
    """Serena's outcome and trees after every call of every selected scenario."""
    scenarios = _selected_scenarios(request.session)
    started = time.monotonic()
    steps = run_serena(serena_python, scenarios, tmp_path_factory.mktemp("serena"))
    ops = sum(len(s.ops) for s in scenarios)
    TIMINGS["serena driver"] = (
        f"{len(scenarios)} scenarios, {ops} calls in {time.monotonic() - started:.1f} s"
    )
    return steps


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Show how long the Serena install and driver took."""
    for what, timing in TIMINGS.items():
        terminalreporter.write_line(f"{what}: {timing}")
