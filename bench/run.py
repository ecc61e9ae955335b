#!/usr/bin/env python3
"""Benchmark the language server over stdio, as an editor sees it.

    python3 bench/run.py                   # 1,000, 10,000 and 100,000 memories
    python3 bench/run.py --sizes 1000      # one size (the CI smoke run)

Prints a table and writes JSON to bench/results/ so runs can be compared. Run it from
the repository's virtual environment (`python3 tasks.py bench` does that).

Each size gets a fresh store and a fresh cache directory (XDG_CACHE_HOME). The first start
finds nothing cached ("first start"); the store's index cache is then removed and the next
start is cold ("cold start": a store never indexed, the program's own compile cache there,
as its .pyc files are); a last start finds the index cache the cold one left ("warm"). The client
declares what VS Code declares for these features (previews on completionItem/resolve,
work-done progress). Completion is timed once indexing has ended ("compl"), and also
while the first indexing still runs ("p99 indexing"; nothing at sizes where indexing
is over before the first keystroke). Each completion sample is paired with a floor
sample (a request the server does not know) in the same conditions. Last, completion runs
back to back during an event storm (bench/storm.py: thousands of files created,
rewritten, renamed and deleted within seconds; "storm p50/p99"). Search (issue 14):
"search indexed" is until the full-text index is up to date (a progress of its own,
after "indexed"); then `memory.search` over a mix of queries, `memory-ls search` in a
new process each time, `search_memories` through `memory-ls mcp`, and the index's size.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import queue
import random
import re
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
BIG_NOTE_BYTES = 1_000_000
BIG_NOTE_REFERENCES = 1_000
# What the client says it can do: what VS Code's language client (vscode-languageclient
# 9, which the extension uses) says, as far as these measurements go: item previews come
# on completionItem/resolve, lists may share one edit range, indexing progress is shown.
CAPABILITIES: dict[str, Any] = {
    "window": {"workDoneProgress": True},
    "textDocument": {
        "completion": {
            "completionItem": {
                "snippetSupport": True,
                "insertReplaceSupport": True,
                "resolveSupport": {
                    "properties": ["documentation", "detail", "additionalTextEdits"]
                },
                "labelDetailsSupport": True,
            },
            "completionList": {
                "itemDefaults": [
                    "commitCharacters",
                    "editRange",
                    "insertTextFormat",
                    "insertTextMode",
                    "data",
                ]
            },
        },
        "publishDiagnostics": {"versionSupport": True},
    },
}


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
        # Global memories are named (and linked) `global/NAME`, as Serena names them.
        names.append(f"global/{name}" if folder == global_folder else name)
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
    (primary / "big_note.md").write_text(big_note(rng, names))
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
        "storm": (primary / "storm", folders["feature"]),
    }


SOURCE_FILES = 2_000


def as_repository(store: dict[str, Any], size: int, seed: int = 11) -> None:
    """Make the store's workspace a git repository whose memories name its files (`--git`).

    Every memory gains a line naming a source file and linking a document (one in ten
    of them gone: stale-path findings), the 1 MB note a path on each of its lines; then
    everything is committed, so stale-path is on as in a real repository.
    """
    rng = random.Random(seed)
    root: Path = store["root"]
    sources = [f"src/{rng.choice(WORDS)}/module_{i:05d}.py" for i in range(SOURCE_FILES)]
    for relative in sources:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("pass\n")
    (root / "docs").mkdir(exist_ok=True)
    for word in WORDS:
        (root / "docs" / f"{word}.md").write_text(f"# {word}\n")
    memories = [p for p in root.rglob("*.md") if "docs" not in p.parts and p != store["big"]]
    for number, path in enumerate(sorted(memories)):
        source = rng.choice(sources)
        if number % 10 == 0:
            source = source.replace("module_", "gone_")
        depth = len(path.relative_to(root).parts) - 1
        up = "../" * depth
        with path.open("a") as handle:
            handle.write(f"\nCode in `{source}`, see [docs]({up}docs/{rng.choice(WORDS)}.md).\n")
    store["big"].write_text(big_note(rng, store["names"], sources))
    for command in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.email=b@example.org", "-c", "user.name=bench", "commit", "-qm", "s"],
    ):
        subprocess.run(command, cwd=root, check=True, capture_output=True)


def big_note(rng: random.Random, names: list[str], sources: list[str] | None = None) -> str:
    """A 1,000,000-byte note with exactly 1,000 references, one per 1,000-byte line."""
    filler = " and more text to fill the note, as long notes have." * 25
    lines = []
    for i in range(BIG_NOTE_REFERENCES):
        head = f"Line {i}: see [[{rng.choice(names)}]]"
        if sources:
            head += f" in `{rng.choice(sources)}`"
        lines.append((head + filler)[: BIG_NOTE_BYTES // BIG_NOTE_REFERENCES - 1] + "\n")
    text = "".join(lines)
    assert len(text.encode()) == BIG_NOTE_BYTES and text.count("[[") == BIG_NOTE_REFERENCES
    return text


# ----- a raw JSON-RPC client --------------------------------------------------------


class Client:
    """The smallest LSP client: framed JSON over the server's stdin and stdout."""

    def __init__(self, command: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        self.responses: dict[int, queue.Queue[dict[str, Any]]] = {}
        self.notifications: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        self.lock = threading.Lock()
        # When the server said its indexing ended (`$/progress` end), if it did.
        self.indexed = threading.Event()
        self.indexed_at = float("nan")
        # When the full-text index was brought up to date (its own progress), if it was.
        self.titles: dict[Any, Any] = {}
        self.search_indexed = threading.Event()
        self.search_indexed_at = float("nan")
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
            elif message.get("method") == "$/progress":
                self._progress(message["params"])
            else:
                self.notifications.put((time.perf_counter(), message))

    def _progress(self, params: dict[str, Any]) -> None:
        """Note when indexing ends, and when indexing for search ends (issue 14)."""
        value, token = params["value"], params["token"]
        if value.get("kind") == "begin":
            self.titles[token] = value.get("title")
        elif value.get("kind") == "end":
            if self.titles.get(token) == SEARCH_PROGRESS_TITLE:
                self.search_indexed_at = time.perf_counter()
                self.search_indexed.set()
            else:
                self.indexed_at = time.perf_counter()
                self.indexed.set()

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

    def drain(self) -> None:
        """Forget the notifications received so far."""
        while True:
            try:
                self.notifications.get_nowait()
            except queue.Empty:
                return

    def memory_mb(self) -> tuple[float, float]:
        """The server's resident memory now and at its peak, in MiB."""
        fields = {}
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            fields[key] = value.split()
        return int(fields["VmRSS"][0]) / 1024, int(fields["VmHWM"][0]) / 1024

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
    """The q-th percentile of samples, in milliseconds (nan when there are none)."""
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index] * 1000


