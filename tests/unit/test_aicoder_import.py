"""`memory-ls import --from aicoder-db|aicoder-json`: AI Coder's stores as they are (SPEC 4)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# AI Coder's memory tool, as shipped (memory.db).
AICODER_SCHEMA = """
CREATE TABLE notes (
    name TEXT PRIMARY KEY,
    content TEXT,
    tags TEXT,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    access_count INTEGER DEFAULT 0,
    last_accessed TIMESTAMP
)
"""
ROWS: list[tuple[str, str | None, str | None, str, str]] = [
    (
        "deploy_steps",
        "Line one\r\nLine two\r\n",
        "ops, deploy",
        "2025-10-01 09:00:00",
        "2025-10-08 03:07:11",
    ),
    ("ünïcode_笔记", "Grüße 🌍 — ok\n", "", "2025-10-02 10:00:00", "2025-10-02 10:00:00"),
    ("notes", "the older notes\n", "a", "2025-10-01 00:00:00", "2025-10-01 00:00:00"),
    ("notes.md", "the newer notes\n", "b", "2025-10-01 00:00:00", "2025-10-05 00:00:00"),
    (" x", "spaced\n", None, "2025-10-03 00:00:00", "2025-10-03 00:00:00"),
    ("x", "exact\n", None, "2025-10-03 00:00:00", "2025-10-03 00:00:00"),
    ("bad:name", "refused\n", "t", "2025-10-03 00:00:00", "2025-10-03 00:00:00"),
    ("FEATURE_auth", "routed by prefix\n", "auth", "2025-10-04 00:00:00", "2025-10-04 00:00:00"),
    ("global/tips", "a personal tip\n", "me", "2025-10-04 00:00:00", "2025-10-04 00:00:00"),
    ("empty_content", None, "t", "2025-10-04 00:00:00", "2025-10-04 00:00:00"),
]


def run_cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real `memory-ls` in `root`, with a feature folder and a global folder beside it."""
    env = {**os.environ, "HOME": str(root.parent / "home"), "XDG_CACHE_HOME": str(root.parent)}
    flags = ["--additional-folders", "shared/feature", "--global-folder", str(root.parent / "g")]
    return subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", *args, *flags],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def files_under(base: Path) -> dict[str, bytes]:
    """Every file under base with its bytes (a snapshot)."""
    return {
        str(p.relative_to(base)): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()
    }


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A workspace with an additional folder `shared/feature`."""
    workspace = tmp_path / "ws"
    (workspace / "shared" / "feature").mkdir(parents=True)
    return workspace


def make_db(path: Path, rows: list[tuple[Any, ...]] = ROWS) -> Path:
    """A database made with AI Coder's schema."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as connection:
        connection.execute(AICODER_SCHEMA)
        connection.executemany(
            "INSERT INTO notes (name, content, tags, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?)",
            rows,
        )
    connection.close()
    return path


def read(root: Path, name: str) -> dict[str, Any]:
    result = run_cli(root, "read", name, "--json")
    assert result.returncode == 0, result.stderr
    loaded: dict[str, Any] = json.loads(result.stdout)
    return loaded


