"""AI Coder's layout: `.aicoder/memory`, its global folder, `autoload.md`'s limit, its stores.

AI Coder keeps one Markdown file per memory in `.aicoder/memory/` and a personal folder
in `~/.config/aicoder/memory`; it loads `autoload.md` into every prompt and cuts it past
2,048 bytes (`AICODER_MEMORY_AUTOLOAD_LIMIT`).

Its older stores are read here as import records (SPEC 4): the memory tool kept its notes
in SQLite (`.aicoder/memory.db`, table `notes`, tags comma-separated, timestamps
`2025-10-08 03:07:11` in UTC); its memory plan keeps one JSON record per note
(`.aicoder/memory/NAME.json`, plus an `index.json`). Both are read without ever being
changed, turned into memory-ls's import records, and every note that cannot be imported
is kept back with its reason; `Store.import_records` then checks the rest again and
writes them all or nothing.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from memory_ls.core.layouts.base import Layout
from memory_ls.core.rules.context_limits import ContextLimit
from memory_ls.core.rules.document import iso
from memory_ls.core.rules.errors import InvalidArguments, InvalidName
from memory_ls.core.rules.names import parse_name

SOURCES = ("aicoder-db", "aicoder-json")
NOTES_TABLE = "notes"
REQUIRED_COLUMNS = ("name", "content")
OPTIONAL_COLUMNS = ("tags", "created_at", "updated_at")
JSON_INDEX = "index.json"
SQLITE_HEADER = b"SQLite format 3\x00"
# Byte 18 of an SQLite header is 2 for a database in WAL mode.
WAL_MODE_OFFSET = 18


@dataclass(frozen=True)
class SourceNote:
    """One note as the source holds it, before any check."""

    origin: str  # where it is in the source, for people: "row 3", "notes.json"
    name: object
    content: object
    tags: object = None
    created_at: object = None
    updated_at: object = None
    scope: object = None
    problem: str | None = None  # why it cannot be read at all


@dataclass(frozen=True)
class Rejected:
    """A note that is not imported, and why."""

    origin: str
    name: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        """The JSON form of the report."""
        return {"source": self.origin, "name": self.name, "reason": self.reason}


@dataclass
class Prepared:
    """Records ready for `Store.import_records`, and the notes kept back."""

    records: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)


# ----- reading the sources (the only file I/O here) ---------------------------------


def read_aicoder_db(path: str) -> list[SourceNote]:
    """Every row of AI Coder's `notes` table, read without changing the database."""
    try:
        with contextlib.closing(_open_read_only(path)) as connection:
            return _read_notes(path, connection)
    except sqlite3.DatabaseError as exc:
        raise InvalidArguments(
            f"{path} is damaged or not an SQLite database ({exc}); nothing was imported. "
            "Restore it from a backup, or recover it with `sqlite3 memory.db .recover`."
        ) from exc


def _read_notes(path: str, connection: sqlite3.Connection) -> list[SourceNote]:
    # Bytes, decoded per row: one note that is not UTF-8 must not stop the others.
    connection.text_factory = bytes
    columns = {row[1].decode() for row in connection.execute("PRAGMA table_info(notes)")}
    if not columns:
        raise InvalidArguments(
            f"{path} has no table {NOTES_TABLE!r}: it is not AI Coder's memory database; "
            "nothing was imported."
        )
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise InvalidArguments(
            f"{path}: table {NOTES_TABLE!r} has no column {', '.join(missing)}; "
            "nothing was imported."
        )
    # A damaged file can answer the first pages and fail on later ones: check it whole.
    verdict = [row[0] for row in connection.execute("PRAGMA quick_check")]
    if verdict != [b"ok"]:
        shown = "; ".join(v.decode("utf-8", "replace") for v in verdict[:3])
        raise sqlite3.DatabaseError(shown)
    wanted = [*REQUIRED_COLUMNS, *(c for c in OPTIONAL_COLUMNS if c in columns)]
    query = f"SELECT {', '.join(wanted)} FROM {NOTES_TABLE} ORDER BY rowid"
    notes = []
    for number, row in enumerate(connection.execute(query), start=1):
        values = dict(zip(wanted, row, strict=True))
        notes.append(_note_from_row(f"row {number}", values))
    return notes


