"""The `memory-ls` command-line tool (SPEC 4): a thin front end on the core store.

What lives here, top to bottom (each module imports only those below it, as the
import-linter contract on `memory_ls.cli` in pyproject.toml checks):

- `__main__`: `python -m memory_ls.cli ARGS`, the same as `memory-ls ARGS`.
- `dispatch`: `main` (the `memory-ls` entry point), `run` (parse, resolve the settings,
  open the Store, map errors to exit statuses; `serve`, `mcp`, `merge-driver`, `config`
  and `init` before any Store), `_dispatch` (one store command: call it, print its result),
  and the small commands that only call the Store (`list`, `read`, `save`, `edit`, ...).
- one module per command family: `checks` (`check`, `changes`), `config_cmd` (`config`),
  `git` (`merge-driver`, `git-setup`), `transfer` (`export`, `import`), `text` (the
  human-readable form of a result, printed without --json), and `parser` (`build_parser`,
  its option helpers, `layer_from_args`).
- `common`: the exit statuses, `UsageError` and `_relative`, shared by all of them.

Adding a command: declare it in `parser.build_parser` with `command(name, help)` (its
help is the reference page docs/hooks/reference.py generates); write it as
`_name(args, store, stdout, stderr) -> int` in the module of its family, or in a new
module importing only `common` (then add that module to the contract's middle layer in
pyproject.toml); call it from `dispatch._dispatch` (or from `run` when it needs no
Store). A command that returns a result dict instead gets its --json output for free
and its human-readable form in `text._human`.

May import: `memory_ls.lsp`, `memory_ls.mcp` and `memory_ls.init` (to start them, lazily),
the core and the settings.
"""

from memory_ls.cli.common import EXIT_FINDINGS, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, UsageError
from memory_ls.cli.dispatch import main, run
from memory_ls.cli.parser import build_parser, layer_from_args

__all__ = [
    "EXIT_FINDINGS",
    "EXIT_OK",
    "EXIT_REFUSED",
    "EXIT_USAGE",
    "UsageError",
    "build_parser",
    "layer_from_args",
    "main",
    "run",
]
