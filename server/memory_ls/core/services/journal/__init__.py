"""The journal of changes to the memories, for history and undo (one SQLite file per store).

What lives here: `core`, the `Journal` (recording a change, observing one made on disk,
the bounds); `reading`, its connection and queries (`JournalReader`); `schema`, where the
file lives, its tables and migrations, and the adoption of a legacy journal; `entries`,
one entry (`Entry`) and its row; `seen`, a file as seen on disk and who changed it;
`catchup`, journaling the paths a watch reports and the catch-up with the disk in a
process of its own; `moves`, a move the editor says it made, journaled as one move.

May import: the storage and the rules; inside, each module only those listed after it in
the import-linter contract (catchup | moves, core, reading, schema | seen | entries).
"""

from memory_ls.core.services.journal.catchup import (
    BASELINE_CODE,
    baseline_main,
    observe_paths,
    sync_baseline_elsewhere,
)
from memory_ls.core.services.journal.core import (
    MAX_ENTRIES,
    MAX_ENTRIES_PER_MEMORY,
    MAX_KEPT_FILE_BYTES,
    MAX_TOTAL_BYTES,
    Journal,
)
from memory_ls.core.services.journal.entries import Entry
from memory_ls.core.services.journal.moves import observe_move
from memory_ls.core.services.journal.schema import (
    SCHEMA_VERSION,
    adopt_legacy_journal,
    journal_path,
    journal_root,
    legacy_journal_path,
)
from memory_ls.core.services.journal.seen import (
    EDITOR_SAVE_SOURCE,
    EXTERNAL_SOURCE,
    GIT_SOURCE,
    Seen,
    seen_file,
    seen_source,
)

__all__ = [
    "BASELINE_CODE",
    "EDITOR_SAVE_SOURCE",
    "EXTERNAL_SOURCE",
    "GIT_SOURCE",
    "MAX_ENTRIES",
    "MAX_ENTRIES_PER_MEMORY",
    "MAX_KEPT_FILE_BYTES",
    "MAX_TOTAL_BYTES",
    "SCHEMA_VERSION",
    "Entry",
    "Journal",
    "Seen",
    "adopt_legacy_journal",
    "baseline_main",
    "journal_path",
    "journal_root",
    "legacy_journal_path",
    "observe_move",
    "observe_paths",
    "seen_file",
    "seen_source",
    "sync_baseline_elsewhere",
]