def _open_read_only(path: str) -> sqlite3.Connection:
    """A read-only connection that leaves the database and its folder exactly as they were."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(100)
    except OSError as exc:
        raise InvalidArguments(f"cannot read {path}: {exc.strerror or exc}.") from exc
    if len(header) < 100 or not header.startswith(SQLITE_HEADER):
        raise InvalidArguments(
            f"{path} is not an SQLite database (its header is wrong or it is cut short); "
            "nothing was imported."
        )
    absolute = os.path.abspath(path)
    wal = absolute + "-wal"
    pending_wal = os.path.exists(wal) and os.path.getsize(wal) > 0
    uri = f"file:{quote(absolute)}"
    if header[WAL_MODE_OFFSET] == 2 and not pending_wal:
        # Opening a WAL database even read-only creates -wal and -shm beside it; with no
        # write log pending there is nothing in them to read, so read the file as it is.
        return sqlite3.connect(f"{uri}?immutable=1", uri=True)
    try:
        connection = sqlite3.connect(f"{uri}?mode=ro", uri=True)
        connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return connection
    except sqlite3.OperationalError as exc:
        if pending_wal:
            raise InvalidArguments(
                f"{path} cannot be opened read-only ({exc}) and its write log {wal} holds "
                "changes that only a writable copy can read: copy the folder somewhere "
                "writable and import from there; nothing was imported."
            ) from exc
        # A read-only medium refuses even the shared lock: nobody can be writing there.
        return sqlite3.connect(f"{uri}?immutable=1", uri=True)


def _note_from_row(origin: str, values: dict[str, Any]) -> SourceNote:
    decoded: dict[str, object] = {}
    for column, value in values.items():
        if isinstance(value, bytes):
            try:
                decoded[column] = value.decode("utf-8")
            except UnicodeDecodeError as exc:
                return SourceNote(
                    origin,
                    values.get("name", b"").decode("utf-8", "replace")
                    if isinstance(values.get("name"), bytes)
                    else values.get("name"),
                    None,
                    problem=f"{column} is not UTF-8 text (byte {exc.start})",
                )
        else:
            decoded[column] = value
    return SourceNote(
        origin,
        decoded.get("name"),
        decoded.get("content"),
        decoded.get("tags"),
        decoded.get("created_at"),
        decoded.get("updated_at"),
    )


def read_aicoder_json(directory: str) -> list[SourceNote]:
    """Every JSON record under a folder of AI Coder's memory plan (`index.json` left out)."""
    if not os.path.isdir(directory):
        raise InvalidArguments(f"{directory} is not a folder; nothing was imported.")
    notes = []
    for path in _json_files(directory):
        origin = os.path.relpath(path, directory).replace(os.sep, "/")
        stem = origin[: -len(".json")]
        try:
            with open(path, "rb") as handle:
                record = json.loads(handle.read().decode("utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            notes.append(SourceNote(origin, stem, None, problem=f"does not parse: {exc}"))
            continue
        if not isinstance(record, dict):
            notes.append(SourceNote(origin, stem, None, problem="is not a JSON object"))
            continue
        notes.append(
            SourceNote(
                origin,
                record.get("name", stem),
                record.get("content"),
                record.get("tags"),
                record.get("created_at"),
                record.get("updated_at"),
                record.get("scope"),
            )
        )
    return notes


def _json_files(directory: str) -> list[str]:
    found = []
    for folder, dirs, names in os.walk(directory):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(".json") and not (folder == directory and name == JSON_INDEX):
                found.append(os.path.join(folder, name))
    return found


# ----- the rules (pure) -------------------------------------------------------------


def prepare(notes: Sequence[SourceNote], max_memory_bytes: int) -> Prepared:
    """Records of the notes that can be imported; the rest kept back with their reasons.

    Of notes whose names are one name once normalised (`notes` and `notes.md`, ` x` and
    `x`), the one updated last is imported; on equal times the one spelled exactly so,
    then the first in the source.
    """
    prepared = Prepared()
    candidates: dict[tuple[bool, str], list[tuple[SourceNote, dict[str, Any]]]] = {}
    for note in notes:
        shown = note.name if isinstance(note.name, str) else repr(note.name)
        try:
            record, key = _record(note, max_memory_bytes)
        except (InvalidArguments, InvalidName) as exc:
            prepared.rejected.append(Rejected(note.origin, shown, exc.message))
            continue
        candidates.setdefault(key, []).append((note, record))
    for (is_global, name), group in candidates.items():
        winner_note, winner = max(group, key=lambda pair: _rank(pair, group, name))
        prepared.records.append(winner)
        for note, record in group:
            if note is not winner_note:
                prepared.rejected.append(
                    Rejected(
                        note.origin,
                        str(note.name),
                        _lost_because(record, winner, winner_note, name, is_global),
                    )
                )
    return prepared


def _record(note: SourceNote, max_memory_bytes: int) -> tuple[dict[str, Any], tuple[bool, str]]:
    """The import record of a note and its normalised (is global, name); refuses bad notes."""
    if note.problem is not None:
        raise InvalidArguments(note.problem)
    parsed = parse_name(note.name)
    if not isinstance(note.content, str):
        raise InvalidArguments(
            "it has no content" if note.content is None else "its content is not text"
        )
    try:
        size = len(note.content.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidArguments(f"its content is not valid Unicode (position {exc.start})") from exc
    if size > max_memory_bytes:
        raise InvalidArguments(
            f"its content is {size} bytes, over the limit of {max_memory_bytes} (maxMemoryBytes)"
        )
    if note.scope not in (None, "project", "global"):
        raise InvalidArguments(f"scope {note.scope!r} is neither project nor global")
    record: dict[str, Any] = {
        "name": note.name,
        "content": note.content,
        "tags": _tags(note.tags),
        "created_at": _timestamp(note.created_at, "created_at"),
        "updated_at": _timestamp(note.updated_at, "updated_at"),
        "scope": note.scope,
    }
    return record, (parsed.is_global or note.scope == "global", parsed.name)


def _tags(value: object) -> list[str]:
    """Tags from AI Coder's comma-separated text (or a JSON list); empty ones dropped."""
    if value is None:
        return []
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list) and all(isinstance(t, str) for t in value):
        items = value
    else:
        raise InvalidArguments(f"tags {value!r} are neither comma-separated text nor a list")
    tags = [t.strip() for t in items if t.strip()]
    for tag in tags:
        if "\n" in tag or "\r" in tag:
            raise InvalidArguments(f"tag {tag!r} spans lines")
    return list(dict.fromkeys(tags))


def _timestamp(value: object, key: str) -> str | None:
    """A timestamp as SPEC text; AI Coder's `2025-10-08 03:07:11` (and epoch seconds) are UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return iso(dt.datetime.fromtimestamp(value, dt.timezone.utc))
    # parse_timestamp reads a time without a zone as UTC, as SQLite's CURRENT_TIMESTAMP is.
    stamp = iso(value.strip()) if isinstance(value, str) else None
    if stamp is None:
        raise InvalidArguments(f"{key} {value!r} is not a timestamp")
    return stamp


def _rank(
    pair: tuple[SourceNote, dict[str, Any]],
    group: list[tuple[SourceNote, dict[str, Any]]],
    name: str,
) -> tuple[str, bool, int]:
    note, record = pair
    # ISO texts of one shape sort as times; a note without updated_at ranks last.
    return (record["updated_at"] or "", note.name == name, -group.index(pair))


def _lost_because(
    record: dict[str, Any],
    winner: dict[str, Any],
    winner_note: SourceNote,
    name: str,
    is_global: bool,
) -> str:
    shown = ("global/" if is_global else "") + name
    why = (
        f"that one was updated later ({winner['updated_at']})"
        if (winner["updated_at"] or "") != (record["updated_at"] or "")
        else "both were updated at the same time and that one is spelled exactly so"
        if winner_note.name == name and record["name"] != name
        else "both were updated at the same time and that one comes first"
    )
    return (
        f"{record['name']!r} and {winner_note.name!r} ({winner_note.origin}) are both the "
        f"memory {shown!r} once normalised; {winner_note.origin} is imported because {why}"
    )


def global_folder(environ: Mapping[str, str]) -> str:
    """AI Coder's personal memories."""
    return "~/.config/aicoder/memory"


AICODER = Layout(
    name="aicoder",
    agent="AI Coder",
    primary_folder=".aicoder/memory",
    global_folder=global_folder,
    context_limits=(
        # AI Coder loads autoload.md into every prompt and truncates it past 2,048 bytes.
        ContextLimit(
            agent="AI Coder",
            pattern=".aicoder/memory/autoload.md",
            limit_bytes=2048,
            env_var="AICODER_MEMORY_AUTOLOAD_LIMIT",
            use="it is loaded into every prompt",
        ),
    ),
)
