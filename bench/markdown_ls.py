#!/usr/bin/env python3
"""References and workspace symbols: memory-ls beside VS Code's own Markdown language server.

    python3 bench/markdown_ls.py --sizes 10000

Generates the benchmark's store (bench/run.py), then drives memory-ls and
`vscode-markdown-languageserver` (npm, pinned below, installed into
~/.cache/memory-ls/bench/ on first use; needs Node and npm) with the same client, and
prints the JSON-RPC floor and the p50/p99 of each, as bench/run.py measures them.

VS Code's server asks its client to read files and to parse Markdown (`markdown/parse`:
markdown-it tokens, which VS Code's extension makes). The client here answers from disk
and tokenizes headings and fences, which is all that references and symbols read of the
tokens. Both servers are timed once they have read the store (one request each first,
not timed). VS Code's server knows Markdown links, not `[[name]]`: its references are
asked on a Markdown link to the same memory file (every link to the file in every
document); ours on `[[name]]`. Its workspace symbols are the headings of every document
(each memory here starts with `# name`); ours the memories' names.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

sys.path.insert(0, str(Path(__file__).parent))

import run  # the benchmark's store, client and measures

PACKAGE = "vscode-markdown-languageserver"
VERSION = "0.5.0"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "memory-ls" / "bench"
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def install() -> Path:
    """The server's entry point, installed with npm at the pinned version when missing."""
    prefix = CACHE / f"{PACKAGE}-{VERSION}"
    main = prefix / "node_modules" / PACKAGE / "dist" / "node" / "workerMain.js"
    if not main.exists():
        prefix.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                *("npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund"),
                *("--ignore-scripts", f"{PACKAGE}@{VERSION}"),
            ],
            check=True,
        )
    return main


def path_of(uri: str) -> Path:
    """The file path of a file URI."""
    return Path(unquote(urlparse(uri).path))


def tokens(text: str) -> list[dict[str, Any]]:
    """markdown-it tokens for the headings and fenced code of a text."""

    def token(kind: str, tag: str, line: int, nesting: int, **extra: Any) -> dict[str, Any]:
        return {
            "type": kind,
            "tag": tag,
            "attrs": None,
            "map": [line, line + 1],
            "nesting": nesting,
            "level": 0,
            "children": None,
            "content": "",
            "markup": "",
            "info": "",
            "meta": None,
            "block": True,
            "hidden": False,
            **extra,
        }

    found: list[dict[str, Any]] = []
    lines = text.split("\n")
    fence_start: int | None = None
    for number, line in enumerate(lines):
        fence = _FENCE.match(line)
        if fence_start is not None:
            if fence:
                found.append(token("fence", "code", fence_start, 0))
                found[-1]["map"] = [fence_start, number + 1]
                fence_start = None
            continue
        if fence:
            fence_start = number
            continue
        heading = _HEADING.match(line)
        if heading:
            tag = f"h{len(heading.group(1))}"
            found.append(token("heading_open", tag, number, 1, markup=heading.group(1)))
            inline = token("inline", "", number, 0, content=heading.group(2))
            inline["children"] = [{**inline, "type": "text", "children": None, "block": False}]
            found.append(inline)
            found.append(token("heading_close", tag, number, -1, markup=heading.group(1)))
    return found


class MarkdownClient(run.Client):
    """The bench client, answering what VS Code's extension answers for its server."""

    def __init__(self, command: list[str], cwd: Path, files: list[Path]) -> None:
        self.files = files
        self.open_texts: dict[str, str] = {}
        super().__init__(command, cwd, dict(os.environ))

    def _answer_server_request(self, message: dict[str, Any]) -> None:
        method, params = message["method"], message.get("params") or {}
        result: Any = None
        try:
            result = self._answer(method, params)
        except OSError:
            result = None
        self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def _answer(self, method: str, params: dict[str, Any]) -> Any:
        if method == "workspace/configuration":
            return [None for _ in params["items"]]
        if method == "markdown/findMarkdownFilesInWorkspace":
            return [path.as_uri() for path in self.files]
        if method == "markdown/parse":
            uri = params["uri"]
            text = params.get("text") or self.open_texts.get(uri)
            return tokens(text if text is not None else path_of(uri).read_text())
        if method == "markdown/fs/readFile":
            return list(path_of(params["uri"]).read_bytes())
        if method == "markdown/fs/stat":
            path = path_of(params["uri"])
            return {"isDirectory": path.is_dir()} if path.exists() else None
        if method == "markdown/fs/readDirectory":
            return [
                [entry.name, {"isDirectory": entry.is_dir()}]
                for entry in path_of(params["uri"]).iterdir()
            ]
        return None


def edit(client: run.Client, uri: str, version: int, text: str) -> None:
    """Replace an open document's text."""
    client.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
    )