def completion_items(response: dict[str, Any]) -> list[dict[str, Any]]:
    """Items of a completion response (list or CompletionList)."""
    if "error" in response:
        raise RuntimeError(f"completion failed: {response['error']}")
    result = response.get("result") or []
    return result["items"] if isinstance(result, dict) else result


def labels(response: dict[str, Any]) -> set[str]:
    """Labels of a completion response."""
    return {item["label"] for item in completion_items(response)}


class Editor:
    """One scratch document that completion is asked in, as an editor does."""

    def __init__(self, client: Client, root: Path) -> None:
        self.client = client
        self.uri = (root / "scratch.md").as_uri()
        self.version = 1
        client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": self.uri,
                    "languageId": "markdown",
                    "version": 1,
                    "text": "",
                }
            },
        )

    def complete(self, line_text: str) -> tuple[float, dict[str, Any]]:
        """Replace the document with one line; time completion at its end."""
        self.version += 1
        self.client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": self.uri, "version": self.version},
                "contentChanges": [{"text": line_text}],
            },
        )
        return self.client.request(
            "textDocument/completion",
            {
                "textDocument": {"uri": self.uri},
                "position": {"line": 0, "character": len(line_text)},
            },
        )

    def wait_for_name(self, name: str, since: float, timeout: float, pause: float = 0.0) -> float:
        """Ask for completion of `name` until it is offered; return when it was."""
        while True:
            _, response = self.complete("[[" + name)
            if name in labels(response):
                return time.perf_counter()
            if time.perf_counter() - since > timeout:
                raise RuntimeError(f"{name} never showed up in completion")
            time.sleep(pause)


