"""The gate on writes, versions, damaged reads and the findings a write is answered with."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from memory_ls.config import FolderSetting, Settings
from memory_ls.core.operations.check import check_store
from memory_ls.core.operations.report import change_findings, findings_text
from memory_ls.core.rules.errors import (
    Exists,
    InvalidArguments,
    InvalidEncoding,
    InvalidFrontmatter,
    PossibleSecret,
    VersionConflict,
)
from memory_ls.core.storage.folders import resolve_store_config
from memory_ls.core.storage.gate import decode_for_read, version_of
from memory_ls.core.storage.memory import Change
from memory_ls.core.store import Store

AWS_KEY = "AKIA" + "Q3EXAMPLEKEY7XYZ"


def _store(root: Path, secrets: str = "refuse") -> Store:
    """A store with a shared `feature` folder and a global folder, all inside `root`."""
    feature = root / "shared" / "feature"
    feature.mkdir(parents=True, exist_ok=True)
    settings = Settings(
        global_folder=str(root / "global"),
        additional_folders=(FolderSetting(str(feature)),),
        secrets=secrets,  # type: ignore[arg-type]
    )
    return Store(resolve_store_config(settings, str(root), environ={}))


def test_versions_are_hashes_of_the_bytes(tmp_path: Path) -> None:
    store = _store(tmp_path)
    saved = store.save("notes", "# Notes\n")
    path = Path(saved["path"])
    assert saved["version"] == version_of(path.read_bytes()) == store.read("notes")["version"]
    assert len(saved["version"]) == 16
    path.write_text("# Notes\nchanged behind our back\n")
    assert store.read("notes")["version"] == version_of(path.read_bytes()) != saved["version"]


def test_a_write_against_an_old_version_changes_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path)
    old = store.save("notes", "# Notes\n")["version"]
    store.edit("notes", needle="Notes", replacement="Notes, edited by B")
    path = tmp_path / ".serena" / "memories" / "notes.md"
    kept = path.read_bytes()
    with pytest.raises(VersionConflict) as info:
        store.save("notes", "mine", expected_version=old)
    assert info.value.current_version == version_of(kept)
    with pytest.raises(VersionConflict):
        store.delete("notes", expected_version=old)
    with pytest.raises(VersionConflict):
        store.move("notes", "renamed", expected_version=old)
    assert path.read_bytes() == kept
    # The current version goes through, and so does a version in capitals.
    store.save("notes", "mine\n", expected_version=version_of(kept).upper())
    assert path.read_text() == "mine\n"
    with pytest.raises(VersionConflict, match="no longer exists"):
        store.save("gone", "x", expected_version=old)
    assert not (tmp_path / ".serena" / "memories" / "gone.md").exists()


@pytest.mark.parametrize(
    "given",
    ["abc", "", "   ", "v" * 16, "0" * 64, "0123456789abcdef0", "latest", 16, True, ["x"]],
)
def test_a_malformed_version_is_a_wrong_argument_not_a_conflict(
    tmp_path: Path, given: object
) -> None:
    store = _store(tmp_path)
    store.save("notes", "# Notes\n")
    path = tmp_path / ".serena" / "memories" / "notes.md"
    for write in (
        lambda: store.save("notes", "mine", expected_version=given),  # type: ignore[arg-type]
        lambda: store.edit("notes", content="mine", expected_version=given),  # type: ignore[arg-type]
        lambda: store.delete("notes", expected_version=given),  # type: ignore[arg-type]
        lambda: store.move("notes", "renamed", expected_version=given),  # type: ignore[arg-type]
        lambda: store.save("gone", "x", expected_version=given),  # type: ignore[arg-type]
    ):
        with pytest.raises(InvalidArguments) as info:
            write()
        assert not isinstance(info.value, VersionConflict)
        message = str(info.value)
        # What a version looks like and where to get one.
        assert "16 hex digits" in message and "read_memory" in message
        assert "Nothing was changed" in message
    assert path.read_text() == "# Notes\n"
    assert not (tmp_path / ".serena" / "memories" / "gone.md").exists()
    # Surrounding spaces around a real version are forgiven, as capitals are.
    version = store.read("notes")["version"]
    store.save("notes", "mine\n", expected_version=f" {version.upper()}\n")
    assert path.read_text() == "mine\n"


def test_create_only_refuses_an_existing_memory_wherever_it_is(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.save("FEATURE_auth", "# Auth\n")
    with pytest.raises(Exists, match="create_only refuses"):
        store.save("FEATURE_auth", "other", create_only=True)
    assert (tmp_path / "shared" / "feature" / "FEATURE_auth.md").read_text() == "# Auth\n"
    assert store.save("fresh", "x", create_only=True)["created"] is True


def test_the_gate_refuses_only_what_the_write_brings(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with pytest.raises(InvalidEncoding):
        store.save("bad", "a\x00b")
    with pytest.raises(InvalidFrontmatter, match="line 2"):
        store.save("bad", "---\ntags: 5\n---\nbody\n")
    with pytest.raises(PossibleSecret, match="line 1: an AWS access key") as info:
        store.save("bad", f"{AWS_KEY}\n")
    assert AWS_KEY not in str(info.value)
    assert not (tmp_path / ".serena" / "memories" / "bad.md").exists()
    # A secret or broken frontmatter already in the file does not block other edits.
    path = tmp_path / ".serena" / "memories" / "legacy.md"
    path.parent.mkdir(parents=True)
    path.write_text(f"---\ntags: [a\n---\nkey {AWS_KEY}\nold line\n")
    store.edit("legacy", needle="old line", replacement="new line")
    assert path.read_text().endswith("new line\n")
    # Global memories are never committed: no secret check there.
    store.save("global/mine", AWS_KEY)
    # A store that only warns writes the secret.
    _store(tmp_path, secrets="warn").save("warned", f"{AWS_KEY}\n")


@pytest.mark.parametrize(
    ("url", "password"),
    [
        ("postgres://shop:Tr0ub4dor3x@db.internal:5432/shop", "Tr0ub4dor3x"),
        ("https://ci-bot:ghs_4f7Qm2LpZx9Rk1@git.example.com/org/repo.git", "ghs_4f7Qm2LpZx9Rk1"),
        ("mysql://root:s3cr3tP4ss@localhost/app", "s3cr3tP4ss"),
        ("redis://:hunter2pw@cache:6379/0", "hunter2pw"),
        # A word that names a password is one in a URL (issue 34).
        ("postgres://user:pass@host/db", ":pass@"),
        ("postgres://user:password@localhost/db", ":password@"),
    ],
)
def test_a_password_inside_a_url_is_refused_like_other_secrets(
    tmp_path: Path, url: str, password: str
) -> None:
    store = _store(tmp_path)
    with pytest.raises(PossibleSecret, match="line 3: a password in a URL") as info:
        store.save("deploy", f"# Deploy\n\nThe database is at {url}.\n")
    assert password not in str(info.value)
    assert not (tmp_path / ".serena" / "memories" / "deploy.md").exists()
    # A store that only warns writes it, and `check` reports it.
    _store(tmp_path, secrets="warn").save("deploy", f"# Deploy\n\n{url}\n")
    found = [
        (d.code, d.line) for d in check_store(_store(tmp_path)) if Path(d.path).name == "deploy.md"
    ]
    assert found == [("possible-secret", 2)]


def test_placeholders_in_urls_are_not_secrets(tmp_path: Path) -> None:
    store = _store(tmp_path)
    for url in (
        "postgres://user:<password>@host/db",
        "postgres://app:${DB_PASSWORD}@host/db",
        "postgres://app:$DB_PASSWORD@host/db",
        "redis://:****@cache:6379",
        "mysql://root:xxx@localhost/db",
        "amqp://app:changeme@rabbit/",
        "postgres://postgres:postgres@localhost/db",
        "postgres://{user}:{password}@{host}/db",
    ):
        store.save("deploy", f"# Deploy\n\nConnect with {url}.\n")


def test_reads_say_what_is_wrong_with_the_encoding() -> None:
    assert decode_for_read(b"plain\n", "x") == ("plain\n", None)
    text, warning = decode_for_read("Café\n".encode("latin-1"), "x")
    assert text == "Café\n" and warning is not None and "not UTF-8" in warning
    for data in ("é wide\n".encode("utf-16"), codecs.BOM_UTF16_BE + "é\n".encode("utf-16-be")):
        text, warning = decode_for_read(data, "x")
        assert text.endswith("\n") and "é" in text and warning and "UTF-16" in warning
    text, warning = decode_for_read("no bom\n".encode("utf-16-le"), "x")
    assert text == "no bom\n" and warning and "UTF-16" in warning
    with pytest.raises(InvalidEncoding, match="a PDF document"):
        decode_for_read(b"%PDF-1.7\n\x00\x01\x02", "x")
    with pytest.raises(InvalidEncoding, match="binary data"):
        decode_for_read(b"\x00\x01\x02\x03garbage", "x")


def test_findings_mark_what_the_write_introduced(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.save("payments/retry_policy", "# Retry\n")
    store.save("BUGFIX_notes", "# Notes\nSee [[payments/retry_polcy]].\n")
    first = change_findings(store, store.changes[-1])
    assert [(f.code, f.line, f.new) for f in first] == [
        ("unknown-prefix", 1, True),
        ("broken-link", 2, True),
    ]
    assert first[1].fix == "Did you mean payments/retry_policy?"
    store.edit("BUGFIX_notes", needle="# Notes\n", replacement="# Notes\n\nIntro.\n")
    second = change_findings(store, store.changes[-1])
    # The same problems, moved down a line, are not new.
    assert [(f.code, f.line, f.new) for f in second] == [
        ("unknown-prefix", 1, False),
        ("broken-link", 4, False),
    ]
    text = findings_text(second)
    assert text.startswith("Checked: 2 problems (none new from this write):")
    assert "- warning broken-link, line 4 (already there)" in text
    store.move("BUGFIX_notes", "FEATURE_notes")
    moved = change_findings(store, store.changes[-1])
    assert [(f.code, f.new) for f in moved] == [("broken-link", False)]


def test_an_edit_of_a_misrouted_memory_that_shadows_another_is_told_both(tmp_path: Path) -> None:
    store = _store(tmp_path)
    (tmp_path / ".serena" / "memories").mkdir(parents=True)
    (tmp_path / ".serena" / "memories" / "FEATURE_x.md").write_text("# In primary\n")
    (tmp_path / "shared" / "feature" / "FEATURE_x.md").write_text("# In feature\n")
    store.edit("FEATURE_x", needle="primary", replacement="the primary folder")
    assert [(f.code, f.new) for f in change_findings(store, store.changes[-1])] == [
        ("misrouted", False)
    ]
    # Written to the hidden copy by path (an editor may): it is told it is shadowed.
    hidden = store.scan()[-1]
    assert hidden.path.endswith("feature/FEATURE_x.md")
    change = Change("edit", hidden, None, b"# In feature\n")
    assert ("shadowed", True) in [(f.code, f.new) for f in change_findings(store, change)]


def test_listings_say_which_names_memory_ls_would_not_create(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.save("notes", "# Notes\n")
    (tmp_path / ".serena" / "memories" / "what?.md").write_text("# Serena wrote it\n")
    listed = {m["name"]: m for m in store.list_memories()["memories"]}
    # Written by Serena under a name memory-ls refuses to create: writable, but renamable.
    assert (listed["what?"]["validName"], listed["what?"]["readOnly"]) == (False, False)
    assert (listed["notes"]["validName"], listed["notes"]["readOnly"]) == (True, False)


def test_a_rename_is_judged_on_the_file_as_its_references_were_rewritten(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.save("draft", "# Draft\nSee [[draft]] above.\n")
    store.move("draft", "plan")
    # Its own link followed it: no broken link is reported for the name it left.
    assert [f.code for f in change_findings(store, store.changes[-1])] == []
    assert (tmp_path / ".serena" / "memories" / "plan.md").read_text().endswith("[[plan]] above.\n")
