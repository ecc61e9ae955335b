"""Running the tool: `main`, `run` (settings, the Store) and `_dispatch` (one command)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, TextIO

from memory_ls.cli.checks import _changes, _check, _context
from memory_ls.cli.common import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, UsageError
from memory_ls.cli.config_cmd import _config
from memory_ls.cli.git import _git_setup, _merge_driver
from memory_ls.cli.parser import build_parser, layer_from_args
from memory_ls.cli.text import _human
from memory_ls.cli.transfer import _export, _import
from memory_ls.config import ConfigError, Layer, anchor_layer, merge_layers
from memory_ls.core.rules.errors import InvalidArguments, MemoryStoreError
from memory_ls.core.services.related import supersede_note
from memory_ls.core.services.search import SearchIndex, start_file_helper
from memory_ls.core.storage.folders import resolve_store_config
from memory_ls.core.store import Store
from memory_ls.project_file import load_project, store_root


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Entry point of the `memory-ls` command."""
    sys.exit(run(sys.argv[1:] if argv is None else argv, sys.stdin, sys.stdout, sys.stderr))


def run(argv: Sequence[str], stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """Run the tool; return the exit status."""
    args = build_parser().parse_args(argv)
    try:
        layer = layer_from_args(args)
        if args.command == "serve":
            # The language server reads the project file of its workspace folder.
            return _serve(args, layer)
        if args.command == "merge-driver":
            # A merge never depends on the store's settings, and must not fail on them.
            return _merge_driver(args, stderr)
        start = os.path.abspath(args.root or os.getcwd())
        # Folders given as flags are relative to where they were given (the project
        # file's, to its directory): the same flags mean the same folders from anywhere.
        layer = anchor_layer(layer, start)
        project = load_project(start)
        if args.command == "mcp":
            from memory_ls.mcp.server import run_mcp  # keeps the SDK off other commands' path

            run_mcp(layer, start, args.tool_prefix)
            return EXIT_OK
        layers = (project.layer, layer) if project is not None else (layer,)
        if args.command == "config":
            return _config(args, project, layers, start, stdout)
        if args.command == "init":
            from memory_ls.init import run_init

            return run_init(args, project, layer, start, stdout, stderr)
        settings = merge_layers(*layers)
        config = resolve_store_config(
            settings,
            store_root(start, project),
            project_file=project.path if project is not None else None,
        )
        for missing in config.missing_additional:
            print(
                f"memory-ls: warning: additional folder {missing} does not exist; skipped",
                file=stderr,
            )
        for problem in config.patterns.problems:
            print(f"memory-ls: warning: {problem}", file=stderr)
        # A search, a move or a delete (to find the referrers), a read (who supersedes it)
        # and `about` (to find the mentions) open the full-text index (kept in the user's
        # cache directory).
        search_index = (
            SearchIndex(config, live=False)
            if args.command in ("search", "move", "delete", "read", "about", "revert")
            else None
        )
        try:
            store = Store(config, search_index, source="cli")
            return _dispatch(args, store, stdin, stdout, stderr)
        finally:
            if search_index is not None:
                search_index.close()
    except ConfigError as exc:
        print(f"memory-ls: usage error: {exc}", file=stderr)
        return EXIT_USAGE
    except UsageError as exc:
        print(f"memory-ls: usage error: {exc}", file=stderr)
        return EXIT_USAGE
    except InvalidArguments as exc:
        print(f"memory-ls: error: [{exc.code}] {exc.message}", file=stderr)
        return EXIT_USAGE
    except MemoryStoreError as exc:
        print(f"memory-ls: error: [{exc.code}] {exc.message}", file=stderr)
        return EXIT_REFUSED


def _serve(args: argparse.Namespace, layer: Layer) -> int:
    tcp: tuple[str, int] | None = None
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not host or not port.isdigit():
            raise UsageError(f"--tcp wants HOST:PORT, not {args.tcp!r}")
        tcp = (host, int(port))
    if args.root:
        os.chdir(args.root)
    from memory_ls.lsp import startup
    from memory_ls.lsp.malloc import fix_mmap_threshold, limit_malloc_arenas

    limit_malloc_arenas()  # before the server starts any thread
    fix_mmap_threshold()

    startup.begin()  # until the session has begun: see memory_ls/lsp/startup.py
    from memory_ls.lsp.app import serve  # the server's imports stay off other commands' path

    # Before any thread: a search while the first indexing runs reads every memory file,
    # half of them in this helper process.
    start_file_helper()
    serve(layer, tcp=tcp)
    return EXIT_OK


def _agent_files(store: Store, query: str, mode: str) -> dict[str, Any]:
    """The agents' files of the repository that match (`agentFiles`, `moreAgentFiles`),
    listed once: a command runs once per process."""
    from memory_ls.core.operations.agent_files import load_agent_files
    from memory_ls.core.operations.agent_search import agent_matches
    from memory_ls.core.services.relevance import parse_query

    known = load_agent_files(store.config.root)
    return agent_matches(store.config, parse_query(query, mode), known).fields()


def _dispatch(
    args: argparse.Namespace, store: Store, stdin: TextIO, stdout: TextIO, stderr: TextIO
) -> int:
    """Run one store command and print its result."""
    command = args.command
    if command == "check":
        return _check(args, store, stdout, stderr)
    if command == "export":
        return _export(args, store, stdout)
    if command == "changes":
        return _changes(args, store, stdout, stderr)
    if command == "context":
        return _context(args, store, stdout, stderr)
    if command == "git-setup":
        return _git_setup(args, store.config, stdout, stderr)
    if command == "graph":
        from memory_ls.core.operations.graph import graph_summary, store_graph

        payload = store_graph(store, _graph_query(args))
        print(json.dumps(payload) if args.json else graph_summary(payload), file=stdout)
        return EXIT_OK
    result: dict[str, Any]
    if command == "list":
        result = store.list_memories(
            args.scope,
            args.tags,
            args.prefix,
            topic=args.topic,
            limit=args.limit,
            cursor=args.cursor,
        )
    elif command == "read":
        memory, data = store.read_file(args.name, args.scope)
        result, successors = store.read_answer(memory, data)
        if "warning" in result:
            print(f"memory-ls: {result['warning']}", file=stderr)
        if successors:
            print(f"memory-ls: {supersede_note(memory.qualified, successors)}", file=stderr)
    elif command == "save":
        result = store.save(
            args.name,
            _read_input(args.file, stdin),
            args.tags,
            args.scope,
            expected_version=args.expected_version,
            create_only=args.create_only,
        )
    elif command == "edit":
        result = _edit(args, store, stdin)
    elif command == "delete":
        result = store.delete(args.name, args.scope, expected_version=args.expected_version)
    elif command == "move":
        result = store.move(
            args.name, args.new_name, args.scope, expected_version=args.expected_version
        )
    elif command == "search":
        mode = "all_words" if args.all_words else "relevance"
        result = store.search(args.query, args.tags, args.scope, args.limit, mode=mode)
        if not args.tags and args.scope != "global":
            result.update(_agent_files(store, args.query, mode))
    elif command == "about":
        from memory_ls.core.operations.mentions import memories_about

        result = memories_about(store, args.target, args.limit)
    elif command == "history":
        result = {"name": args.name, "entries": [e.as_json() for e in store.history(args.name)]}
    elif command == "revert":
        result = store.revert(args.name, args.to)
    elif command == "route":
        result = store.route(args.name, args.scope)
    elif command == "tags":
        result = store.tags(args.scope)
    elif command == "import":
        result = _import(args, store, stdin, stderr)
    else:  # pragma: no cover - argparse only lets known commands through
        raise UsageError(f"unknown command {command}")
    findings = ""
    if command in ("save", "edit", "move"):
        from memory_ls.core.operations.report import (
            answer_with_findings,  # rapidfuzz, git: writes only
        )

        # The writer learns what `check` would say of the memory it touched.
        result, findings = answer_with_findings(store, result)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2), file=stdout)
    else:
        print(_human(command, result, store.config), file=stdout)
        if result.get("diagnostics"):
            print(findings, file=stdout)
    return EXIT_OK


