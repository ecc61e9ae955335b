"""`python -m memory_ls [FLAGS]`: the language server over stdio (`memory-ls serve [FLAGS]`)."""

from __future__ import annotations

import sys

from memory_ls.cli import main

if __name__ == "__main__":
    main(["serve", *sys.argv[1:]])