def wait_for_diagnostics(client: Client, uri: str, version: int, sent: float) -> float:
    """When diagnostics for `uri` at exactly `version` arrived (after `sent`)."""
    deadline = time.perf_counter() + 60
    while True:
        at, message = client.notifications.get(timeout=max(0.01, deadline - time.perf_counter()))
        if message.get("method") != "textDocument/publishDiagnostics" or at < sent:
            continue
        params = message["params"]
        if params["uri"] == uri and params.get("version") in (version, None):
            return at


def start(
    command: list[str],
    root: Path,
    env: dict[str, str],
    capabilities: dict[str, Any] = CAPABILITIES,
) -> tuple[Client, float]:
    """Start a server and initialize it; return it and the seconds until it answered."""
    client = Client(command, root, env)
    client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": root.as_uri(),
            "capabilities": capabilities,
            "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
        },
    )
    answered = time.perf_counter() - client.started
    client.notify("initialized", {})
    return client, answered


def typed_prefixes(names: list[str], count: int, seed: int) -> list[tuple[str, str]]:
    """(name, typed text) pairs: `count` names, each typed from 0 to 12 characters."""
    rng = random.Random(seed)
    return [(name, name[:length]) for name in rng.sample(names, count) for length in range(13)]


def measure_completion(editor: Editor, plan: list[tuple[str, str]]) -> dict[str, Any]:
    """Completion latencies over typed prefixes, each next to a JSON-RPC floor sample."""
    samples: list[float] = []
    floor: list[float] = []
    item_counts: list[int] = []
    for name, typed in plan:
        took, response = editor.complete("[[" + typed)
        samples.append(took)
        item_counts.append(len(completion_items(response)))
        # The floor in the same conditions: a request the server does not know.
        floor.append(editor.client.request("memoryLs/benchmarkUnknownMethod", {})[0])
        # Not timed: the whole name must be offered, or the timings mean nothing.
        last = len(typed) == 12
        offered = labels(editor.complete("[[" + name)[1]) if last else set()
        # Global memories are offered as global/NAME (Serena's names).
        if last and not offered & {name, f"global/{name}"}:
            raise RuntimeError(f"completion of the whole name {name} does not offer it")
    return {
        "floor_p50_ms": pct(floor, 50),
        "completion_p50_ms": pct(samples, 50),
        "completion_p99_ms": pct(samples, 99),
        "completion_max_items": max(item_counts),
        "samples": len(samples),
    }


STORM_QUERIES = ["storm/w1_02", "FEATURE_w2_01", "sto", "w0_00", "FEATURE_"]


def measure_storm(editor: Editor, topic: Path, feature: Path) -> dict[str, Any]:
    """Completion back to back while bench/storm.py writes thousands of files."""
    writer = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("storm.py")), str(topic), str(feature)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    if writer.stdout.readline().strip() != "wave 0":
        raise RuntimeError("the storm writer did not start")
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(writer.stdout or ()), daemon=True)
    reader.start()
    samples: list[float] = []
    started = time.perf_counter()
    while writer.poll() is None:
        samples.append(editor.complete("[[" + STORM_QUERIES[len(samples) % 5])[0])
    seconds = time.perf_counter() - started
    reader.join()
    if writer.returncode != 0:
        raise RuntimeError(f"the storm writer failed: {''.join(output)}")
    return {
        "storm_seconds": seconds,
        "storm_samples": len(samples),
        "storm_p50_ms": pct(samples, 50),
        "storm_p99_ms": pct(samples, 99),
        "storm_max_ms": pct(samples, 100),
    }


