"""The rules of memories as functions of data: no disk, no process, no store.

What lives here: names and their checks (`names`), documents and frontmatter
(`document`), links (`references`), supersede relations (`supersede`), secrets
(`secrets`), near duplicates (`similarity`), stemming (`stemming`), titles (`titles`),
merge-conflict markers (`conflicts`), agents' context limits (`context_limits`), path
mentions (`stale_paths`), text replacement for edits (`replace`) and the errors every
layer raises (`errors`).

May import: the standard library, third-party parsers (YAML, frontmatter) and each
other; nothing else of memory-ls (an import-linter layers contract in pyproject.toml).
"""
