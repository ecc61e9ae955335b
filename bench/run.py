#!/usr/bin/env python3
"""Benchmark the language server over stdio, as an editor sees it.

    python3 bench/run.py                   # 1,000, 10,000 and 100,000 memories
    python3 bench/run.py --sizes 1000      # one size (the CI smoke run)

Prints a table and writes JSON to bench/results/ so runs can be compared. Run it from
the repository's virtual environment (`python3 tasks.py bench` does that).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import queue
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ADDITIONAL = ("feature", "spec", "plan", "ops")
WORDS = [
    "auth",
    "login",
    "cache",
    "index",
    "deploy",
    "build",
    "release",
    "schema",
    "api",
    "client",
    "server",
    "queue",
    "retry",
    "metrics",
    "logging",
    "config",
    "router",
    "session",
    "token",
    "backup",
    "migration",
    "search",
    "storage",
]
TARGET = "zz_bench_target_memory"


# ----- the store --------------------------------------------------------------------


def generate(root: Path, size: int, seed: int = 7) -> dict[str, Any]:
    """A store of `size` memories over primary, four additional folders and global."""
    rng = random.Random(seed)
    primary = root / "ws" / ".serena" / "memories"
    folders = {name: root / "ws" / "shared" / name for name in ADDITIONAL}
    global_folder = root / "global"
    for folder in (primary, global_folder, *folders.values()):
        folder.mkdir(parents=True, exist_ok=True)
    names: list[str] = []
    for i in range(size):
        word = rng.choice(WORDS)
        slot = i % 10
        if slot < 5:
            name, folder = f"{word}_notes_{i:06d}", primary
        elif slot < 9:
            prefix = ADDITIONAL[slot - 5]
            name, folder = f"{prefix.upper()}_{word}_{i:06d}", folders[prefix]
        else:
            name, folder = f"personal_{word}_{i:06d}", global_folder
        names.append(name)
        links = " ".join(f"[[{rng.choice(names)}]]" for _ in range(3))
        body = f"# {name}\n\nNotes about {word}. See {links}.\n"
        if i % 2:
            tags = ", ".join(rng.sample(WORDS, 2))
            body = (
                f"---\ntags: [{tags}]\ncreated_at: 2025-10-01T09:00:00Z\n"
                f"updated_at: 2025-10-08T03:07:11Z\n---\n{body}"
            )
        (folder / f"{name}.md").write_text(body)
    (primary / f"{TARGET}.md").write_text("# The memory the cold-start probe looks for\n")
    # A 1 MB note with 1,000 references, for diagnostics latency.
    lines = []
    for i in range(1000):
        lines.append(f"Line {i}: see [[{rng.choice(names)}]] and more text to fill the note. " * 12)
    big = "\n".join(lines)[:1_000_000]
    (primary / "big_note.md").write_text(big)
    return {
        "root": root / "ws",
        "flags": [
            "--additional-folders",
            ",".join(f"shared/{name}" for name in ADDITIONAL),
            "--global-folder",
            str(global_folder),
        ],
        "names": names,
        "big": primary / "big_note.md",
        "external": folders["plan"],
    }


# ----- a raw JSON-RPC client --------------------------------------------------------


class Client:
    """The smallest LSP client: framed JSON over the server's stdin and stdout."""

    def __init__(self, command: list[str], cwd: Path) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            command,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        self.responses: dict[int, queue.Queue[dict[str, Any]]] = {}
        self.notifications: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while True:
            length = 0
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(stream.read(length))
            if "id" in message and "method" in message:
                self._answer_server_request(message)
            elif "id" in message:
                self.responses.setdefault(message["id"], queue.Queue()).put(message)
            else:
                self.notifications.put((time.perf_counter(), message))

    def _answer_server_request(self, message: dict[str, Any]) -> None:
        result: Any = None
        if message["method"] == "workspace/configuration":
            result = [None for _ in message["params"]["items"]]
        self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def _send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message).encode()
        with self.lock:
            assert self.proc.stdin is not None
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
            self.proc.stdin.flush()

    def request(self, method: str, params: Any) -> tuple[float, dict[str, Any]]:
        """Send a request; return (seconds until answered, the response)."""
        with self.lock:
            self.next_id += 1
            ident = self.next_id
        box = self.responses.setdefault(ident, queue.Queue())
        started = time.perf_counter()
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        response = box.get(timeout=120)
        del self.responses[ident]
        return time.perf_counter() - started, response

    def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def rss_mb(self) -> float:
        """The server's resident memory, in MiB."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        """Shut the server down politely, then for sure."""
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=5)
        except Exception:
            self.proc.kill()


# ----- measurements -----------------------------------------------------------------


def pct(samples: list[float], q: float) -> float:
    """The q-th percentile of samples, in milliseconds."""
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index] * 1000


def completion_items(response: dict[str, Any]) -> list[dict[str, Any]]:
    """Items of a completion response (list or CompletionList)."""
    result = response.get("result") or []
    return result["items"] if isinstance(result, dict) else result


def labels(response: dict[str, Any]) -> set[str]:
    """Labels of a completion response."""
    return {item["label"] for item in completion_items(response)}


def complete(
    client: Client, uri: str, line_text: str, version: int
) -> tuple[float, dict[str, Any]]:
    """Replace the scratch document with one line and ask for completion at its end."""
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"text": line_text}],
        },
    )
    return client.request(
        "textDocument/completion",
        {"textDocument": {"uri": uri}, "position": {"line": 0, "character": len(line_text)}},
    )


def wait_for_diagnostics(client: Client, uri: str, version: int, timeout: float = 30) -> float:
    """When diagnostics for `uri` at `version` (or later) arrived."""
    deadline = time.perf_counter() + timeout
    while True:
        at, message = client.notifications.get(timeout=max(0.01, deadline - time.perf_counter()))
        if message.get("method") != "textDocument/publishDiagnostics":
            continue
        params = message["params"]
        if params["uri"] == uri and (params.get("version") is None or params["version"] >= version):
            return at


def measure(size: int, workdir: Path) -> dict[str, Any]:
    """Every figure for one store size."""
    store = generate(workdir, size)
    root: Path = store["root"]
    command = [sys.executable, "-m", "memory_ls", *store["flags"]]
    figures: dict[str, Any] = {"memories": size}

    client = Client(command, root)
    _, _ = client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": root.as_uri(),
            "capabilities": {"textDocument": {"completion": {"completionItem": {}}}},
            "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
        },
    )
    figures["initialize_s"] = time.perf_counter() - client.started
    client.notify("initialized", {})
    scratch = root / "scratch.md"
    uri = scratch.as_uri()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": ""}},
    )
    version = 1
    probe = "[[" + TARGET[:8]
    while True:
        version += 1
        _, response = complete(client, uri, probe, version)
        if TARGET in labels(response):
            break
        if time.perf_counter() - client.started > 120:
            raise RuntimeError("the target memory never showed up in completion")
    figures["cold_start_s"] = time.perf_counter() - client.started

    floor = [client.request("memoryLs/benchmarkUnknownMethod", {})[0] for _ in range(300)]
    figures["floor_p50_ms"] = pct(floor, 50)

    rng = random.Random(3)
    samples: list[float] = []
    item_counts: list[int] = []
    for _ in range(40):
        name = rng.choice(store["names"])
        for length in range(13):
            version += 1
            took, response = complete(client, uri, "[[" + name[:length], version)
            samples.append(took)
            item_counts.append(len(completion_items(response)))
    figures["completion_p50_ms"] = pct(samples, 50)
    figures["completion_p99_ms"] = pct(samples, 99)
    figures["completion_max_items"] = max(item_counts)

    big_uri = store["big"].as_uri()
    big_text = store["big"].read_text()
    client.notify(
        "textDocument/didOpen",
        {
            "textDocument": {
                "uri": big_uri,
                "languageId": "markdown",
                "version": 1,
                "text": big_text,
            }
        },
    )
    wait_for_diagnostics(client, big_uri, 1)
    latencies = []
    for edit in range(2, 12):
        time.sleep(0.5)  # an edit after a pause, as a person makes one
        sent = time.perf_counter()
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": big_uri, "version": edit},
                "contentChanges": [
                    {
                        "range": {
                            "start": {"line": 0, "character": 0},
                            "end": {"line": 0, "character": 0},
                        },
                        "text": f"[[broken_{edit}]] ",
                    }
                ],
            },
        )
        latencies.append(wait_for_diagnostics(client, big_uri, edit) - sent)
    figures["diagnostics_1mb_p50_ms"] = pct(latencies, 50)

    visible = []
    for attempt in range(5):
        name = f"PLAN_external_write_{attempt}"
        written = time.perf_counter()
        (store["external"] / f"{name}.md").write_text("# written by an agent\n")
        while True:
            version += 1
            _, response = complete(client, uri, "[[" + name, version)
            if name in labels(response):
                break
            if time.perf_counter() - written > 30:
                raise RuntimeError("an external write never showed up")
            time.sleep(0.01)
        visible.append(time.perf_counter() - written)
    figures["write_visible_p50_ms"] = pct(visible, 50)
    figures["rss_mb"] = client.rss_mb()
    client.close()

    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", "check", *store["flags"]],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    figures["check_s"] = time.perf_counter() - started
    return figures


COLUMNS = (
    ("memories", "memories", "{:,}"),
    ("initialize_s", "init s", "{:.2f}"),
    ("cold_start_s", "cold start s", "{:.2f}"),
    ("floor_p50_ms", "floor ms", "{:.2f}"),
    ("completion_p50_ms", "compl p50 ms", "{:.2f}"),
    ("completion_p99_ms", "compl p99 ms", "{:.2f}"),
    ("completion_max_items", "max items", "{}"),
    ("diagnostics_1mb_p50_ms", "diag 1MB ms", "{:.1f}"),
    ("write_visible_p50_ms", "write visible ms", "{:.0f}"),
    ("check_s", "check s", "{:.2f}"),
    ("rss_mb", "RSS MiB", "{:.0f}"),
)


def table(rows: list[dict[str, Any]]) -> str:
    """A Markdown table of the figures."""
    head = "| " + " | ".join(title for _, title, _ in COLUMNS) + " |"
    rule = "| " + " | ".join("---" for _ in COLUMNS) + " |"
    body = [
        "| " + " | ".join(fmt.format(row[key]) for key, _, fmt in COLUMNS) + " |" for row in rows
    ]
    return "\n".join([head, rule, *body])


def main() -> None:
    """Run the benchmark for each size, print the table, write JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--output", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args()
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        workdir = Path(tempfile.mkdtemp(prefix=f"memory-ls-bench-{size}-"))
        try:
            print(f"measuring {size:,} memories ...", file=sys.stderr, flush=True)
            rows.append(measure(size, workdir))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    print(table(rows))
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    machine = {"platform": platform.platform(), "cpus": os.cpu_count(), "python": sys.version}
    path = out / f"bench-{stamp}.json"
    path.write_text(json.dumps({"machine": machine, "results": rows}, indent=2))
    print(f"\nwritten to {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