def test_db_import_keeps_names_content_tags_and_utc_timestamps(root: Path) -> None:
    db = make_db(root / ".aicoder" / "memory.db")
    source = files_under(db.parent)
    result = run_cli(root, "import", "--from", "aicoder-db", str(db), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    imported = {r["name"]: r for r in report["imported"]}
    assert set(imported) == {
        "deploy_steps",
        "ünïcode_笔记",
        "notes",
        "x",
        "FEATURE_auth",
        "global/tips",
    }
    # Routed like save: prefix, global, primary.
    assert imported["FEATURE_auth"]["path"] == str(root / "shared" / "feature" / "FEATURE_auth.md")
    assert imported["global/tips"]["path"] == str(root.parent / "g" / "tips.md")
    assert imported["notes"]["path"] == str(root / ".serena" / "memories" / "notes.md")

    deploy = read(root, "deploy_steps")
    assert deploy["tags"] == ["ops", "deploy"]
    assert (deploy["createdAt"], deploy["updatedAt"]) == (
        "2025-10-01T09:00:00Z",
        "2025-10-08T03:07:11Z",
    )
    # CRLF content is written byte for byte.
    raw = (root / ".serena" / "memories" / "deploy_steps.md").read_bytes()
    assert raw.endswith(b"Line one\r\nLine two\r\n")
    unicode = read(root, "ünïcode_笔记")
    assert unicode["content"] == "Grüße 🌍 — ok\n"
    assert unicode["tags"] == []  # empty tags text: no tags
    assert unicode["updatedAt"] == "2025-10-02T10:00:00Z"

    # Duplicates after normalisation: the later update wins, then the exact spelling.
    assert read(root, "notes")["content"] == "the newer notes\n"
    assert read(root, "notes")["tags"] == ["b"]
    assert read(root, "x")["content"] == "exact\n"
    rejected = {r["name"]: r for r in report["rejected"]}
    assert set(rejected) == {"notes", " x", "bad:name", "empty_content"}
    assert rejected["notes"]["source"] == "row 3"
    assert "row 4 is imported because that one was updated later" in rejected["notes"]["reason"]
    assert "spelled exactly so" in rejected[" x"]["reason"]
    assert "not allowed" in rejected["bad:name"]["reason"]
    assert rejected["empty_content"]["reason"] == "it has no content"
    assert "4 note(s) not imported" in result.stderr
    # The source is untouched: same bytes, no journal or WAL files beside it.
    assert files_under(db.parent) == source


def test_db_import_skips_existing_unless_overwrite_and_reports_in_words(root: Path) -> None:
    db = make_db(root / "memory.db", ROWS[:2])
    first = run_cli(root, "import", "--from", "aicoder-db", str(db))
    assert first.returncode == 0, first.stderr
    assert "imported deploy_steps -> .serena/memories/deploy_steps.md" in first.stdout
    again = run_cli(root, "import", "--from", "aicoder-db", str(db))
    assert again.stdout.splitlines() == [
        "skipped deploy_steps (exists; use --overwrite)",
        "skipped ünïcode_笔记 (exists; use --overwrite)",
    ]
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE notes SET content = 'changed\n' WHERE name = 'deploy_steps'")
    connection.close()
    forced = run_cli(root, "import", "--from", "aicoder-db", str(db), "--overwrite", "--json")
    assert [r["name"] for r in json.loads(forced.stdout)["imported"]] == [
        "deploy_steps",
        "ünïcode_笔记",
    ]
    assert read(root, "deploy_steps")["content"] == "changed\n"


def test_wal_database_is_read_whole_and_left_as_it_was(root: Path) -> None:
    db = root / "wal" / "memory.db"
    db.parent.mkdir(parents=True)
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode=wal")
    writer.execute(AICODER_SCHEMA)
    writer.execute("INSERT INTO notes (name, content) VALUES ('in_wal', 'only in the log')")
    writer.commit()  # AI Coder still running: the note is in memory.db-wal only
    try:
        source = files_under(db.parent)
        result = run_cli(root, "import", "--from", "aicoder-db", str(db), "--json")
        assert result.returncode == 0, result.stderr
        assert [r["name"] for r in json.loads(result.stdout)["imported"]] == ["in_wal"]
        assert files_under(db.parent).keys() == source.keys()
        assert (db.parent / "memory.db").read_bytes() == source["memory.db"]
    finally:
        writer.close()
    # Checkpointed and closed: opening read-only must not create -wal and -shm files.
    before = files_under(db.parent)
    assert set(before) == {"memory.db"}
    run_cli(root, "import", "--from", "aicoder-db", str(db), "--overwrite")
    assert files_under(db.parent) == before


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        ("garbage", "is not an SQLite database"),
        ("truncated", "is damaged or not an SQLite database (database disk image is malformed)"),
        ("empty", "is not an SQLite database"),
        ("other_schema", "has no table 'notes'"),
    ],
)
def test_damaged_database_is_a_clear_error_and_nothing_is_written(
    root: Path, damage: str, expected: str
) -> None:
    good = make_db(root.parent / "good.db", [(f"n{i}", "x" * 400, "t", "", "") for i in range(300)])
    db = root.parent / "bad.db"
    data = good.read_bytes()
    if damage == "garbage":
        db.write_bytes(b"not a database at all\n" * 50)
    elif damage == "truncated":
        db.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        db.write_bytes(b"")
    else:
        with sqlite3.connect(db) as connection:
            connection.execute("CREATE TABLE memories (key TEXT, value TEXT)")
        connection.close()
    before = files_under(root.parent)
    result = run_cli(root, "import", "--from", "aicoder-db", str(db))
    assert result.returncode == 2, result.stdout
    assert "[invalid-arguments]" in result.stderr and expected in result.stderr
    assert "nothing was imported" in result.stderr
    assert files_under(root.parent) == before