def _graph_query(args: argparse.Namespace) -> Any:
    from memory_ls.core.operations.graph import DEFAULT_LIMIT, GraphQuery

    return GraphQuery(
        folder=args.folder,
        tag=args.tag,
        name=args.name,
        center=args.center,
        depth=args.depth,
        limit=args.limit if args.limit is not None else DEFAULT_LIMIT,
    )


def _edit(args: argparse.Namespace, store: Store, stdin: TextIO) -> dict[str, Any]:
    if args.needle is not None or args.replacement is not None:
        if args.needle is None or args.replacement is None:
            raise UsageError("--needle and --replacement go together")
        if args.file is not None:
            raise UsageError("give --needle/--replacement or --file, not both")
        return store.edit(
            args.name,
            args.scope,
            needle=args.needle,
            replacement=args.replacement,
            mode="regex" if args.regex else "literal",
            allow_multiple=args.allow_multiple,
            expected_version=args.expected_version,
        )
    if args.regex or args.allow_multiple:
        raise UsageError("--regex and --allow-multiple need --needle and --replacement")
    return store.edit(
        args.name,
        args.scope,
        content=_read_input(args.file, stdin),
        expected_version=args.expected_version,
    )


def _read_input(path: str | None, stdin: TextIO) -> str:
    """Content from a file, or standard input when it is not a terminal."""
    if path is not None:
        try:
            with open(path, encoding="utf-8") as handle:
                return handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read {path}: {exc}") from exc
    if stdin.isatty():
        raise UsageError("give the content with --file F or on standard input")
    return stdin.read()