# ----- search (issue 14) ------------------------------------------------------------

# What agents and people search for: common words (each in about a fifth of the generated
# memories), two words, a phrase, a prefix, a name, a word being typed, a rare word.
SEARCH_QUERIES = [
    "auth",
    "deploy notes",
    '"notes about cache"',
    "retry*",
    "FEATURE_login",
    "token session",
    "migration",
    "metrics logging",
    TARGET,
    "api clie",
]
SEARCH_ROUNDS = 4
SEARCH_PROGRESS_TITLE = "Indexing memories for search"
CLI_SEARCH_RUNS = 5


def search_names(response: dict[str, Any]) -> set[str]:
    """Names in a memory.search response (an error is a failed run)."""
    if "error" in response:
        raise RuntimeError(f"memory.search failed: {response['error']}")
    return {hit["name"] for hit in response["result"]["results"]}


def measure_lsp_search(client: Client) -> dict[str, Any]:
    """`memory.search` latencies over the query mix, once indexing for search has ended."""
    if not client.search_indexed.wait(timeout=600):
        raise RuntimeError("indexing for search never ended")
    samples: list[float] = []
    for _ in range(SEARCH_ROUNDS):
        for query in SEARCH_QUERIES:
            took, response = client.request(
                "workspace/executeCommand",
                {"command": "memory.search", "arguments": [{"query": query}]},
            )
            samples.append(took)
            if query == TARGET and TARGET not in search_names(response):
                raise RuntimeError("memory.search does not find the target memory")
    return {
        "search_indexed_s": client.search_indexed_at - client.started,
        "search_p50_ms": pct(samples, 50),
        "search_p99_ms": pct(samples, 99),
    }


