"""`near-duplicate` by meaning after an agent's write: the vectors of search by meaning
(core/services/meaning/) find a memory that says nearly the same in other words, which
the word-based rules (core/operations/duplicates.py) cannot. Off with search by meaning."""

from __future__ import annotations

import os
from collections.abc import Sequence

from memory_ls.core.rules.document import split_frontmatter
from memory_ls.core.rules.similarity import Memo, Verdict
from memory_ls.core.services.diagnostics import (
    Diagnostic,
    apply_severities,
    near_duplicate_diagnostic,
)
from memory_ls.core.store import Store

# Cosine similarity from which two memories are near-duplicates in meaning. With
# all-MiniLM-L6-v2, a note reworded sentence by sentence scores 0.9 and more; a question
# and the note that answers it 0.4 to 0.7, two notes on one topic 0.5 to 0.8.
NEAR_DUPLICATE_SIMILARITY = 0.9
# The nearest memories looked at.
NEIGHBOURS = 5


def meaning_duplicate_diagnostics(
    store: Store, path: str, name: str, text: str, found: Sequence[Diagnostic] = ()
) -> list[Diagnostic]:
    """`near-duplicate` for the memory `name` at `path` holding `text`, by meaning: none
    when search by meaning is off, cannot answer now, or `found` already names the others."""
    index = store.search_index
    if (
        store.config.meaning is None
        or index is None
        or store.config.severities.get("near-duplicate") == "off"
    ):
        return []
    # Only here, and only when configured: with it off, none of it is imported.
    try:
        from memory_ls.core.services.meaning.engine import meaning_for
        from memory_ls.core.services.meaning.vectors import embedded_text
    except ImportError:  # numpy missing: a search says so
        return []

    engine = meaning_for(store.config, index.database.path)
    if engine is None:
        return []
    body = split_frontmatter(text)[1]
    nearest = engine.nearest(embedded_text(name, body), NEIGHBOURS, floor=NEAR_DUPLICATE_SIMILARITY)
    named = {
        other
        for diagnostic in found
        if diagnostic.code == "near-duplicate"
        for other in diagnostic.data.get("others", ())
    }
    own = os.path.normpath(os.path.abspath(path))
    folders = store.config.folders
    pairs = []
    for ident, similarity in nearest or ():
        located = engine.located(ident)
        if located is None:
            continue
        folder = folders[located[0]]
        other_path = folder.file_for(located[1])
        qualified = folder.qualified(located[1])
        if os.path.normpath(other_path) == own or qualified == name or qualified in named:
            continue
        memo = Memo(other_path, qualified, folder.scope == "global", "")
        pairs.append((memo, Verdict("meaning", 100 * similarity)))
    if not pairs:
        return []
    return apply_severities([near_duplicate_diagnostic(path, pairs)], store.config.severities)
