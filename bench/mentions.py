#!/usr/bin/env python3
"""Time "which memories mention this file?" (core/operations/mentions.py) on a generated store.

    PYTHONPATH=server .venv/bin/python bench/mentions.py            # 10,000 memories
    PYTHONPATH=server .venv/bin/python bench/mentions.py --size 1000

The store is bench/run.py's (`--git` layout: every memory names a source file and
links a document, plus a 1 MB note naming a source on each of its 1,000 lines), in a
fresh cache. Timed: the first lookup (the full-text index is built), lookups through
a new index object as a new process (`memory-ls about`, MCP) makes one (the disk is
compared with the index), lookups through the same one, after ten memories changed
behind the index's back, reading every memory instead (no index), and `memory-ls about`
end to end.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import WORDS, as_repository, generate  # bench/run.py, beside this

from memory_ls.config import cli_layer, merge_layers
from memory_ls.core.operations.mentions import memories_about
from memory_ls.core.services.search import SearchIndex
from memory_ls.core.storage.folders import resolve_store_config
from memory_ls.core.store import Store

ROUNDS = 5


def targets(root: Path) -> list[str]:
    """Paths the memories name (one folder's file, a file name, a partial path), a symbol,
    and a path nobody names."""
    sources = sorted(str(p.relative_to(root)) for p in (root / "src").rglob("*.py"))
    rng = random.Random(3)
    source = rng.choice(sources)
    return [
        source,
        os.path.basename(source),
        "/".join(source.split("/")[-2:]).removesuffix(".py"),
        f"docs/{WORDS[0]}.md",
        "Cart.total",
        "src/nowhere/none.py",
    ]


def timed(call: object) -> float:
    """Milliseconds one call takes."""
    start = time.perf_counter()
    call()  # type: ignore[operator]
    return (time.perf_counter() - start) * 1000


def main() -> None:
    """Generate the store, time the lookups, print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mls-mentions-") as temp:
        base = Path(temp)
        os.environ["XDG_CACHE_HOME"] = str(base / "cache")
        os.environ["HOME"] = str(base / "home")
        store_info = generate(base, args.size)
        as_repository(store_info, args.size)
        root: Path = store_info["root"]
        flags = store_info["flags"]
        layer = cli_layer(additional_folders=flags[1], global_folder=flags[3])
        config = resolve_store_config(merge_layers(layer), str(root))
        wanted = targets(root)
        print(f"{args.size:,} memories (+ a 1 MB note); targets: {', '.join(wanted)}")

        found: dict[str, int] = {}

        def lookup(store: Store, target: str) -> None:
            result = memories_about(store, target, 10)
            found[target] = len(result["memories"]) + result["more"]

        first = timed(lambda: lookup(Store(config, SearchIndex(config, live=False)), wanted[0]))
        rows = [("first lookup (builds the index)", [first])]
        fresh = []
        for _ in range(ROUNDS):
            for target in wanted:
                index = SearchIndex(config, live=False)
                fresh.append(timed(lambda i=index, t=target: lookup(Store(config, i), t)))
                index.close()
        rows.append(("new index object each (a new process)", fresh))
        index = SearchIndex(config, live=False)
        kept = Store(config, index)
        lookup(kept, wanted[0])
        same = [timed(lambda t=t: lookup(kept, t)) for _ in range(ROUNDS) for t in wanted]
        rows.append(("same index object", same))
        for number, target in enumerate(wanted):
            rows.append((f"  {target}", same[number :: len(wanted)]))
        memories = sorted((root / ".serena" / "memories").glob("*.md"))[:10]
        changed = []
        for round_number in range(ROUNDS):
            for path in memories:
                with path.open("a") as handle:
                    handle.write(f"Now also `{wanted[0]}` ({round_number}).\n")
            changed.append(timed(lambda: lookup(kept, wanted[0])))
        rows.append(("after 10 memories changed on disk", changed))
        scan = Store(config)
        rows.append(("no index: every memory read", [timed(lambda: lookup(scan, wanted[0]))]))
        command = [sys.executable, "-m", "memory_ls.cli", "about", wanted[0], *flags]
        cli = [timed(lambda: subprocess.run(command, cwd=root, check=True, capture_output=True))]
        rows.append(("`memory-ls about` end to end", cli))

        print(f"{'':42} {'median ms':>10} {'max ms':>8}")
        for label, samples in rows:
            print(f"{label:42} {statistics.median(samples):10.1f} {max(samples):8.1f}")
        print("memories found (last lookup): " + ", ".join(f"{t}: {n}" for t, n in found.items()))


if __name__ == "__main__":
    main()