def measure_mcp_search(store: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """`search_memories` latencies over the query mix, through `memory-ls mcp` (stdio)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "memory_ls.cli", "mcp", *store["flags"]],
        cwd=store["root"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def call(ident: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
        stdin.write(json.dumps(message) + "\n")
        stdin.flush()
        while True:
            answer = json.loads(stdout.readline())
            if answer.get("id") == ident:
                return dict(answer)

    try:
        call(
            0,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        )
        stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        samples: list[float] = []
        for round_number in range(SEARCH_ROUNDS):
            for number, query in enumerate(SEARCH_QUERIES):
                started = time.perf_counter()
                answer = call(
                    1 + round_number * 100 + number,
                    "tools/call",
                    {"name": "search_memories", "arguments": {"query": query}},
                )
                samples.append(time.perf_counter() - started)
                if answer.get("error") or answer["result"].get("isError"):
                    raise RuntimeError(f"search_memories failed: {answer}")
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    return {"mcp_search_p50_ms": pct(samples, 50), "mcp_search_p99_ms": pct(samples, 99)}


def measure_cli_search(store: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """`memory-ls search` in a new process each time (the index cache kept), median seconds."""
    samples = []
    for run_number in range(CLI_SEARCH_RUNS):
        query = SEARCH_QUERIES[run_number % len(SEARCH_QUERIES)]
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "memory_ls.cli", "search", query, "--json", *store["flags"]],
            cwd=store["root"],
            env=env,
            capture_output=True,
            check=True,
        )
        samples.append(time.perf_counter() - started)
    return {"cli_search_s": pct(samples, 50) / 1000}


def search_index_ratio(workdir: Path) -> dict[str, Any]:
    """The full-text index's size on disk over the size of the memories."""
    index = sum(
        path.stat().st_size
        for path in (workdir / "cache" / "memory-ls" / "index").glob("*.search.sqlite3*")
    )
    memories = sum(
        path.stat().st_size for path in workdir.rglob("*.md") if "cache" not in path.parts
    )
    return {"search_index_mb": index / 2**20, "search_index_ratio": index / max(memories, 1)}


def calibrate() -> float:
    """How fast this machine runs Python now: a fixed loop, best of three, in ms.

    Shared machines change speed from one minute to the next (a neighbour's load): runs
    are comparable where this figure is close.
    """
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        total = 0
        for number in range(1_000_000):
            total += number
        best = min(best, time.perf_counter() - started)
    return best * 1000


def measure(size: int, workdir: Path, git: bool = False) -> dict[str, Any]:
    """Every figure for one store size."""
    store = generate(workdir, size)
    if git:
        as_repository(store, size)
    root: Path = store["root"]
    command = [sys.executable, "-m", "memory_ls", *store["flags"]]
    # The user's cache stays out of it: the first start is cold, the second warm.
    env = {**os.environ, "XDG_CACHE_HOME": str(workdir / "cache")}
    figures: dict[str, Any] = {
        "memories": size,
        "git": git,
        "load_before": os.getloadavg()[0],
        "cpu_calibration_ms": calibrate(),
    }

    # The very first start after installing: nothing cached, not even the code that the
    # protocol library generates at import (memory_ls/lsp/startup.py). Then that cache is
    # kept, as .pyc files are, and the store's index cache is removed: a cold start is the
    # first start on a store the server has never indexed.
    client, _ = start(command, root, env)
    Editor(client, root).wait_for_name(TARGET, client.started, timeout=120)
    figures["first_start_s"] = time.perf_counter() - client.started
    client.indexed.wait(timeout=600)
    client.close()
    shutil.rmtree(workdir / "cache" / "memory-ls" / "index", ignore_errors=True)

    client, figures["initialize_s"] = start(command, root, env)
    editor = Editor(client, root)
    editor.wait_for_name(TARGET, client.started, timeout=120)
    figures["cold_start_s"] = time.perf_counter() - client.started

    # Typing while the first indexing still runs (none at small sizes: it is over).
    during: list[float] = []
    plan = typed_prefixes(store["names"], 40, seed=5)
    while not client.indexed.is_set() and len(during) < len(plan):
        during.append(editor.complete("[[" + plan[len(during)][1])[0])
    figures["completion_indexing_p99_ms"] = pct(during, 99)
    figures["completion_indexing_samples"] = len(during)
    if not client.indexed.wait(timeout=600):
        raise RuntimeError("indexing never ended")
    figures["indexed_s"] = client.indexed_at - client.started

    figures.update(measure_completion(editor, typed_prefixes(store["names"], 40, seed=3)))
    figures.update(measure_navigation(editor, store))
    figures.update(measure_lsp_search(client))

    big_uri = store["big"].as_uri()
    sent = time.perf_counter()
    client.notify(
        "textDocument/didOpen",
        {
            "textDocument": {
                "uri": big_uri,
                "languageId": "markdown",
                "version": 1,
                "text": store["big"].read_text(),
            }
        },
    )
    wait_for_diagnostics(client, big_uri, 1, sent)
    latencies = []
    for edit in range(2, 12):
        time.sleep(0.5)  # an edit after a pause, as a person makes one
        client.drain()
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
        latencies.append(wait_for_diagnostics(client, big_uri, edit, sent) - sent)
    figures["diagnostics_1mb_p50_ms"] = pct(latencies, 50)

    visible = []
    for attempt in range(10):
        name = f"PLAN_external_write_{attempt}"
        time.sleep(0.2)
        written = time.perf_counter()
        (store["external"] / f"{name}.md").write_text("# written by an agent\n")
        visible.append(editor.wait_for_name(name, written, timeout=30, pause=0.01) - written)
    figures["write_visible_p50_ms"] = pct(visible, 50)
    figures["write_visible_max_ms"] = pct(visible, 100)
    figures["rss_mb"], figures["peak_rss_mb"] = client.memory_mb()
    client.close()

    # A second start finds the cache the first one left.
    client, figures["warm_initialize_s"] = start(command, root, env)
    editor = Editor(client, root)
    editor.wait_for_name(TARGET, client.started, timeout=120)
    figures["warm_start_s"] = time.perf_counter() - client.started
    if not client.indexed.wait(timeout=600):
        raise RuntimeError("indexing never ended")
    figures["warm_indexed_s"] = client.indexed_at - client.started
    # An event storm (bench/storm.py) over this store; its files go again afterwards.
    figures.update(measure_storm(editor, *store["storm"]))
    client.close()
    topic, feature = store["storm"]
    shutil.rmtree(topic)
    for path in feature.glob("FEATURE_w*.md"):
        path.unlink()

    figures.update(measure_plain_client(command, root, env, store))

    started = time.perf_counter()
    checked = subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", "check", *store["flags"]],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    figures["check_s"] = time.perf_counter() - started
    if checked.returncode not in (0, 1) or "error(s)" not in checked.stderr:
        raise RuntimeError(f"memory-ls check failed ({checked.returncode}): {checked.stderr}")
    figures["check_findings"] = len(checked.stdout.splitlines())
    figures.update(measure_cli_search(store, env))
    figures.update(measure_mcp_search(store, env))
    figures.update(search_index_ratio(workdir))
    figures["load_after"] = os.getloadavg()[0]
    return figures


# ----- navigation: references, workspace symbols, a client without resolve -----------

# A client that declares nothing about completion, as many editors do (no resolve, no
# shared edit range): previews come inline. It declares work-done progress only, so
# that the benchmark knows when indexing is over; completion does not look at that.
PLAIN_CAPABILITIES: dict[str, Any] = {"window": {"workDoneProgress": True}}
NAVIGATION_SAMPLES = 40
_WIKI_LINK = re.compile(r"\[\[([^\[\]|\n]*)\]\]")


def link_counts(store: dict[str, Any]) -> collections.Counter[str]:
    """How many `[[NAME]]` links to each name the generated store holds (every file read)."""
    counts: collections.Counter[str] = collections.Counter()
    root: Path = store["root"]
    for folder in (root, Path(store["flags"][-1])):
        for path in folder.rglob("*.md"):
            counts.update(_WIKI_LINK.findall(path.read_text()))
    return counts


def replace_text(editor: Editor, text: str) -> None:
    """Replace the scratch document's text, as typing does."""
    editor.version += 1
    editor.client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": editor.uri, "version": editor.version},
            "contentChanges": [{"text": text}],
        },
    )


