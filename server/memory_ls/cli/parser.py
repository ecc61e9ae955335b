"""The argument parser: `build_parser`, its option helpers and `layer_from_args`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from memory_ls import __version__
from memory_ls.cli.common import EXIT_USAGE
from memory_ls.config import Layer, cli_layer
from memory_ls.core.layouts import LAYOUTS
from memory_ls.core.services.formats import FORMATS

SCOPE_CHOICES = ("project", "global")
LIST_SCOPE_CHOICES = ("project", "global", "all")


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


def _positive_tokens(value: str) -> int:
    """A `--budget`: a positive whole number of tokens (argparse: exit status 2 otherwise)."""
    try:
        number = int(value.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of tokens: {value!r}") from None
    if number <= 0:
        raise argparse.ArgumentTypeError(f"the budget must be positive, not {number}")
    return number


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
    check.add_argument(
        "--staged",
        action="store_true",
        help="also check what the staged changes do (the pre-commit hook): the memories "
        "that link to a memory they delete or rename, and any change to a read-only memory "
        "(read-only-changed)",
    )
    _report_format(check)

    context = command(
        "context",
        "the files an agent loads working on FILE (none: a session at the root that has "
        "touched no file), in load order, with estimated tokens, cuts and the total "
        "against a budget; exit status 1 over the budget",
    )
    context.add_argument("file", nargs="?", metavar="FILE", help="a path in the repository")
    context.add_argument(
        "--agent",
        required=True,
        choices=("claude", "codex", "cursor", "copilot", "serena", "aicoder"),
    )
    context.add_argument(
        "--budget",
        type=_positive_tokens,
        default=20_000,
        metavar="TOKENS",
        help="the token budget the total is measured against (default 20,000: a tenth of "
        "a 200,000-token context window)",
    )

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
