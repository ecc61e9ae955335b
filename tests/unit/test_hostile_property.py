"""Property: whatever the names and operations, no write lands outside the configured folders.

Each example gets a fresh workspace with bait around it (files next to and above the
folders, a read-only folder, symlinks from the primary folder to a file and a folder
outside) and runs a few operations with generated names. Afterwards every path outside
the writable configured folders must be exactly as before, and every failure must be a
typed store error (an OSError or a crash would mean a name reached the file system
unchecked).
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_helpers import Workspace, changed_paths, snapshot_tree

from memory_ls.config import FolderSetting, Settings
from memory_ls.core import MemoryStoreError, Store, resolve_store_config
from memory_ls.core.rules.errors import IoError

TOKENS = [
    "a",
    "Z",
    "x1",
    "_",
    "-",
    " ",
    ".",
    "..",
    "/",
    "\\",
    "%",
    "%2e",
    "%2f",
    "%5c",
    ":",
    "~",
    "*",
    "?",
    "|",
    "\x00",
    "\n",
    "\t",
    "\x1b",
    "\u202e",
    "é",
    "日",
    "𝐀",
    ".md",
    "mem:",
    "global/",
    "FEATURE_",
    "SPEC_",
    "CON",
    "linkfile",
    "linkdir/",
    "feature/",
    "victim",
    "../",
    "..\\",
    "C:\\",
    "/etc/",
]

names = st.one_of(
    st.lists(st.sampled_from(TOKENS), min_size=0, max_size=8).map("".join),
    st.text(max_size=24),
    st.text(alphabet=st.sampled_from("./\\%:aA_ \x00\n"), max_size=16),
    st.sampled_from(["victim", "FEATURE_x", "SPEC_x", "global/victim", "linkdir/x", "topic/x"]),
)
contents = st.sampled_from(["x", "", "---\ntags: [t]\n---\nbody [[victim]]\n", "y" * 3000])
operations = st.tuples(
    st.sampled_from(["save", "save-global", "save-project", "edit", "regex", "delete", "move"]),
    names,
    names,
    contents,
)

_counter = itertools.count()


def _setup(base: Path) -> tuple[Store, list[Path]]:
    root = base / "ws"
    primary = root / ".serena" / "memories"
    feature = primary / "feature"  # nested in the primary folder
    spec = root / "team" / "spec"  # read-only
    global_dir = base / "home" / "global"
    outside = base / "outside"
    for folder in (feature, spec, global_dir, outside / "dir"):
        folder.mkdir(parents=True)
    files = {
        primary / "victim.md": "victim [[FEATURE_x]]\n",
        feature / "FEATURE_x.md": "feature\n",
        spec / "SPEC_x.md": "spec\n",
        global_dir / "victim.md": "global victim\n",
        outside / "target.md": "outside\n",
        outside / "dir" / "inner.md": "outside inner\n",
        root / "x.md": "bait\n",
        root / ".serena" / "x.md": "bait\n",
        base / "x.md": "bait\n",
    }
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    os.symlink(outside / "target.md", primary / "linkfile.md")
    os.symlink(outside / "dir", primary / "linkdir")
    config = resolve_store_config(
        Settings(
            additional_folders=(
                FolderSetting(str(feature)),
                FolderSetting(str(spec), read_only=True),
            ),
            global_folder=str(global_dir),
            max_memory_bytes=2048,
        ),
        str(root),
        environ={},
    )
    return Store(config), [primary, feature, global_dir]


def _run(store: Store, operation: str, name: str, other: str, content: str) -> None:
    if operation == "save":
        store.save(name, content)
    elif operation == "save-global":
        store.save(name, content, tags=["t"], scope="global")
    elif operation == "save-project":
        store.save(name, content, scope="project")
    elif operation == "edit":
        store.edit(name, needle="victim", replacement=other, allow_multiple=True)
    elif operation == "regex":
        store.edit(name, needle=".+", replacement=other, mode="regex", allow_multiple=True)
    elif operation == "delete":
        store.delete(name)
    else:
        store.move(name, other)


@settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(operations, min_size=1, max_size=4))
def test_no_write_lands_outside_the_configured_folders(
    ws: Workspace, steps: list[tuple[str, str, str, str]]
) -> None:
    base = ws.tmp / "runs" / str(next(_counter))
    store, writable = _setup(base)
    # The writable folders may change; the links in them may be replaced by regular files.
    writable_rel = [str(p.relative_to(base)) for p in writable]

    def outside_state() -> dict[str, tuple[object, ...]]:
        return {
            key: value
            for key, value in snapshot_tree(base).items()
            if not any(key == w or key.startswith(w + os.sep) for w in writable_rel)
        }

    before = outside_state()
    for operation, name, other, content in steps:
        try:
            _run(store, operation, name, other, content)
        except IoError:
            raise  # the file system refused: a name reached it unchecked
        except MemoryStoreError:
            pass
    after = outside_state()
    assert after == before, f"changed outside the store: {sorted(changed_paths(before, after))}"
    # The lock files live in the user's cache, never next to the memories.
    assert all(p.suffix != ".lock" for p in base.rglob("*"))
    # Everything the store wrote inside its folders is a memory file or a topic folder.
    for folder in writable:
        for path in folder.rglob("*"):
            assert path.is_symlink() or path.is_dir() or path.suffix == ".md", path