def measure_navigation(editor: Editor, store: dict[str, Any]) -> dict[str, Any]:
    """References on a `[[name]]` (checked against the links on disk) and workspace symbols
    over typed names, each sample next to a floor sample."""
    client = editor.client
    counts = link_counts(store)
    rng = random.Random(11)
    references: list[float] = []
    floor: list[float] = []
    for name in rng.sample(store["names"], NAVIGATION_SAMPLES):
        replace_text(editor, f"See [[{name}]].")
        took, response = client.request(
            "textDocument/references",
            {
                "textDocument": {"uri": editor.uri},
                "position": {"line": 0, "character": 7},
                "context": {"includeDeclaration": False},
            },
        )
        references.append(took)
        floor.append(client.request("memoryLs/benchmarkUnknownMethod", {})[0])
        found = len(response.get("result") or [])
        # Every link in the store, and the one in the scratch document.
        if found != counts[name] + 1:
            raise RuntimeError(f"references to {name}: {found}, expected {counts[name] + 1}")
    symbols: list[float] = []
    for name, typed in typed_prefixes(store["names"], NAVIGATION_SAMPLES // 2, seed=13):
        took, response = client.request("workspace/symbol", {"query": typed})
        symbols.append(took)
        floor.append(client.request("memoryLs/benchmarkUnknownMethod", {})[0])
        if len(typed) == 12:  # not timed: the whole name must find the memory first
            whole = client.request("workspace/symbol", {"query": name})[1]["result"]
            if not whole or whole[0]["name"] not in (name, f"global/{name}"):
                raise RuntimeError(f"workspace symbols for {name}: {whole[:1]}")
    return {
        "navigation_floor_p50_ms": pct(floor, 50),
        "references_p50_ms": pct(references, 50),
        "references_p99_ms": pct(references, 99),
        "symbols_p50_ms": pct(symbols, 50),
        "symbols_p99_ms": pct(symbols, 99),
    }


def measure_plain_client(
    command: list[str], root: Path, env: dict[str, str], store: dict[str, Any]
) -> dict[str, Any]:
    """Completion for a client without completionItem/resolve, once indexed (warm start)."""
    client, _ = start(command, root, env, PLAIN_CAPABILITIES)
    try:
        editor = Editor(client, root)
        if not client.indexed.wait(timeout=600):
            raise RuntimeError("indexing never ended")
        first = completion_items(editor.complete("[[" + store["names"][0])[1])[0]
        if "---" not in first.get("documentation", {}).get("value", ""):
            raise RuntimeError(f"no inline preview for a client without resolve: {first}")
        figures = measure_completion(editor, typed_prefixes(store["names"], 40, seed=3))
    finally:
        client.close()
    return {
        "plain_floor_p50_ms": figures["floor_p50_ms"],
        "plain_completion_p50_ms": figures["completion_p50_ms"],
        "plain_completion_p99_ms": figures["completion_p99_ms"],
    }


NAVIGATION_COLUMNS = (
    ("references_p50_ms", "refs p50 ms", "{:.2f}"),
    ("symbols_p50_ms", "symbols p50 ms", "{:.2f}"),
    ("plain_completion_p50_ms", "compl {} p50 ms", "{:.2f}"),
    ("plain_completion_p99_ms", "compl {} p99 ms", "{:.2f}"),
)


COLUMNS = (
    ("memories", "memories", "{:,}"),
    ("first_start_s", "first start s", "{:.2f}"),
    ("initialize_s", "init s", "{:.2f}"),
    ("cold_start_s", "cold start s", "{:.2f}"),
    ("warm_start_s", "warm start s", "{:.2f}"),
    ("indexed_s", "indexed s", "{:.1f}"),
    ("warm_indexed_s", "indexed warm s", "{:.1f}"),
    ("floor_p50_ms", "floor ms", "{:.2f}"),
    ("completion_p50_ms", "compl p50 ms", "{:.2f}"),
    ("completion_p99_ms", "compl p99 ms", "{:.2f}"),
    ("completion_indexing_p99_ms", "p99 indexing ms", "{:.1f}"),
    ("storm_p50_ms", "storm p50 ms", "{:.1f}"),
    ("storm_p99_ms", "storm p99 ms", "{:.1f}"),
    ("diagnostics_1mb_p50_ms", "diag 1MB ms", "{:.1f}"),
    ("write_visible_p50_ms", "write visible ms", "{:.0f}"),
    ("check_s", "check s", "{:.2f}"),
    ("search_indexed_s", "search indexed s", "{:.1f}"),
    ("search_p50_ms", "search p50 ms", "{:.1f}"),
    ("search_p99_ms", "search p99 ms", "{:.1f}"),
    ("mcp_search_p50_ms", "MCP search p50 ms", "{:.0f}"),
    ("cli_search_s", "CLI search s", "{:.2f}"),
    ("search_index_ratio", "index / memories", "{:.2f}"),
    ("rss_mb", "RSS MiB", "{:.0f}"),
    ("peak_rss_mb", "peak MiB", "{:.0f}"),
    ("load_before", "load", "{:.1f}"),
    ("cpu_calibration_ms", "cpu ms", "{:.0f}"),
)
COLUMNS += NAVIGATION_COLUMNS


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
    parser.add_argument(
        "--git",
        action="store_true",
        help="make the workspace a git repository whose memories name its files (stale-path on)",
    )
    args = parser.parse_args()
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        workdir = Path(tempfile.mkdtemp(prefix=f"memory-ls-bench-{size}-"))
        try:
            print(f"measuring {size:,} memories ...", file=sys.stderr, flush=True)
            rows.append(measure(size, workdir, git=args.git))
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
