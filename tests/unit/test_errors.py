"""Every SPEC error code comes out of the public Store API, typed, and changes no file."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest
from store_helpers import Workspace

from memory_ls.core import ERROR_CODES, MemoryStoreError, Store
from memory_ls.core.rules.errors import (
    AmbiguousMatch,
    Exists,
    Ignored,
    InvalidArguments,
    InvalidEncoding,
    InvalidFrontmatter,
    InvalidName,
    IoError,
    MergeConflict,
    NoMatch,
    NotFound,
    OutsideStore,
    PossibleSecret,
    ReadOnly,
    TooLarge,
    VersionConflict,
)

Call = Callable[[Store], Any]


def _os_refuses(call: Call, function: str, code: int) -> Call:
    """The call with one system call failing as the file system would (root cannot make it)."""

    def run(store: Store) -> Any:
        with mock.patch(function, side_effect=OSError(code, os.strerror(code))):
            return call(store)

    return run


# code -> calls that must be refused with it (several spellings where it matters).
REFUSALS: dict[str, list[tuple[str, Call]]] = {
    "invalid-name": [
        ("save", lambda s: s.save("../escape", "x")),
        ("save-empty", lambda s: s.save("   ", "x")),
        ("read", lambda s: s.read("a//b")),
        ("edit", lambda s: s.edit("a/../b", content="x")),
        ("delete", lambda s: s.delete("mem:../notes.md")),
        ("save-uncreatable", lambda s: s.save("bad|name", "x")),
        ("move-target", lambda s: s.move("notes", "../notes")),
        ("route", lambda s: s.route("/etc/passwd")),
        ("save-not-a-string", lambda s: s.save(42, "x")),
        (
            "import",
            lambda s: s.import_records(
                [{"name": "ok", "content": "x"}, {"name": "..", "content": "x"}]
            ),
        ),
    ],
    "not-found": [
        ("read", lambda s: s.read("missing")),
        # A name memory-ls would not create may be a file Serena wrote: looked up, not refused.
        ("read-uncreatable", lambda s: s.read("bad|name")),
        ("delete-uncreatable", lambda s: s.delete("C:\\notes")),
        ("edit", lambda s: s.edit("missing", content="x")),
        ("delete", lambda s: s.delete("missing")),
        ("move", lambda s: s.move("missing", "other")),
        ("read-wrong-scope", lambda s: s.read("notes", scope="global")),
        ("global-name", lambda s: s.delete("global/notes")),
        # A bare name is a project memory: only a read falls back to global/NAME.
        ("delete-bare-global", lambda s: s.delete("mine")),
        ("edit-bare-global", lambda s: s.edit("mine", content="x")),
        ("move-bare-global", lambda s: s.move("mine", "other")),
        # The fallback never reaches an ignored global memory either.
        ("read-fallback-ignored", lambda s: s.read("hidden")),
    ],
    "exists": [
        ("move-onto-existing", lambda s: s.move("notes", "FEATURE_auth")),
        ("move-onto-itself", lambda s: s.move("notes", "notes")),
        ("move-global-onto-existing", lambda s: s.move("global/mine", "global/theirs")),
    ],
    "read-only": [
        ("save-routed", lambda s: s.save("SPEC_new", "x")),
        ("save-existing", lambda s: s.save("SPEC_api", "x")),
        ("edit", lambda s: s.edit("SPEC_api", content="x")),
        ("delete", lambda s: s.delete("SPEC_api")),
        ("move-from", lambda s: s.move("SPEC_api", "api")),
        ("move-to", lambda s: s.move("notes", "SPEC_notes")),
        (
            "import",
            lambda s: s.import_records(
                [{"name": "ok", "content": "x"}, {"name": "SPEC_b", "content": "x"}]
            ),
        ),
    ],
    "too-large": [
        ("save-new", lambda s: s.save("big", "x" * 2000)),
        ("save-existing", lambda s: s.save("notes", "x" * 2000)),
        ("save-multibyte", lambda s: s.save("big", "é" * 600)),  # 1200 bytes, 600 characters
        ("edit-content", lambda s: s.edit("notes", content="x" * 2000)),
        ("edit-needle", lambda s: s.edit("notes", needle="notes", replacement="y" * 2000)),
        (
            "import",
            lambda s: s.import_records(
                [{"name": "ok", "content": "x"}, {"name": "b", "content": "x" * 2000}]
            ),
        ),
    ],
    "no-match": [
        ("literal", lambda s: s.edit("notes", needle="absent", replacement="x")),
        ("regex", lambda s: s.edit("notes", needle=r"\d{5}", replacement="x", mode="regex")),
        ("case-sensitive", lambda s: s.edit("notes", needle="NOTES", replacement="x")),
    ],
    "ambiguous-match": [
        ("literal", lambda s: s.edit("notes", needle="line", replacement="x")),
        ("regex", lambda s: s.edit("notes", needle=r"l\w+e", replacement="x", mode="regex")),
    ],
    "outside-store": [
        ("global-disabled", lambda s: s.save("global/x", "x")),
        ("global-scope-disabled", lambda s: s.save("x", "x", scope="global")),
        ("move-to-global-disabled", lambda s: s.move("notes", "global/notes")),
    ],
    "invalid-arguments": [
        ("content-type", lambda s: s.save("x", 123)),
        ("content-none", lambda s: s.save("x", None)),
        # JSON allows a lone surrogate ("\ud800"); it cannot be written as UTF-8.
        ("content-lone-surrogate", lambda s: s.save("x", "text \ud800")),
        ("tags-lone-surrogate", lambda s: s.save("x", "x", tags=["\udcff"])),
        ("edit-lone-surrogate", lambda s: s.edit("notes", content="\ud800")),
        (
            "replacement-lone-surrogate",
            lambda s: s.edit("notes", needle="notes", replacement="\ud800"),
        ),
        ("tags-string", lambda s: s.save("x", "x", tags="a,b")),
        ("tags-items", lambda s: s.save("x", "x", tags=["a", 1])),
        ("tags-empty", lambda s: s.save("x", "x", tags=[" "])),
        ("scope-value", lambda s: s.save("x", "x", scope="everywhere")),
        ("scope-type", lambda s: s.read("notes", scope=["project"])),
        ("global-name-project-scope", lambda s: s.save("global/x", "x", scope="project")),
        ("edit-nothing", lambda s: s.edit("notes")),
        ("edit-both", lambda s: s.edit("notes", content="x", needle="a", replacement="b")),
        ("edit-needle-type", lambda s: s.edit("notes", needle=5, replacement="b")),
        ("edit-replacement-missing", lambda s: s.edit("notes", needle="notes")),
        ("edit-empty-needle", lambda s: s.edit("notes", needle="", replacement="b")),
        ("edit-mode", lambda s: s.edit("notes", needle="a", replacement="b", mode="glob")),
        (
            "edit-allow-multiple-type",
            lambda s: s.edit("notes", needle="line", replacement="b", allow_multiple="yes"),
        ),
        (
            "edit-bad-regex",
            lambda s: s.edit("notes", needle="(unclosed", replacement="b", mode="regex"),
        ),
        (
            "edit-bad-group",
            lambda s: s.edit("notes", needle="notes", replacement="$!9", mode="regex"),
        ),
        ("list-scope", lambda s: s.list_memories(scope=3)),
        ("list-tags", lambda s: s.list_memories(tags="a")),
        ("list-prefix", lambda s: s.list_memories(prefix=1)),
        ("search-query", lambda s: s.search(5)),
        ("search-empty", lambda s: s.search("  ")),
        ("search-limit", lambda s: s.search("x", limit=0)),
        ("search-limit-type", lambda s: s.search("x", limit="3")),
        ("search-limit-bool", lambda s: s.search("x", limit=True)),
        ("tags-scope", lambda s: s.tags(scope="nowhere")),
        ("export-scope", lambda s: s.export(scope="x")),
        # Not a version at all: a wrong argument, not a conflict (nobody changed anything).
        ("version-short", lambda s: s.save("notes", "x", expected_version="abc")),
        ("version-not-hex", lambda s: s.edit("notes", content="x", expected_version="v" * 16)),
        ("version-empty", lambda s: s.delete("notes", expected_version="")),
        ("version-type", lambda s: s.move("notes", "renamed", expected_version=12345)),
        ("version-long", lambda s: s.save("notes", "x", expected_version="0" * 64)),
        ("import-not-list", lambda s: s.import_records({"name": "x", "content": "x"})),
        ("import-record-type", lambda s: s.import_records(["x"])),
        ("import-content-type", lambda s: s.import_records([{"name": "x", "content": 1}])),
        (
            "import-scope",
            lambda s: s.import_records([{"name": "x", "content": "x", "scope": "team"}]),
        ),
        (
            "import-timestamp",
            lambda s: s.import_records([{"name": "x", "content": "x", "created_at": "yesterday"}]),
        ),
    ],
}

# Serena's patterns (the project.yml written by _populated): ignored memories are refused
# whatever the operation, read-only ones for every write.
REFUSALS["ignored"] = [
    ("read", lambda s: s.read("secret_plan")),
    ("read-global", lambda s: s.read("global/hidden")),
    ("save-existing", lambda s: s.save("secret_plan", "x")),
    ("save-new", lambda s: s.save("secret_new", "x")),
    ("save-global", lambda s: s.save("global/hidden", "x")),
    ("edit", lambda s: s.edit("secret_plan", content="x")),
    ("delete", lambda s: s.delete("secret_plan")),
    ("move-from", lambda s: s.move("secret_plan", "plan")),
    ("move-to", lambda s: s.move("notes", "secret_notes")),
    ("move-to-global", lambda s: s.move("notes", "global/hidden")),
    ("route", lambda s: s.route("secret_new")),
    (
        "import",
        lambda s: s.import_records(
            [{"name": "ok", "content": "x"}, {"name": "secret_b", "content": "x"}]
        ),
    ),
]
REFUSALS["read-only"] += [
    ("pattern-save", lambda s: s.save("frozen", "x")),
    ("pattern-save-new", lambda s: s.save("frozen_new", "x")),
    ("pattern-edit", lambda s: s.edit("frozen", content="x")),
    ("pattern-delete", lambda s: s.delete("frozen")),
    ("pattern-move-from", lambda s: s.move("frozen", "thawed")),
    ("pattern-move-to", lambda s: s.move("notes", "frozen_notes")),
]

REFUSALS["version-conflict"] = [
    ("save", lambda s: s.save("notes", "x", expected_version="0123456789abcdef")),
    ("save-gone", lambda s: s.save("gone", "x", expected_version="0123456789abcdef")),
    ("edit", lambda s: s.edit("notes", content="x", expected_version="0123456789abcdef")),
    ("delete", lambda s: s.delete("notes", expected_version="0123456789abcdef")),
    ("move", lambda s: s.move("notes", "renamed", expected_version="0123456789abcdef")),
]
REFUSALS["exists"] += [("create-only", lambda s: s.save("notes", "x", create_only=True))]
REFUSALS["invalid-encoding"] = [
    ("save-nul", lambda s: s.save("new", "a\x00b")),
    ("edit-nul", lambda s: s.edit("notes", needle="line one", replacement="\x00")),
]
REFUSALS["invalid-frontmatter"] = [
    ("save-tags", lambda s: s.save("new", "---\ntags: 5\n---\nbody\n")),
    ("edit-yaml", lambda s: s.edit("notes", needle="tags: [a]", replacement="tags: [a")),
]
REFUSALS["possible-secret"] = [
    ("save", lambda s: s.save("new", "key AKIAABCDEFGHIJKLMNOP\n")),
    ("edit", lambda s: s.edit("notes", needle="line one", replacement="sk_live_" + "a" * 24)),
]

REFUSALS["merge-conflict"] = [
    ("save", lambda s: s.save("new", "<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n")),
    ("edit", lambda s: s.edit("notes", needle="line one", replacement=">>>>>>> feature")),
]
REFUSALS["io-error"] = [
    ("save", _os_refuses(lambda s: s.save("new", "x"), "os.replace", errno.ENOSPC)),
    ("save-topic", _os_refuses(lambda s: s.save("t/new", "x"), "os.mkdir", errno.EACCES)),
    ("edit", _os_refuses(lambda s: s.edit("notes", content="x"), "os.fsync", errno.EIO)),
    ("delete", _os_refuses(lambda s: s.delete("notes"), "os.unlink", errno.EROFS)),
    ("move", _os_refuses(lambda s: s.move("notes", "renamed"), "os.replace", errno.EDQUOT)),
    (
        "read",
        _os_refuses(lambda s: s.read("notes"), "memory_ls.core.storage.fsio.open", errno.EACCES),
    ),
]

ERROR_CLASSES = {
    "invalid-name": InvalidName,
    "not-found": NotFound,
    "exists": Exists,
    "read-only": ReadOnly,
    "too-large": TooLarge,
    "no-match": NoMatch,
    "ambiguous-match": AmbiguousMatch,
    "outside-store": OutsideStore,
    "invalid-arguments": InvalidArguments,
    "ignored": Ignored,
    "io-error": IoError,
    "version-conflict": VersionConflict,
    "invalid-encoding": InvalidEncoding,
    "invalid-frontmatter": InvalidFrontmatter,
    "possible-secret": PossibleSecret,
    "merge-conflict": MergeConflict,
}


def _populated(ws: Workspace, *, global_enabled: bool) -> Store:
    """A store with something to refuse on: every kind of folder, a few memories and
    Serena's patterns (read before the store is made, as a start reads them)."""
    ws.write(
        ws.root / ".serena" / "project.yml",
        "ignored_memory_patterns: ['secret_.*', 'global/hidden']\n"
        "read_only_memory_patterns: ['frozen.*']\n",
    )
    ws.write(ws.primary / "secret_plan.md", "secret\n")
    ws.write(ws.primary / "frozen.md", "frozen\n")
    ws.write(ws.global_dir / "hidden.md", "hidden\n")
    store = ws.store(
        ["team/feature", ("vendor/spec", True)],
        global_enabled=global_enabled,
        max_memory_bytes=1000,
    )
    ws.write(ws.primary / "notes.md", "---\ntags: [a]\n---\nnotes\nline one\nline two\n")
    ws.write(ws.root / "team" / "feature" / "FEATURE_auth.md", "auth [[notes]]\n")
    ws.write(ws.root / "vendor" / "spec" / "SPEC_api.md", "api\n")
    ws.write(ws.global_dir / "mine.md", "mine")
    ws.write(ws.global_dir / "theirs.md", "theirs")
    return store


