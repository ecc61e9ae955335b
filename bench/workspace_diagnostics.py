#!/usr/bin/env python3
"""Measure workspace diagnostics: the first full report, a change on disk, and memory.

    python3 bench/workspace_diagnostics.py                  # 100,000 memories
    python3 bench/workspace_diagnostics.py --sizes 1000,10000

Uses the store of bench/run.py (its generator), plus one memory with problems in every
hundred (a broken link, an unknown prefix, bad frontmatter), so that reports are
not all empty. The client declares pull diagnostics as vscode-languageclient 9 does.
For each size: seconds from the server's start to the answer of the first
workspace/diagnostic (every file read and checked once), the number of reports, the
server's RSS with workspace diagnostics and with `diagnosticsScope: "openFiles"` (the
same server with nothing computed), and the seconds from a file written on disk by
another process to the answer of the held request that reports it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from run import CAPABILITIES, Client, generate

PULL = {
    **CAPABILITIES,
    "textDocument": {
        **CAPABILITIES["textDocument"],
        "diagnostic": {"dynamicRegistration": True, "relatedDocumentSupport": False},
    },
    "workspace": {"diagnostics": {"refreshSupport": True}},
}


def add_problems(store: dict[str, Any], size: int) -> int:
    """Write one memory with problems per hundred; how many were written."""
    primary = store["root"] / ".serena" / "memories"
    count = max(1, size // 100)
    for i in range(count):
        kind = i % 3
        if kind == 0:
            (primary / f"broken_{i:06d}.md").write_text(f"# Broken\nSee [[missing_{i}]].\n")
        elif kind == 1:
            (primary / f"BUGFIX_{i:06d}.md").write_text("# A prefix no folder has\n")
        else:
            (primary / f"badfm_{i:06d}.md").write_text("---\ntags: 5\n---\n# Bad tags\n")
    return count


def start(store: dict[str, Any], env: dict[str, str], scope: str) -> Client:
    """A server on the store, initialized as a pulling client with this scope."""
    root: Path = store["root"]
    command = [sys.executable, "-m", "memory_ls", *store["flags"]]
    client = Client(command, root, env)
    client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": root.as_uri(),
            "capabilities": PULL,
            "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
            "initializationOptions": {"diagnosticsScope": scope},
        },
    )
    client.notify("initialized", {})
    return client


def pull(client: Client, previous: list[dict[str, str]]) -> tuple[float, dict[str, Any]]:
    """workspace/diagnostic; (seconds until answered, the report)."""
    seconds, response = client.request(
        "workspace/diagnostic", {"previousResultIds": previous, "identifier": "memory-ls"}
    )
    return seconds, response["result"]


def measure(size: int, workdir: Path) -> dict[str, Any]:
    """Every figure for one size."""
    store = generate(workdir, size)
    problems = add_problems(store, size)
    env = {**os.environ, "XDG_CACHE_HOME": str(workdir / "cache")}
    figures: dict[str, Any] = {"memories": size + problems + 2, "with_problems": problems}

    client = start(store, env, "openFiles")
    client.indexed.wait(timeout=600)
    time.sleep(2.0)
    figures["rss_open_files_mib"], figures["peak_open_files_mib"] = client.memory_mb()
    client.close()

    client = start(store, env, "workspace")
    _, report = pull(client, [])
    figures["first_report_s"] = time.perf_counter() - client.started
    figures["reports"] = len(report["items"])
    client.indexed.wait(timeout=600)
    time.sleep(2.0)
    figures["rss_workspace_mib"], figures["peak_workspace_mib"] = client.memory_mb()

    previous = [{"uri": item["uri"], "value": item["resultId"]} for item in report["items"]]
    changed = store["root"] / ".serena" / "memories" / "broken_000000.md"
    answer: dict[str, Any] = {}
    waiting = threading.Thread(target=lambda: answer.update(pull(client, previous)[1]))
    waiting.start()
    time.sleep(1.0)  # the request is held: nothing changed yet
    written = time.perf_counter()
    os.system(f"{sys.executable} -c \"open('{changed}', 'w').write('# Fixed\\n')\"")
    waiting.join(timeout=60)
    figures["change_to_report_s"] = time.perf_counter() - written
    full = [item for item in answer.get("items", []) if item["kind"] == "full"]
    figures["changed_reports"] = len(full)
    figures["unchanged_reports"] = len(answer.get("items", [])) - len(full)
    client.close()
    return figures


def main() -> None:
    """Measure each size; print JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000")
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="memory-ls-wsdiag-") as scratch:
            print(json.dumps(measure(size, Path(scratch))), flush=True)


if __name__ == "__main__":
    main()