def measure_theirs(main: Path, store: dict[str, Any]) -> dict[str, Any]:
    """VS Code's server: references on a Markdown link to a memory, workspace symbols."""
    root: Path = store["root"]
    global_folder = Path(store["flags"][-1])
    files = sorted(root.rglob("*.md")) + sorted(global_folder.rglob("*.md"))
    # By the names the store lists: `global/NAME` for the global folder's.
    by_name = {
        f"global/{path.stem}" if path.is_relative_to(global_folder) else path.stem: path
        for path in files
    }
    client = MarkdownClient(["node", str(main), "--stdio"], root, files)
    try:
        client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": run.CAPABILITIES,
                "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
            },
        )
        client.notify("initialized", {})
        scratch = root / "scratch.md"
        uri = scratch.as_uri()
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": ""}},
        )
        rng = random.Random(11)
        picks = rng.sample(store["names"], run.NAVIGATION_SAMPLES)
        references: list[float] = []
        floor: list[float] = []
        for version, name in enumerate([picks[0], *picks], start=2):
            target = os.path.relpath(by_name[name], root)
            text = f"See [{name}]({target})."
            client.open_texts[uri] = text
            edit(client, uri, version, text)
            took, response = client.request(
                "textDocument/references",
                {
                    "textDocument": {"uri": uri},
                    # On the link's target, where it finds every link to that file.
                    "position": {"line": 0, "character": text.index("](") + 3},
                    "context": {"includeDeclaration": False},
                },
            )
            if version == 2:
                continue  # the first one reads the whole store: not timed
            if "error" in response or not response.get("result"):
                raise RuntimeError(f"no references from VS Code's server: {response}")
            references.append(took)
            floor.append(client.request("memoryLs/benchmarkUnknownMethod", {})[0])
        symbols: list[float] = []
        client.request("workspace/symbol", {"query": "x"})  # reads every heading: not timed
        for _name, typed in run.typed_prefixes(store["names"], run.NAVIGATION_SAMPLES // 2, 13):
            took, response = client.request("workspace/symbol", {"query": typed})
            if "error" in response:
                raise RuntimeError(f"workspace symbols failed: {response}")
            symbols.append(took)
            floor.append(client.request("memoryLs/benchmarkUnknownMethod", {})[0])
        rss = client.memory_mb()[0]
    finally:
        client.close()
    return {
        "navigation_floor_p50_ms": run.pct(floor, 50),
        "references_p50_ms": run.pct(references, 50),
        "references_p99_ms": run.pct(references, 99),
        "symbols_p50_ms": run.pct(symbols, 50),
        "symbols_p99_ms": run.pct(symbols, 99),
        "rss_mb": rss,
    }


def measure_ours(store: dict[str, Any], workdir: Path) -> dict[str, Any]:
    """memory-ls on the same store, once indexed."""
    root: Path = store["root"]
    env = {**os.environ, "XDG_CACHE_HOME": str(workdir / "cache")}
    command = [sys.executable, "-m", "memory_ls", *store["flags"]]
    client, _ = run.start(command, root, env)
    try:
        editor = run.Editor(client, root)
        if not client.indexed.wait(timeout=600):
            raise RuntimeError("indexing never ended")
        figures = run.measure_navigation(editor, store)
        figures["rss_mb"] = client.memory_mb()[0]
    finally:
        client.close()
    return figures


COLUMNS = (
    ("navigation_floor_p50_ms", "floor ms", "{:.2f}"),
    ("references_p50_ms", "refs p50 ms", "{:.2f}"),
    ("references_p99_ms", "refs p99 ms", "{:.2f}"),
    ("symbols_p50_ms", "symbols p50 ms", "{:.2f}"),
    ("symbols_p99_ms", "symbols p99 ms", "{:.2f}"),
    ("rss_mb", "RSS MiB", "{:.0f}"),
)


def main() -> None:
    """Measure both servers for each size and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--output", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args()
    server = install()
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        workdir = Path(tempfile.mkdtemp(prefix=f"memory-ls-mdls-{size}-"))
        try:
            store = run.generate(workdir, size)
            print(f"measuring {size:,} memories ...", file=sys.stderr, flush=True)
            load = os.getloadavg()[0]
            ours = measure_ours(store, workdir)
            theirs = measure_theirs(server, store)
            rows.append((size, "memory-ls", ours, load))
            rows.append((size, f"{PACKAGE} {VERSION}", theirs, os.getloadavg()[0]))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        time.sleep(0.1)
    head = ["memories", "server", *(title for _, title, _ in COLUMNS), "load"]
    print("| " + " | ".join(head) + " |")
    print("| " + " | ".join("---" for _ in head) + " |")
    for size, name, figures, load in rows:
        cells = [f"{size:,}", name, *(fmt.format(figures[key]) for key, _, fmt in COLUMNS)]
        print("| " + " | ".join([*cells, f"{load:.1f}"]) + " |")
    machine = {"platform": platform.platform(), "cpus": os.cpu_count(), "python": sys.version}
    records = [{"memories": s, "server": n, "load": load, **f} for s, n, f, load in rows]
    output = Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    path = output / f"markdown-ls-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps({"machine": machine, "results": records}, indent=2))
    print(f"written to {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
