"""The `memory-ls` command-line tool (SPEC 4): a thin front end on the core store."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import Any, NoReturn, TextIO

from memory_ls import __version__
from memory_ls.config import (
    ConfigError,
    Layer,
    anchor_layer,
    cli_layer,
    explain_layers,
    merge_layers,
    plain_value,
)
from memory_ls.core.layouts import LAYOUTS
from memory_ls.core.rules.errors import InvalidArguments, MemoryStoreError
from memory_ls.core.services.formats import FORMATS, has_findings, render, summary_line
from memory_ls.core.services.related import supersede_note
from memory_ls.core.services.search import SearchIndex, start_file_helper
from memory_ls.core.storage.folders import StoreConfig, resolve_store_config
from memory_ls.core.store import Store
from memory_ls.project_file import ProjectFile, load_project, store_root

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_REFUSED = 3
SCOPE_CHOICES = ("project", "global")
LIST_SCOPE_CHOICES = ("project", "global", "all")


class UsageError(Exception):
    """A mistake in how the tool was called (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    """argparse with the tool's own usage-error exit status and message prefix."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"memory-ls: usage error: {message}\n")


def _store_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """Options accepted before or after the command (SPEC 4)."""
    # After the command the defaults must not override what was given before it.
    default: Any = argparse.SUPPRESS if suppress else None
    flag_default: Any = argparse.SUPPRESS if suppress else False
    group = parser.add_argument_group("store options")
    group.add_argument("--root", metavar="DIR", default=default, help="workspace root (default: .)")
    group.add_argument("--layout", choices=tuple(LAYOUTS), default=default)
    group.add_argument("--primary-folder", metavar="PATH", default=default)
    group.add_argument(
        "--additional-folders",
        metavar="A,B",
        default=default,
        help='comma-separated; an entry ending in ":ro" is read-only',
    )
    group.add_argument("--global-folder", metavar="PATH", default=default)
    group.add_argument(
        "--no-global", action="store_true", default=flag_default, help="disable the global scope"
    )
    group.add_argument("--max-memory-bytes", metavar="N", type=int, default=default)
    group.add_argument(
        "--secrets",
        choices=("refuse", "warn"),
        default=default,
        help="a write holding a possible secret: refused (default) or written with a warning",
    )
    group.add_argument(
        "--json", action="store_true", default=flag_default, help="print the result object as JSON"
    )


def _scope(parser: argparse.ArgumentParser, choices: Sequence[str] = SCOPE_CHOICES) -> None:
    parser.add_argument("--scope", choices=choices, default=None)


def _tags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tag", dest="tags", action="append", metavar="T", help="repeatable; all must match"
    )


def _report_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        dest="report_format",
        choices=FORMATS,
        default="text",
        help="text (default), github (workflow annotations), sarif (SARIF 2.1.0) or json",
    )


def _expected_version(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--expected-version",
        metavar="V",
        help="refuse (version-conflict) unless the memory is at this version (read --json)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the tool."""
    parser = _Parser(
        prog="memory-ls",
        description="Memories of AI coding agents: store, check and serve them by the same rules.",
    )
    parser.add_argument("--version", action="version", version=f"memory-ls {__version__}")
    _store_options(parser, suppress=False)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        _store_options(sub, suppress=True)
        return sub

    serve = command("serve", "start the language server (stdio unless --tcp)")
    serve.add_argument("--tcp", metavar="HOST:PORT", default=None)

    mcp = command("mcp", "start the Model Context Protocol server for agents (stdio)")
    mcp.add_argument(
        "--tool-prefix",
        metavar="P",
        default="",
        help="put P before every tool name (mls_write_memory), to run beside Serena's tools",
    )

    check = command("check", "report diagnostics for the store or the given Markdown files")
    check.add_argument("paths", nargs="*", metavar="PATH")
    check.add_argument(
        "--memories-only",
        action="store_true",
        help="of the PATHs, check only those in the store's folders (the pre-commit hook: "
        "pre-commit passes every changed Markdown file)",
    )
    _report_format(check)

    changes = command(
        "changes",
        "memories added, changed, renamed or deleted since a git revision (default: the "
        "merge base with the default branch), working tree included, with their "
        "diagnostics and a short word diff",
    )
    changes.add_argument(
        "rev", nargs="?", metavar="REV", help="a git revision (default: the merge base)"
    )
    _report_format(changes)

    listing = command("list", "list memories")
    _scope(listing, LIST_SCOPE_CHOICES)
    _tags(listing)
    listing.add_argument("--prefix", metavar="P")
    listing.add_argument("--topic", metavar="T", help="as Serena's list_memories(topic)")
    listing.add_argument("--limit", type=int, metavar="N", help="at most N memories (a page)")
    listing.add_argument(
        "--cursor", metavar="C", help="the page after the one whose nextCursor this is"
    )

    read = command("read", "print a memory")
    read.add_argument("name", metavar="NAME")
    _scope(read)

    save = command("save", "create or overwrite a memory (content from --file or stdin)")
    save.add_argument("name", metavar="NAME")
    save.add_argument("--file", metavar="F")
    _tags(save)
    _scope(save)
    _expected_version(save)
    save.add_argument(
        "--create-only", action="store_true", help="refuse to replace an existing memory"
    )

    edit = command("edit", "change a memory in place")
    edit.add_argument("name", metavar="NAME")
    _scope(edit)
    edit.add_argument("--needle", metavar="N")
    edit.add_argument("--replacement", metavar="R")
    edit.add_argument("--regex", action="store_true")
    edit.add_argument("--allow-multiple", action="store_true")
    edit.add_argument("--file", metavar="F", help="new body (else stdin, when no --needle)")
    _expected_version(edit)

    delete = command("delete", "delete a memory")
    delete.add_argument("name", metavar="NAME")
    _scope(delete)
    _expected_version(delete)

    move = command("move", "rename a memory (re-routed) and rewrite references to it")
    move.add_argument("name", metavar="NAME")
    move.add_argument("new_name", metavar="NEW_NAME")
    _scope(move)
    _expected_version(move)

    search = command("search", "full-text search over names and bodies")
    search.add_argument("query", metavar="QUERY")
    _tags(search)
    _scope(search, LIST_SCOPE_CHOICES)
    search.add_argument("--limit", type=int, metavar="N")
    search.add_argument(
        "--all-words",
        action="store_true",
        help="only memories holding every word as written (default: ranked by relevance)",
    )

    about = command("about", "the memories that mention a path or symbol, best first")
    about.add_argument(
        "target",
        metavar="TARGET",
        help="a path (src/shop/cart.py), file name or symbol (Cart.total)",
    )
    about.add_argument("--limit", type=int, metavar="N", help="at most N memories (default 10)")

    history = command(
        "history", "the changes made to a memory through memory-ls, newest first (the journal)"
    )
    history.add_argument("name", metavar="NAME")

    revert = command(
        "revert",
        "give a memory back its content before a change (default: the latest); the revert "
        "is itself a change, so it can be reverted",
    )
    revert.add_argument("name", metavar="NAME")
    revert.add_argument("--to", type=int, metavar="ID", help="the change to undo (see history)")

    config = command(
        "config",
        "print the resolved configuration (project file, editor-independent) and where each "
        "value came from: the project file, a flag or the default",
    )
    config.add_argument(
        "--all", dest="show_all", action="store_true", help="every diagnostic code's severity too"
    )

    init = command(
        "init",
        "set the repository up: the project file (from the store options given), git's merge "
        "driver, and the MCP server for Claude Code, VS Code and Cursor; run again, it "
        "changes nothing",
    )
    init.add_argument("--no-git", action="store_true", help="leave git alone (no git-setup)")
    init.add_argument("--no-mcp", action="store_true", help="register no MCP server for the agents")

    route = command("route", "show where a save of NAME would go (dry run)")
    route.add_argument("name", metavar="NAME")
    _scope(route)

    tags = command("tags", "tags in use, with counts")
    _scope(tags, LIST_SCOPE_CHOICES)

    export = command("export", "write every memory as records")
    _scope(export, LIST_SCOPE_CHOICES)
    export.add_argument("--format", choices=("json", "jsonl"), default="json")
    export.add_argument("--output", metavar="F")

    imp = command("import", "save records from an export or an AI Coder store (routed like save)")
    imp.add_argument(
        "file",
        metavar="FILE",
        help="records: a JSON array or JSON Lines file (- for stdin); aicoder-db: "
        "AI Coder's memory.db; aicoder-json: a folder of AI Coder's JSON records",
    )
    imp.add_argument("--overwrite", action="store_true")
    imp.add_argument(
        "--from",
        dest="source",
        choices=("records", "aicoder-db", "aicoder-json"),
        default="records",
        help="what FILE is (default: records)",
    )
    graph = command(
        "graph",
        "the memory graph as the editor's Show Graph gets it: memories, links, broken links "
        "(a summary; --json for the payload of the language server's memory.graph)",
    )
    graph.add_argument("--folder", metavar="F", help="only this folder (its path or name)")
    graph.add_argument("--tag", metavar="T", help="only memories with this tag")
    graph.add_argument("--name", metavar="TEXT", help="only names that contain TEXT (any case)")
    graph.add_argument("--center", metavar="NAME", help="only memories near NAME")
    graph.add_argument("--depth", type=int, default=1, help="links from --center (default 1)")
    graph.add_argument("--limit", type=int, default=None, help="at most this many nodes")

    driver = command(
        "merge-driver",
        "git's merge driver for memories: frontmatter key by key, the body as text "
        "(set up by git-setup)",
    )
    driver.add_argument("base", metavar="BASE", help="%%O: the common ancestor's version")
    driver.add_argument("ours", metavar="OURS", help="%%A: our version; the result is written here")
    driver.add_argument("theirs", metavar="THEIRS", help="%%B: their version")
    driver.add_argument("pathname", metavar="PATH", nargs="?", help="%%P: the file's path")
    driver.add_argument(
        "--conflict-style",
        choices=("merge", "diff3", "zdiff3"),
        default=None,
        help="how conflicts are marked (default: git's merge.conflictStyle, else merge)",
    )

    setup = command(
        "git-setup",
        "have git merge the repository's memories with merge-driver "
        "(.gitattributes and the repository's git config)",
    )
    setup.add_argument("--uninstall", action="store_true", help="remove what git-setup writes")
    setup.add_argument(
        "--command",
        dest="driver_command",
        metavar="CMD",
        help="the program git runs as the driver (default: this memory-ls by its absolute path)",
    )
    return parser


def layer_from_args(args: argparse.Namespace) -> Layer:
    """The settings layer given by the store options."""
    return cli_layer(
        layout=args.layout,
        primary_folder=args.primary_folder,
        additional_folders=args.additional_folders,
        global_folder=args.global_folder,
        no_global=bool(args.no_global),
        max_memory_bytes=args.max_memory_bytes,
        secrets=args.secrets,
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


def _relative(path: str, root: str) -> str:
    """A path relative to the root where it is inside it, else absolute."""
    relative = os.path.relpath(path, root)
    return path if relative.startswith("..") else relative


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
        # A search, a move (to find the referrers), a read (who supersedes it) and `about`
        # (to find the mentions) open the full-text index (kept in the user's cache directory).
        search_index = (
            SearchIndex(config, live=False)
            if args.command in ("search", "move", "read", "about", "revert")
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


def _config(
    args: argparse.Namespace,
    project: ProjectFile | None,
    layers: Sequence[Layer],
    start: str,
    stdout: TextIO,
) -> int:
    """Print the resolved configuration and where each value came from."""
    root = store_root(start, project)
    settings = merge_layers(*layers)
    config = resolve_store_config(
        settings, root, project_file=project.path if project is not None else None
    )
    rows = explain_layers(*layers)
    if not args.show_all:
        # Diagnostics at their defaults are many and say nothing: shown with --all.
        rows = [r for r in rows if not r.key.startswith("diagnostics.") or r.source != "default"]
    if args.json:
        result = {
            "projectFile": project.path if project is not None else None,
            "root": root,
            "layout": config.layout,
            "folders": [
                {"kind": f.kind, "path": f.path, "readOnly": f.read_only} for f in config.folders
            ],
            "missingFolders": list(config.missing_additional),
            "settings": {
                row.key: {"value": plain_value(row.value), "source": row.source} for row in rows
            },
        }
        print(json.dumps(result, ensure_ascii=False, indent=2), file=stdout)
        return EXIT_OK
    where = project.path if project is not None else "none (defaults and flags only)"
    lines = [f"project file: {where}", f"root: {root}", ""]
    width = max(len(row.key) for row in rows)
    for row in rows:
        value = _shown_setting(row.key, row.value, config)
        lines.append(f"{row.key:<{width}}  {value}  ({row.source})")
    lines.append("")
    lines.append("folders:")
    for folder in config.folders:
        flags = " (read-only)" if folder.read_only else ""
        lines.append(f"  {folder.kind:<10} {_relative(folder.path, root)}{flags}")
    lines += [f"  missing    {_relative(m, root)} (skipped)" for m in config.missing_additional]
    print("\n".join(lines), file=stdout)
    return EXIT_OK


def _shown_setting(key: str, value: object, config: StoreConfig) -> str:
    """A setting's value as `memory-ls config` prints it."""
    if key == "layout" and value is None:
        return f"{config.layout} (detected)"
    if key == "primary-folder" and value is None:
        return _relative(config.primary.path, config.root)
    if key == "global-folder" and value is None:
        folder = config.global_folder
        return _relative(folder.path, config.root) if folder is not None else "(disabled)"
    if key == "additional-folders":
        folders = [
            _relative(f.path, config.root) + (":ro" if f.read_only else "")
            for f in value  # type: ignore[attr-defined]
        ]
        return ", ".join(folders) if folders else "(none)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


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
        result = store.search(
            args.query,
            args.tags,
            args.scope,
            args.limit,
            mode="all_words" if args.all_words else "relevance",
        )
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


def _check(args: argparse.Namespace, store: Store, stdout: TextIO, stderr: TextIO) -> int:
    from memory_ls.core.operations.check import check_store

    for path in args.paths:
        if not os.path.exists(path):
            raise UsageError(f"no such file or folder: {path}")
    if args.json and args.report_format != "text":
        raise UsageError("give --json or --format, not both")
    paths = args.paths
    if args.memories_only and paths:
        paths = [p for p in paths if store.config.owner_of(os.path.abspath(p)) is not None]
        if not paths:
            # No memory among them; an empty list would check the whole store instead.
            print("memory-ls: no memory among the files given; nothing to check", file=stderr)
            return EXIT_OK
    store.clean_leftovers()
    diagnostics = check_store(store, paths)
    if args.json:
        # The shape `check --json` always printed (absolute paths); --format json is richer.
        rows = [
            {
                "path": d.path,
                "line": d.line + 1,
                "column": d.col + 1,
                "endLine": d.end_line + 1,
                "endColumn": d.end_col + 1,
                "severity": d.severity,
                "code": d.code,
                "message": d.message,
            }
            for d in diagnostics
        ]
        print(json.dumps({"diagnostics": rows}, ensure_ascii=False, indent=2), file=stdout)
    else:
        stdout.write(
            render(
                diagnostics,
                args.report_format,
                root=store.config.root,
                name_of=store.config.qualified_name_of,
            )
        )
    print(summary_line(diagnostics), file=stderr)
    return EXIT_FINDINGS if has_findings(diagnostics) else EXIT_OK


def _changes(args: argparse.Namespace, store: Store, stdout: TextIO, stderr: TextIO) -> int:
    from memory_ls.core.operations.changes import changes_json, changes_text, memory_changes

    fmt = "json" if args.json else args.report_format
    if args.json and args.report_format not in ("text", "json"):
        raise UsageError("give --json or --format, not both")
    report = memory_changes(store, args.rev)
    if fmt == "json":
        print(json.dumps(changes_json(report), ensure_ascii=False, indent=2), file=stdout)
    elif fmt == "text":
        stdout.write(changes_text(report))
    else:
        stdout.write(
            render(
                report.diagnostics,
                fmt,
                root=store.config.root,
                name_of=store.config.qualified_name_of,
            )
        )
        counts = ", ".join(
            f"{sum(1 for c in report.changes if c.status == s)} {s}"
            for s in ("added", "changed", "renamed", "deleted")
        )
        print(
            f"memory-ls: since {report.base.rev} ({report.base.how}): {counts}",
            file=stderr,
        )
    print(summary_line(report.diagnostics), file=stderr)
    return EXIT_FINDINGS if has_findings(report.diagnostics) else EXIT_OK


def _merge_driver(args: argparse.Namespace, stderr: TextIO) -> int:
    """Merge one memory for git: the result in OURS; 0 when clean, 1 with conflicts marked."""
    from memory_ls.core.services.merge import MergeFailed, conflict_style_of_repository, merge_files

    style = args.conflict_style or conflict_style_of_repository(os.getcwd())
    try:
        result = merge_files(args.base, args.ours, args.theirs, style=style)
    except Exception as exc:  # any failure: OURS untouched, exit 2
        # OURS is as it was (merge_files replaces it whole or not at all); the command
        # git-setup registers then merges it as text, a bare driver leaves it conflicted.
        reason = exc if isinstance(exc, (OSError, MergeFailed)) else repr(exc)
        print(f"memory-ls: merge-driver: {args.pathname or args.ours}: {reason}", file=stderr)
        return EXIT_USAGE
    if result.conflicts:
        keys = (
            f" (frontmatter: {', '.join(result.conflicted_keys)})" if result.conflicted_keys else ""
        )
        print(
            f"memory-ls: merge-driver: {args.pathname or args.ours}: "
            f"{result.conflicts} conflict(s){keys}",
            file=stderr,
        )
        return EXIT_FINDINGS
    return EXIT_OK


def _git_setup(
    args: argparse.Namespace, config: StoreConfig, stdout: TextIO, stderr: TextIO
) -> int:
    from memory_ls.core.services.git_setup import GitSetupError, driver_command, install, uninstall

    try:
        if args.uninstall:
            report = uninstall(config)
        else:
            report = install(config, args.driver_command or driver_command())
    except GitSetupError as exc:
        print(f"memory-ls: git-setup: {exc}", file=stderr)
        return EXIT_REFUSED
    if args.json:
        result = {
            "repository": report.repository,
            "attributesFile": report.attributes_file,
            "addedLines": report.added_lines,
            "removedLines": report.removed_lines,
            "configSet": report.config_set,
            "configRemoved": report.config_removed,
            "skippedFolders": report.skipped_folders,
            "changed": report.changed,
        }
        print(json.dumps(result, ensure_ascii=False, indent=2), file=stdout)
        return EXIT_OK
    attributes = _relative(report.attributes_file, os.getcwd())
    for folder in report.skipped_folders:
        print(f"memory-ls: git-setup: {folder} is outside the repository; skipped", file=stderr)
    for line in report.added_lines:
        print(f"{attributes}: added  {line}", file=stdout)
    for line in report.removed_lines:
        print(f"{attributes}: removed  {line}", file=stdout)
    for key, value in report.config_set.items():
        print(f"git config: set {key} = {value}", file=stdout)
    for key in report.config_removed:
        print(f"git config: removed {key}", file=stdout)
    if not report.changed:
        state = "not set up" if args.uninstall else "already set up"
        print(
            f"memory-ls: git-setup: nothing to change ({state} in {report.repository})", file=stdout
        )
    return EXIT_OK


def _export(args: argparse.Namespace, store: Store, stdout: TextIO) -> int:
    records = store.export(args.scope)
    if args.format == "jsonl":
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    else:
        text = json.dumps(records, ensure_ascii=False, indent=2) + "\n"
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            raise UsageError(f"cannot write {args.output}: {exc}") from exc
    else:
        stdout.write(text)
    return EXIT_OK


def _import(
    args: argparse.Namespace, store: Store, stdin: TextIO, stderr: TextIO
) -> dict[str, Any]:
    if args.source == "records":
        return store.import_records(_load_records(args.file, stdin), overwrite=args.overwrite)
    from memory_ls.core.operations.aicoder_import import import_aicoder

    if not os.path.exists(args.file):
        raise UsageError(f"no such file or folder: {args.file}")
    result = import_aicoder(store, args.source, args.file, overwrite=args.overwrite)
    if result["rejected"]:
        print(
            f"memory-ls: warning: {len(result['rejected'])} note(s) not imported "
            "(listed as rejected, with the reason)",
            file=stderr,
        )
    return result


def _load_records(path: str, stdin: TextIO) -> list[Any]:
    """Records from a JSON array or JSON Lines."""
    if path == "-":
        text = stdin.read()
    else:
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read {path}: {exc}") from exc
    stripped = text.strip()
    try:
        if stripped.startswith("["):
            records = json.loads(stripped)
        else:
            records = [json.loads(line) for line in stripped.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise InvalidArguments(f"{path} is not a JSON array or JSON Lines: {exc}") from exc
    if not isinstance(records, list):
        raise InvalidArguments(f"{path} does not hold a list of records")
    return records


def _human(command: str, result: dict[str, Any], config: StoreConfig) -> str:
    """The short human-readable form of a result."""
    root = config.root

    def rel(path: str) -> str:
        return _relative(path, root)

    if command == "save":
        state = "created" if result["created"] else "updated"
        return (
            f"{result['name']} -> {rel(result['path'])} ({state}; routed by {result['routedBy']})"
        )
    if command == "read":
        return str(result["content"]).rstrip("\n")
    if command == "edit":
        return f"{result['name']}: {result['replacements']} replacement(s) in {rel(result['path'])}"
    if command == "delete":
        return f"deleted {result['name']} ({rel(result['path'])})"
    if command == "move":
        return (
            f"{result['name']} -> {result['newName']} ({rel(result['path'])}); "
            f"{result['updatedReferences']} reference(s) updated"
        )
    if command == "history":
        return _history_text(result, rel)
    if command == "revert":
        if "newName" in result:
            undid = result["revertedTo"]
            return f"{result['name']} moved back to {result['newName']} (undid {undid})"
        if "deleted" in result:
            state = "deleted" if result["deleted"] else "already absent"
            return f"{result['name']}: {state} (undid {result['revertedTo']})"
        return (
            f"{result['name']} -> {rel(result['path'])} restored to version {result['version']} "
            f"(undid {result['revertedTo']})"
        )
    if command == "route":
        state = "exists" if result["exists"] else "new"
        return (
            f"{result['name']} -> {rel(result['path'])} ({state}; routed by {result['routedBy']})"
        )
    if command == "list":
        lines = []
        for memory in result["memories"]:
            tags = f"  [{', '.join(memory['tags'])}]" if memory["tags"] else ""
            flags = " (read-only)" if memory["readOnly"] else ""
            shadow = f" (shadows {len(memory['shadows'])})" if memory["shadows"] else ""
            folder = rel(memory["folder"])
            lines.append(f"{memory['name']}  {memory['scope']}:{folder}{tags}{flags}{shadow}")
        if "nextCursor" in result:
            more = f"{result['remaining']:,} more" if "remaining" in result else "more"
            lines.append(f"({more}: --cursor {result['nextCursor']})")
        return "\n".join(lines) if lines else "(no memories)"
    if command == "search":
        rows = [f"{r['name']}:{r['line']}: {r['text']}" for r in result["results"]]
        return "\n".join(rows) if rows else "(no matches)"
    if command == "about":
        return _about_text(result, rel)
    if command == "tags":
        rows = [f"{t['count']:>5}  {t['tag']}" for t in result["tags"]]
        return "\n".join(rows) if rows else "(no tags)"
    if command == "import":
        lines = [f"imported {r['name']} -> {rel(r['path'])}" for r in result["imported"]]
        lines += [f"skipped {name} (exists; use --overwrite)" for name in result["skipped"]]
        lines += [
            f"rejected {r['source']} {r['name']!r}: {r['reason']}"
            for r in result.get("rejected", ())
        ]
        return "\n".join(lines) if lines else "(nothing to import)"
    return json.dumps(result, ensure_ascii=False, indent=2)


def _history_text(result: dict[str, Any], rel: Any) -> str:
    """One line per change: id, local time, action, who, versions, size before."""
    lines = []
    for entry in result["entries"]:
        when = datetime.fromtimestamp(entry["time"]).astimezone().isoformat(timespec="seconds")
        versions = f"{entry['versionBefore'] or '(none)'} -> {entry['versionAfter'] or '(none)'}"
        size = "new" if entry["sizeBefore"] is None else f"{entry['sizeBefore']} bytes before"
        if entry["withheld"]:
            size += ", withheld (possible secret)"
        if entry.get("reviewed"):
            size += ", reviewed"
        moved = f" to {rel(entry['newPath'])}" if "newPath" in entry else ""
        lines.append(
            f"{entry['id']:>6}  {when}  {entry['action']}{moved}  {entry['source']}  "
            f"{versions}  ({size})"
        )
    return "\n".join(lines) if lines else f"(no recorded change of {result['name']})"


def _about_text(result: dict[str, Any], rel: Any) -> str:
    """Each memory (name, title, file), then its mentioning lines; then how many more."""
    lines = []
    for memory in result["memories"]:
        title = f" ({memory['title']})" if memory["title"] else ""
        lines.append(f"{memory['name']}{title}  {rel(memory['path'])}")
        lines += [f"  {m['line']}: {m['text']}" for m in memory["lines"]]
        if memory["moreLines"]:
            lines.append(f"  ... {memory['moreLines']} more line(s)")
    if result["more"]:
        lines.append(f"... {result['more']} more memories (--limit)")
    return "\n".join(lines) if lines else f"(no memory mentions {result['target']})"


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Entry point of the `memory-ls` command."""
    sys.exit(run(sys.argv[1:] if argv is None else argv, sys.stdin, sys.stdout, sys.stderr))


if __name__ == "__main__":
    main()
