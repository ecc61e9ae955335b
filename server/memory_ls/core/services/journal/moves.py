"""A move the editor says it made (a rename in the editor, the Explorer), journaled as one
`move` whichever came first: the editor's word or a watcher's sight of the two files."""

from __future__ import annotations

import os
import time

from memory_ls.core.services.journal.core import RELABEL_SECONDS, Journal
from memory_ls.core.services.journal.seen import SEEN_SOURCES, Seen
from memory_ls.core.storage.gate import version_of

_SOURCES = ",".join("?" * len(SEEN_SOURCES))


def observe_move(journal: Journal, old_path: str, new: Seen, source: str) -> int | None:
    """The file at `old_path` was moved to `new.path` by `source`: journal one `move`. A
    watcher that already journaled the pair as a deletion and a creation (within
    RELABEL_SECONDS) has its two entries made one move; a later sight of either path
    finds nothing new, and so does a second call. The move's id, or None when it is no
    move (the new file is not there, the old one still is, or the old file was never
    seen)."""
    if new.data is None or os.path.lexists(old_path):
        return None
    kept = journal._kept(new.data)
    version = version_of(new.data)
    since = time.time() - RELABEL_SECONDS
    with journal._transaction() as db:
        row = db.execute(
            "SELECT name, size, version, data FROM baseline WHERE path = ?", (old_path,)
        ).fetchone()
        deleted = None
        if row is None:
            deleted = db.execute(
                "SELECT id FROM entries WHERE path = ? AND action = 'delete'"
                f" AND source IN ({_SOURCES}) AND time >= ? ORDER BY id DESC LIMIT 1",
                (old_path, *SEEN_SOURCES, since),
            ).fetchone()
            if deleted is None:
                return None  # never seen, or journaled as moved already
        created = db.execute(
            "SELECT id FROM entries WHERE path = ? AND action = 'save'"
            f" AND version_before IS NULL AND source IN ({_SOURCES}) AND time >= ?"
            " ORDER BY id DESC LIMIT 1",
            (new.path, *SEEN_SOURCES, since),
        ).fetchone()
        if created is not None:
            db.execute("DELETE FROM entries WHERE id = ?", (created[0],))
        if deleted is not None:
            entry_id = int(deleted[0])
            db.execute(
                "UPDATE entries SET action = 'move', source = ?, new_path = ?,"
                " new_name = ?, version_after = ?, after_size = ? WHERE id = ?",
                (source, new.path, new.name, version, len(new.data), entry_id),
            )
        else:
            db.execute("DELETE FROM baseline WHERE path = ?", (old_path,))
            entry_id = journal._insert(
                db,
                action="move",
                name=str(row[0]),
                path=old_path,
                source=source,
                deflated=row[3],
                before_size=int(row[1]),
                withheld=row[3] is None,
                versions=(str(row[2]), version),
                after_size=len(new.data),
                new_path=new.path,
                new_name=new.name,
            )
        journal._set_baseline(db, new.path, new.name, new.mtime_ns, new.data, kept)
    return entry_id
