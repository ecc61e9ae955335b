"""The parts of the `Store`: finding, reading, listing, searching, writing, moving, history.

Each module holds one concern of the store as one class, and each class builds on the one
before it, so that a part calls what lies below it and never what lies above:

- `arguments`: the checks of the arguments the front ends pass (scopes, strings, tags);
- `base`: `StoreBase`, the store's state (configuration, indexes, journal, changes) and
  what every part needs: finding a memory by name, access and pattern checks, the write
  target, the size check, the journal, the folder scans and loading a document;
- `listing`: `Listing`, the listings, groups and tags;
- `reading`: `Reading`, reading a memory and its answer (with its related memories);
- `searching`: `Searching`, the search (the full-text index, or a scan while it is built);
- `writing`: `Writing`, routing, saving, editing and deleting;
- `moving`: `Moving`, moving a memory and rewriting the references to it;
- `history`: `History`, a memory's history and reverting a change;
- `transfer`: `Transfer`, exporting and importing records (through `save`, so the write
  path's checks are the same).

`memory_ls.core.store.Store` is the facade: it is `Transfer` with `fork`, and its public
methods keep their names whichever part holds them.

May import: the services, the storage and the rules (`memory_ls.core.services`,
`memory_ls.core.storage`, `memory_ls.core.rules`), and earlier parts of this package;
never `memory_ls.core.store` nor the operations (import-linter's layers contracts in
pyproject.toml, one for the core, one for the order of the parts).
"""
