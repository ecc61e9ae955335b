"""One entry of the journal: a change and the content before it, and the row it is read from."""

from __future__ import annotations

import zlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    """One change: the memory's content before it (None: the file did not exist)."""

    id: int
    time: float
    name: str  # qualified name of the memory before the change
    path: str  # where the file was before the change
    action: str  # save, edit, delete, move, revert
    source: str  # who made it: cli, mcp:<client>, editor, core, external, git
    before_size: int | None  # bytes before; None when there was no file
    withheld: bool  # the before-content was not kept (a possible secret, or too large)
    version_before: str | None
    version_after: str | None
    new_path: str | None = None  # a move: where the file went
    new_name: str | None = None  # a move: the memory's new qualified name
    deflated: bytes | None = None
    reviewed: bool = False
    after_size: int | None = None  # bytes after; None when there is no file after

    @property
    def before(self) -> bytes | None:
        """The content before the change (None: no file, or withheld)."""
        return None if self.deflated is None else zlib.decompress(self.deflated)

    def as_json(self) -> dict[str, object]:
        """The entry as `history --json` shows it."""
        shown: dict[str, object] = {
            "id": self.id,
            "time": self.time,
            "name": self.name,
            "path": self.path,
            "action": self.action,
            "source": self.source,
            "versionBefore": self.version_before,
            "versionAfter": self.version_after,
            "sizeBefore": self.before_size,
            "withheld": self.withheld,
            "sizeAfter": self.after_size,
            "reviewed": self.reviewed,
        }
        if self.new_path is not None:
            shown["newPath"] = self.new_path
            shown["newName"] = self.new_name
        return shown


COLUMNS = (
    "id, time, name, path, action, source, before_size, withheld, version_before,"
    " version_after, new_path, new_name, before, reviewed, after_size"
)


def entry_of(row: tuple[object, ...]) -> Entry:
    (entry_id, at, name, path, action, source, size, withheld, v_before, v_after) = row[:10]
    new_path, new_name, deflated, reviewed, after_size = row[10:]
    return Entry(
        id=int(str(entry_id)),
        time=float(str(at)),
        name=str(name),
        path=str(path),
        action=str(action),
        source=str(source),
        before_size=None if size is None else int(str(size)),
        withheld=bool(withheld),
        version_before=None if v_before is None else str(v_before),
        version_after=None if v_after is None else str(v_after),
        new_path=None if new_path is None else str(new_path),
        new_name=None if new_name is None else str(new_name),
        deflated=deflated if isinstance(deflated, bytes) else None,
        reviewed=bool(reviewed),
        after_size=None if after_size is None else int(str(after_size)),
    )
