"""What the store is indexed, checked and remembered by: services that take memories and
configurations (never the `Store`, which composes them).

What lives here: the full-text search index (`search`, a package) and its ranking
(`relevance`; `rough_ranking` for the files a search reads before the index has them),
the name and link index (`index`, `backlinks`), diagnostics as data (`diagnostics`; other
agents' files in `agent_checks` and `agent_facts`), the
journal of changes and their history (`journal`), what supersedes a memory and its
neighbours (`related`), the report formats (`formats`), git's merge driver (`merge`,
`git_setup`, `merge_driver_check`).

May import: `memory_ls.core.storage`, `memory_ls.core.rules`, `memory_ls.config` and each
other; never `memory_ls.core.store`, its parts (`memory_ls.core.store_parts`) nor the
operations (import-linter's layers contract).
"""
