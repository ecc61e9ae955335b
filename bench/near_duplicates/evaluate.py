#!/usr/bin/env python3
"""Precision and recall of the `near-duplicate` measures on the labelled pairs.

    python3 bench/near_duplicates/evaluate.py                  # the labelled pairs
    python3 bench/near_duplicates/evaluate.py --store 10000    # + a bench/run.py store

For each pair (pairs.py) the scores of each measure (--verbose), then precision and
recall at several thresholds of: the chosen rule (normalised names equal, or the Jaccard
similarity of the bodies' word 3-shingles at least T), bodies alone, the same with an
edit similarity of the word sequences (rapidfuzz) in place of the shingles, and an edit
distance on raw names in place of the normalised names. Last, the whole pipeline
(`memory-ls check`'s pass: keys, pairs, verdicts) runs on a store per pair, and, with
--store, on a store made by bench/run.py's generator (its templated bodies must give no
near-duplicate), timed with the pass on and off.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent.parent / "server")]

from pairs import PAIRS, Pair  # noqa: E402
from rapidfuzz import fuzz  # noqa: E402

from memory_ls.config import DEFAULT_SEVERITIES, FolderSetting, Settings  # noqa: E402
from memory_ls.core.operations.check import check_store  # noqa: E402
from memory_ls.core.rules.similarity import (  # noqa: E402
    BODY_THRESHOLD,
    MIN_WORDS,
    Memo,
    body_similarity,
    fold,
    name_key,
    near_duplicate,
)
from memory_ls.core.storage.folders import StoreConfig, resolve_store_config  # noqa: E402
from memory_ls.core.store import Store  # noqa: E402


def memo(memory: tuple[str, str], number: int) -> Memo:
    name, text = memory
    return Memo.of(f"/m{number}/{name}.md", name, name.startswith("global/"), text)


def sequence_ratio(a: str, b: str) -> float:
    """rapidfuzz's Indel similarity (0-100) of two bodies' word sequences."""
    return float(fuzz.ratio(a, b))


Scores = dict[str, float | bool]


def scores(pair: Pair) -> Scores:
    _kind, _label, first, second = pair
    a, b = memo(first, 1), memo(second, 2)
    linked = a.qualified in b.mentions or b.qualified in a.mentions
    short = min(len(a.words.split()), len(b.words.split())) < MIN_WORDS
    same_scope = a.global_scope == b.global_scope
    return {
        "linked": linked,
        "name_equal": same_scope and name_key(a.bare_name) == name_key(b.bare_name),
        "name_ratio": fuzz.ratio(fold(a.bare_name), fold(b.bare_name)),
        "jaccard": 0.0 if short else body_similarity(a.words, b.words),
        "sequence": 0.0 if short else sequence_ratio(a.words, b.words),
        "verdict": near_duplicate(a, b) is not None,
    }


def precision_recall(
    rows: list[tuple[bool, Scores]], predict: Callable[[Scores], bool]
) -> tuple[float, float, int, int, int]:
    tp = sum(1 for label, s in rows if label and predict(s))
    fp = sum(1 for label, s in rows if not label and predict(s))
    fn = sum(1 for label, s in rows if label and not predict(s))
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return precision, recall, tp, fp, fn


def sweep(
    title: str,
    rows: list[tuple[bool, Scores]],
    rule: Callable[[Scores, float], bool],
    ts: list[float],
) -> None:
    print(f"\n{title}")
    print(f"{'threshold':>9}  {'precision':>9}  {'recall':>6}  tp fp fn")
    for t in ts:
        p, r, tp, fp, fn = precision_recall(rows, lambda s, t=t: not s["linked"] and rule(s, t))
        print(f"{t:>9.0f}  {p:>9.2f}  {r:>6.2f}  {tp:>2} {fp:>2} {fn:>2}")


def pipeline(pairs: list[Pair]) -> None:
    """`check`'s whole pass on one store per pair: does it report both memories?"""
    tp = fp = fn = 0
    for number, (kind, label, first, second) in enumerate(pairs):
        with tempfile.TemporaryDirectory() as root:
            config = config_for(Path(root))
            for name, text in (first, second):
                folder = config.folders[-1] if name.startswith("global/") else config.folders[0]
                bare = name.split("/", 1)[1] if name.startswith("global/") else name
                path = Path(folder.path, *bare.split("/")).with_suffix(".md")
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            found = [d for d in check_store(Store(config)) if d.code == "near-duplicate"]
        fired = len(found) == 2
        tp += label and fired
        fp += (not label) and fired
        fn += label and not fired
        if fired != label:
            print(f"  pipeline {'missed' if label else 'false positive'}: #{number} {kind}")
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    print(f"\npipeline (check on a store per pair): precision {precision:.2f}, recall {recall:.2f}")