def test_missing_source_is_a_usage_error(root: Path) -> None:
    result = run_cli(root, "import", "--from", "aicoder-db", "nowhere.db")
    assert result.returncode == 2
    assert "no such file or folder: nowhere.db" in result.stderr


def test_json_folder_import_skips_index_and_reports_what_does_not_parse(root: Path) -> None:
    folder = root / ".aicoder" / "memory"
    folder.mkdir(parents=True)
    (folder / "index.json").write_text(json.dumps({"notes": ["api_notes", "broken"]}))
    record = {
        "name": "api_notes",
        "content": "The API lives in `src/api/`.\r\n",
        "tags": ["api", "http"],
        "created_at": "2025-09-01 08:00:00",
        "updated_at": "2025-10-08T03:07:11Z",
        "scope": "project",
    }
    (folder / "api_notes.json").write_text(json.dumps(record))
    (folder / "broken.json").write_text('{"name": "broken", "content": ')
    (folder / "listed.json").write_text("[1, 2]")
    (folder / "personal.json").write_text(
        json.dumps({"name": "personal", "content": "mine\n", "tags": "me, mine", "scope": "global"})
    )
    (folder / "bad_time.json").write_text(
        json.dumps({"name": "bad_time", "content": "x\n", "created_at": "yesterday"})
    )
    source = files_under(folder)
    result = run_cli(root, "import", "--from", "aicoder-json", str(folder), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert sorted(r["name"] for r in report["imported"]) == ["api_notes", "global/personal"]
    rejected = {r["source"]: r["reason"] for r in report["rejected"]}
    assert set(rejected) == {"broken.json", "listed.json", "bad_time.json"}
    assert rejected["broken.json"].startswith("does not parse")
    assert rejected["listed.json"] == "is not a JSON object"
    assert rejected["bad_time.json"] == "created_at 'yesterday' is not a timestamp"
    api = read(root, "api_notes")
    assert (api["tags"], api["createdAt"], api["updatedAt"]) == (
        ["api", "http"],
        "2025-09-01T08:00:00Z",
        "2025-10-08T03:07:11Z",
    )
    # `read` gives the body as Serena reads it (universal newlines); the file keeps CRLF.
    # With only .aicoder/memory present the layout is AI Coder's: the Markdown goes beside.
    raw = (folder / "api_notes.md").read_bytes()
    assert raw.endswith(b"The API lives in `src/api/`.\r\n")
    assert read(root, "global/personal")["tags"] == ["me", "mine"]
    assert {k: v for k, v in files_under(folder).items() if k.endswith(".json")} == source
    # The human form says what was kept back and why.
    again = run_cli(root, "import", "--from", "aicoder-json", str(folder))
    assert "rejected listed.json 'listed': is not a JSON object" in again.stdout
    assert "skipped api_notes (exists; use --overwrite)" in again.stdout


def test_import_into_a_read_only_route_writes_nothing(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "shared" / "feature").mkdir(parents=True)
    db = make_db(tmp_path / "memory.db", [ROWS[0], ROWS[7]])
    env = {**os.environ, "HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path)}
    result = subprocess.run(
        [
            *(sys.executable, "-m", "memory_ls.cli", "import", "--from", "aicoder-db", str(db)),
            *("--additional-folders", "shared/feature:ro", "--no-global"),
        ],
        cwd=workspace,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 3
    assert "[read-only]" in result.stderr and "nothing was imported" in result.stderr
    assert not (workspace / ".serena").exists()


def test_a_note_that_is_not_utf8_is_left_out_with_its_reason(root: Path) -> None:
    db = make_db(
        root / "memory.db",
        [
            ("good", "fine\n", "t", "2025-10-01 00:00:00", "2025-10-01 00:00:00"),
            ("latin1", b"caf\xe9\n", "t", "2025-10-01 00:00:00", "2025-10-01 00:00:00"),
        ],
    )
    result = run_cli(root, "import", "--from", "aicoder-db", str(db), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [r["name"] for r in report["imported"]] == ["good"]
    assert report["rejected"] == [
        {"source": "row 2", "name": "latin1", "reason": "content is not UTF-8 text (byte 3)"}
    ]
