"""The store on disk: folders and their configuration, files, scans and listings, locks,
atomic writes and watching.

What lives here: the configured folders, resolved from the agents' layouts (`folders`),
where a new memory goes (`routing`), the memory value types and the folder scan
(`memory`), listing cursors and the scan cache (`listing`), atomic writes, locks and the
user's cache (`fsio`), the write gate (`gate`: versions, content checks), git queries
(`git`) and file watching (`watching`, `inotify`).

May import: `memory_ls.core.layouts`, `memory_ls.core.rules`, `memory_ls.config` (the
settings) and each other; never the services, the `Store` or the operations above
(import-linter's layers contract).
"""
