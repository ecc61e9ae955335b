"""Whole-store operations over the `Store` facade, for the front ends.

What lives here: the store-wide check (`check`), changes between git revisions
(`changes`), the `check` report (`report`), the link graph (`graph`), mentions of a path
or symbol (`mentions`), navigation and renames (`navigation`, `link_view`), the language
server's live view of the store (`live`), near duplicates (`duplicates`), the AI Coder
import (`aicoder_import`), the disk check of a whole repository (`disk_check`) and what
each agent loads working on a file (`context`).

May import: `memory_ls.core.store` (the facade) and every layer below it; never a front
end (cli, lsp, mcp) nor an editor protocol (import-linter's contracts).
"""
