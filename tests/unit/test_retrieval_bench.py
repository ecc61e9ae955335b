"""The retrieval benchmark (bench/retrieval) runs on its data and computes its figures."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

BENCH = Path(__file__).resolve().parents[2] / "bench" / "retrieval"


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("retrieval_bench", BENCH / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Dataclasses look their module up in sys.modules while the class is made.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def recall_at(report: dict[str, Any], system: str, phrasing: str, k: int) -> float:
    """Recall@k recomputed from the report's own rankings (every answer must be found,
    except for questions where any one answers)."""
    data = json.loads((BENCH / "questions.json").read_text(encoding="utf-8"))
    match = {q["id"]: q.get("match", "all") for q in data["questions"]}
    values = []
    for q in report["questions"]:
        if q["kind"] == "none":
            continue
        top = q["results"][system][phrasing][:k]
        found = sum(1 for a in q["answers"] if a in top)
        values.append(float(found > 0) if match[q["id"]] == "any" else found / len(q["answers"]))
    return sum(values) / len(values)


def test_report_has_every_figure_for_every_system_and_phrasing(tmp_path: Path) -> None:
    bench = load_bench()
    report = bench.evaluate(work=tmp_path)
    json.dumps(report)  # the report is written as JSON
    assert report["store"]["memories"] >= 110
    assert report["store"]["questions"] >= 60
    assert report["store"]["by_kind"]["none"] >= 15
    systems = {s["system"]: s for s in report["systems"]}
    assert {"memory-ls (default)", "bm25"} <= set(systems)
    for system in systems.values():
        assert set(system["phrasings"]) == {"keywords", "task", "paraphrase"}
        for figures in system["phrasings"].values():
            for key in (
                "recall@1",
                "recall@5",
                "recall@10",
                "mrr",
                "current_first",
                "current_before_outdated",
                "none_empty",
            ):
                assert 0.0 <= figures[key] <= 1.0, key
            assert figures["recall@1"] <= figures["recall@5"] <= figures["recall@10"]
    assert "none_below_threshold" in systems["bm25"]["phrasings"]["task"]
    table = bench.markdown(report)
    assert "| bm25 | task |" in table and "| memory-ls (default) | keywords |" in table
    # The figures are the rankings' figures.
    for system in systems:
        for phrasing in ("keywords", "task"):
            got = systems[system]["phrasings"][phrasing]["recall@5"]
            assert math.isclose(got, recall_at(report, system, phrasing, 5), abs_tol=1e-4)


def test_bm25_figures_follow_the_questions(tmp_path: Path) -> None:
    """Pointing every answer at one unrelated memory changes the BM25 figures to what its
    rankings give, so they are computed from the data."""
    bench = load_bench()
    data = json.loads((BENCH / "questions.json").read_text(encoding="utf-8"))
    data["store"] = str(BENCH / "store")
    for q in data["questions"]:
        if q["kind"] != "none":
            q.update(kind="direct", answers=["commit_conventions"], match="all")
            q.pop("outdated", None)
    moved = tmp_path / "questions.json"
    moved.write_text(json.dumps(data), encoding="utf-8")
    real = bench.evaluate(work=tmp_path / "real")
    report = bench.evaluate(moved, work=tmp_path / "moved")
    bm25 = next(s for s in report["systems"] if s["system"] == "bm25")["phrasings"]["task"]
    before = next(s for s in real["systems"] if s["system"] == "bm25")["phrasings"]["task"]
    assert bm25["recall@10"] < before["recall@10"]
    rankings = [q["results"]["bm25"]["task"] for q in report["questions"] if q["kind"] != "none"]
    expected = sum("commit_conventions" in r[:10] for r in rankings) / len(rankings)
    assert math.isclose(bm25["recall@10"], expected, abs_tol=1e-4)


def test_bm25_scores_by_the_okapi_formula() -> None:
    bench = load_bench()
    memories = {"a": "cart total cart", "b": "session timeout", "c": "cart"}
    index = bench.BM25(memories)
    # "a": name "a" + 3 body words = 4 words; average (4 + 3 + 2) / 3 = 3; n(cart) = 2 of 3.
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    norm = 1.2 * (1 - 0.75 + 0.75 * 4 / 3)
    expected = idf * 2 * 2.2 / (2 + norm)
    ranked = index.search("Cart")
    assert [name for name, _ in ranked] == ["a", "c"]
    assert math.isclose(ranked[0][1], expected)