CASES = [
    pytest.param(code, call, id=f"{code}-{label}")
    for code, calls in REFUSALS.items()
    for label, call in calls
]


@pytest.mark.parametrize(("code", "call"), CASES)
def test_refusal_has_its_code_and_changes_nothing(ws: Workspace, code: str, call: Call) -> None:
    store = _populated(ws, global_enabled=code != "outside-store")
    with ws.refuses(code) as info:
        call(store)
    assert isinstance(info.value, ERROR_CLASSES[code])
    assert isinstance(info.value, MemoryStoreError)


def test_every_error_code_is_covered() -> None:
    assert set(REFUSALS) == set(ERROR_CODES) == set(ERROR_CLASSES)
    assert len(ERROR_CODES) == 16
    for code, cls in ERROR_CLASSES.items():
        assert cls.code == code
        assert issubclass(cls, MemoryStoreError)


def test_messages_say_what_went_wrong(ws: Workspace) -> None:
    store = _populated(ws, global_enabled=True)
    with pytest.raises(MemoryStoreError, match="missing"):
        store.read("missing")
    with pytest.raises(MemoryStoreError, match=r"2000 bytes.*1000"):
        store.save("big", "x" * 2000)
    with pytest.raises(MemoryStoreError, match="read-only"):
        store.save("SPEC_new", "x")
    with pytest.raises(MemoryStoreError, match="allowMultiple"):
        store.edit("notes", needle="line", replacement="x")
