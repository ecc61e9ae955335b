"""`python -m memory_ls.cli ARGS`: the command line, as `memory-ls ARGS`."""

from __future__ import annotations

from memory_ls.cli.dispatch import main

if __name__ == "__main__":
    main()