def config_for(
    root: Path, additional: tuple[str, ...] = (), global_folder: Path | None = None
) -> StoreConfig:
    settings = Settings(
        additional_folders=tuple(FolderSetting(path=p) for p in additional),
        global_folder=str(global_folder or root / "global"),
        diagnostics=dict(DEFAULT_SEVERITIES),
    )
    config = resolve_store_config(settings, str(root), environ={})
    for folder in config.folders:
        Path(folder.path).mkdir(parents=True, exist_ok=True)
    return config


def bench_store(size: int, git: bool) -> None:
    """A store from bench/run.py's generator: how many near-duplicates, and the cost."""
    import run  # bench/run.py

    with tempfile.TemporaryDirectory() as workdir:
        made = run.generate(Path(workdir), size)
        if git:  # every memory gains a line naming a file: bodies long enough to compare
            run.as_repository(made, size)
        root = Path(made["root"])
        shared = tuple(f"shared/{name}" for name in run.ADDITIONAL)
        config = config_for(root, shared, Path(workdir) / "global")
        timings: dict[bool, list[float]] = {}
        found = []
        for code_on in (False, True) * 3:
            severities = dict(config.severities)
            severities["near-duplicate"] = "information" if code_on else "off"
            store = Store(replace(config, severities=severities))
            started = time.perf_counter()
            result = check_store(store)
            timings.setdefault(code_on, []).append(time.perf_counter() - started)
            if code_on:
                found = [d for d in result if d.code == "near-duplicate"]
        off, on = min(timings[False]), min(timings[True])
        print(
            f"\nbench/run.py{' --git' if git else ''} store of {size:,} memories: "
            f"{len(found)} near-duplicate diagnostics; "
            f"check {off:.2f} s without the pass, {on:.2f} s with it (+{on - off:.2f} s)"
        )
        for diagnostic in found[:5]:
            print(f"  {diagnostic.path}: {diagnostic.message}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=int, default=0, help="also check a generated store")
    parser.add_argument("--git", action="store_true", help="the store as bench/run.py --git")
    parser.add_argument("--verbose", action="store_true", help="print every pair's scores")
    args = parser.parse_args()
    rows = [(pair[1], scores(pair)) for pair in PAIRS]
    print(f"{len(PAIRS)} pairs: {sum(1 for p in PAIRS if p[1])} near-duplicates")
    if args.verbose:
        for pair, (label, s) in zip(PAIRS, rows, strict=True):
            shown = " ".join(
                f"{k}={v:.0f}" if isinstance(v, float) else f"{k}={v}" for k, v in s.items()
            )
            print(f"  {'DUP' if label else '   '} {pair[0]:<45} {shown}")
    jaccard_ts = [20, 30, 40, 50, 60, 70, 80, 90]
    sweep(
        "chosen: names equal once normalised, or shingle Jaccard >= T",
        rows,
        lambda s, t: bool(s["name_equal"]) or float(s["jaccard"]) >= t,
        jaccard_ts,
    )
    sweep(
        "bodies alone: shingle Jaccard >= T",
        rows,
        lambda s, t: float(s["jaccard"]) >= t,
        jaccard_ts,
    )
    sweep(
        "alternative: names equal once normalised, or word-sequence similarity >= T",
        rows,
        lambda s, t: bool(s["name_equal"]) or float(s["sequence"]) >= t,
        [60, 70, 75, 80, 85, 90, 95],
    )
    sweep(
        f"alternative: raw name similarity >= T, or shingle Jaccard >= {BODY_THRESHOLD:.0f}",
        rows,
        lambda s, t: float(s["name_ratio"]) >= t or float(s["jaccard"]) >= BODY_THRESHOLD,
        [70, 80, 85, 90, 95],
    )
    pipeline(PAIRS)
    if args.store:
        bench_store(args.store, args.git)


if __name__ == "__main__":
    main()
