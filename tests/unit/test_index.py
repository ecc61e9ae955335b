"""The server's in-memory index: per-path updates always agree with a fresh scan."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_ls.config import FolderSetting, Settings
from memory_ls.core.rules.document import parse_document
from memory_ls.core.services.index import MemoryIndex, facts_of_text, make_preview
from memory_ls.core.services.index import names as names_index
from memory_ls.core.storage.folders import StoreConfig, resolve_store_config
from memory_ls.core.store import Store


def make_config(tmp: Path) -> StoreConfig:
    """Primary, an additional folder nested inside it, one outside, and a global folder."""
    root = tmp / "ws"
    for folder in (".serena/memories/feature", "shared/spec", "../global"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    settings = Settings(
        additional_folders=(
            FolderSetting(".serena/memories/feature"),
            FolderSetting("shared/spec"),
        ),
        global_folder=str(tmp / "global"),
    )
    # Serena's home (its serena_config.yml patterns) inside tmp, never the real one.
    return resolve_store_config(settings, str(root), environ={"SERENA_HOME": str(tmp / "serena")})


def snapshot(index: MemoryIndex) -> tuple[list[tuple[str, str]], dict[str, str], list[str]]:
    """What the index knows: (name, path) of every file, winners, and the sorted names."""
    files = sorted((m.name, m.path) for m in index.files())
    winners = {e.memory.qualified: e.memory.path for e in index.entries()}
    return files, winners, list(index.names())


def fresh(config: StoreConfig) -> MemoryIndex:
    """An index built by a full scan."""
    index = MemoryIndex(config)
    index.scan()
    return index


def write(path: Path, text: str = "# x\n") -> Path:
    """Write a file, creating its parents."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_scan_agrees_with_the_store(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    primary = Path(config.primary.path)
    write(primary / "note.md")
    write(primary / "topic" / "deep.md")
    write(primary / "feature" / "FEATURE_x.md")  # belongs to the nested additional folder
    write(primary / ".hidden" / "listed.md")  # Serena lists hidden folders too
    write(primary / "bad:draft.md")  # an invalid name: indexed, but not offered as a name
    write(primary / "-draft.md")  # a name Serena accepts
    write(tmp_path / "global" / "note.md")  # global/note: another memory, not shadowed
    write(tmp_path / "ws" / "shared" / "spec" / "note.md")  # shadowed by the project note
    index = fresh(config)
    store = Store(config)
    assert sorted(m.path for m in index.files()) == sorted(m.path for m in store.scan())
    assert list(index.names()) == [
        "-draft",
        ".hidden/listed",
        "FEATURE_x",
        "global/note",
        "note",
        "topic/deep",
    ]
    listed = {m["name"]: m for m in store.list_memories()["memories"]}
    assert sorted(listed) == [
        "-draft",
        ".hidden/listed",
        "FEATURE_x",
        "bad:draft",
        "global/note",
        "note",
        "topic/deep",
    ]
    for entry in index.entries():
        assert listed[entry.memory.qualified]["path"] == entry.memory.path
        assert listed[entry.memory.qualified]["shadows"] == [m.path for m in entry.shadows]
    feature = index.lookup("FEATURE_x")
    assert feature is not None and feature.memory.folder.path.endswith("feature")
    global_note = index.lookup("global/note")
    assert global_note is not None and global_note.shadows == ()
    assert global_note.memory.path == str(tmp_path / "global" / "note.md")
    spec_note = str(tmp_path / "ws" / "shared" / "spec" / "note.md")
    shadowed = index.shadowed_by()
    assert list(shadowed) == [spec_note]
    assert shadowed[spec_note].path == str(primary / "note.md")
    names = index.name_index()
    assert names.has("note", is_global=True) and names.has("topic/deep", is_global=False)
    assert not names.has("topic/deep", is_global=True)
    assert names.has("note", is_global=False)
    assert "global/note" in names.names() and "note" in names.names()


def test_updates_follow_files_and_folders(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    primary = Path(config.primary.path)
    index = fresh(config)

    added = index.update_path(str(write(primary / "a.md")))
    assert added.added == ("a",) and added.names_changed
    assert index.update_path(str(primary / "a.md")).changed is False  # seen twice: no change
    write(primary / "a.md", "---\ntags: [t]\n---\n# longer body\n")
    modified = index.update_path(str(primary / "a.md"))
    assert modified.modified == ("a",) and not modified.names_changed

    write(primary / "topic" / "b.md")
    write(primary / "topic" / "c.md")
    assert sorted(index.update_path(str(primary / "topic")).added) == ["topic/b", "topic/c"]
    shutil.rmtree(primary / "topic")
    assert sorted(index.update_path(str(primary / "topic")).removed) == ["topic/b", "topic/c"]
    write(primary / "deep" / "er" / "d.md")
    assert index.update_path(str(primary / "deep" / "er" / "d.md")).added == ("deep/er/d",)
    shutil.rmtree(primary / "deep")  # the event names the outer folder only
    assert index.update_path(str(primary / "deep")).removed == ("deep/er/d",)
    assert index.update_path(str(primary / "never_indexed")).changed is False

    (primary / "a.md").unlink()
    assert index.update_path(str(primary / "a.md")).removed == ("a",)
    outside = write(tmp_path / "elsewhere" / "x.md")
    assert index.update_path(str(outside)).changed is False
    temporary = write(primary / ".a.md.123.memory-ls-tmp")
    assert index.update_path(str(temporary)).changed is False
    assert snapshot(index) == snapshot(fresh(config))


def test_metadata_is_cached_per_file_version(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    path = write(Path(config.primary.path) / "m.md", "---\ntags: [one]\n---\n# Body\n")
    index = fresh(config)
    (memory,) = index.files()
    assert index.cached_metadata(memory) is None
    assert index.metadata(memory).tags == ("one",)
    assert index.cached_metadata(memory) is not None
    write(path, "---\ntags: [two, three]\n---\n# Changed body, longer\n")
    assert index.metadata(memory).tags == ("one",)  # no event yet: the known version
    index.update_path(str(path))
    assert index.cached_metadata(memory) is None
    assert index.metadata(memory).tags == ("two", "three")
    assert index.tag_counts() == {"two": 1, "three": 1}
    assert index.warm() == 0


def test_prefix_lookup_ignores_case_and_prefers_exact_case(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    primary = Path(config.primary.path)
    for name in ("Alpha", "alpha_two", "ALPHABET", "beta"):
        write(primary / f"{name}.md")
    write(tmp_path / "global" / "alpine.md")
    index = fresh(config)
    assert index.names_with_prefix("alp") == ["alpha_two", "Alpha", "ALPHABET"]
    assert index.names_with_prefix("global/alp") == ["global/alpine"]
    assert index.names_with_prefix("GLOBAL/ALP", "global") == ["global/alpine"]
    assert index.names_with_prefix("alp", "global") == []  # global names start global/
    assert index.names_with_prefix("z") == []
    assert list(index.names("global")) == ["global/alpine"]


def test_memory_for_a_document_not_yet_on_disk(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    index = fresh(config)
    memory = index.memory_for(os.path.join(config.primary.path, "new", "one.md"))
    assert memory is not None and memory.name == "new/one"
    assert index.memory_for(str(tmp_path / "ws" / "README.md")) is None


def test_concurrent_updates_and_reads(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    primary = Path(config.primary.path)
    index = fresh(config)
    errors: list[BaseException] = []

    def writer(worker: int) -> None:
        try:
            for number in range(60):
                path = write(primary / f"w{worker}_{number}.md")
                index.update_path(str(path))
                if number % 3 == 0:
                    path.unlink()
                    index.update_path(str(path))
        except BaseException as exc:
            errors.append(exc)

    def reader() -> None:
        try:
            for _ in range(200):
                for entry in index.entries():
                    index.metadata(entry.memory)
                index.names_with_prefix("w1")
                index.name_index()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    threads += [threading.Thread(target=reader) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert snapshot(index) == snapshot(fresh(config))


_NAMES = st.sampled_from(["a", "b", "topic/c", "topic/d", "FEATURE_e", "SPEC_f"])
_WHERE = st.sampled_from(["primary", "feature", "spec", "global"])
_ACTIONS = st.lists(
    st.tuples(st.sampled_from(["write", "delete", "rmtopic", "rename"]), _WHERE, _NAMES),
    max_size=25,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(actions=_ACTIONS)
def test_any_sequence_of_changes_matches_a_fresh_scan(
    tmp_path_factory: pytest.TempPathFactory, actions: list[tuple[str, str, str]]
) -> None:
    tmp = tmp_path_factory.mktemp("random")
    config = make_config(tmp)
    folders = {
        "primary": Path(config.primary.path),
        "feature": Path(config.primary.path) / "feature",
        "spec": tmp / "ws" / "shared" / "spec",
        "global": tmp / "global",
    }
    index = fresh(config)
    for action, where, name in actions:
        folder = folders[where]
        path = folder / f"{name}.md"
        if action == "write":
            write(path, f"# {name} {len(actions)}\n")
            index.update_path(str(path))
        elif action == "delete" and path.exists():
            path.unlink()
            index.update_path(str(path))
        elif action == "rmtopic" and (folder / "topic").exists():
            shutil.rmtree(folder / "topic")
            index.update_path(str(folder / "topic"))
        elif action == "rename" and path.exists():
            target = folder / f"renamed_{name.replace('/', '_')}.md"
            os.replace(path, target)
            index.update_paths([str(path), str(target)])
    assert snapshot(index) == snapshot(fresh(config))


def test_previews_are_cut_to_size() -> None:
    assert make_preview("\n\n# Title\nline\n") == "# Title\nline"
    long = "\n".join(f"line {n}" for n in range(50))
    assert make_preview(long).endswith("line 19\n\n…")
    assert len(make_preview("x" * 5000)) < 1600


def _expected_prefix(names: list[str], typed: str) -> list[str]:
    """Prefix matches as the index ranks them: exact case first, each kind sorted."""
    matches = sorted(
        (n for n in names if n.casefold().startswith(typed.casefold())),
        key=lambda n: (n.casefold(), n),
    )
    return sorted(matches, key=lambda n: not n.startswith(typed))


def _in_order(typed: str, name: str) -> bool:
    letters = iter(name.casefold())
    return all(letter in letters for letter in typed.casefold())


_WORDS = st.sampled_from(["a", "A", "b", "B", "ab", "Ab", "x_", "log", "LOG", "in", "flow", "_"])
_NAME_SETS = st.lists(st.lists(_WORDS, min_size=1, max_size=4).map("".join), max_size=40)


@settings(max_examples=150, deadline=None)
@given(
    first=_NAME_SETS,
    later=_NAME_SETS,
    gone=st.lists(st.integers(0, 39), max_size=10),
    typed=st.lists(_WORDS, max_size=3).map("".join),
    limit=st.integers(1, 12),
)
def test_completion_lookups_agree_with_a_brute_force_search(
    first: list[str], later: list[str], gone: list[int], typed: str, limit: int
) -> None:
    view = names_index.SortedNames(sorted((n.casefold(), n) for n in set(first)))
    view.fuzzy("zz", 1, set())  # the fuzzy text is built now; later changes are its delta
    for name in later:
        view.add(name)
    names = sorted(set(first) | set(later))
    for at in gone:
        if at < len(names):
            view.discard(names[at])
    names = [n for i, n in enumerate(names) if i not in gone]
    assert view.names == sorted(names, key=lambda n: (n.casefold(), n))
    expected = _expected_prefix(names, typed)
    assert view.with_prefix(typed, limit) == (expected[:limit], len(expected))
    if len(typed) < 2:
        return
    fuzzy = view.fuzzy(typed, limit, set())
    assert len(fuzzy) == len(set(fuzzy)) <= limit and set(fuzzy) <= set(names)
    holding = {n for n in names if typed.casefold() in n.casefold()}
    # Names holding the text come first; the letters-in-order and typo ones after them.
    if len(holding) >= limit:
        assert set(fuzzy) <= holding and len(fuzzy) == limit
    else:
        assert set(fuzzy[: len(holding)]) == holding
    in_order = [n for n in names if _in_order(typed, n)]
    if len(in_order) <= min(limit, names_index.FUZZY_WINDOW_NAMES):
        assert set(in_order) <= set(fuzzy)


def test_completion_offers_prefixes_then_inner_words_letters_in_order_and_typos(
    tmp_path: Path,
) -> None:
    config = make_config(tmp_path)
    primary = Path(config.primary.path)
    for name in ("auth/login_flow", "login_notes", "Login_old", "style_guide", "deploy_steps"):
        write(primary / f"{name}.md")
    index = fresh(config)
    assert index.complete_names("log", limit=10) == (
        ["login_notes", "Login_old", "auth/login_flow"],
        False,
    )
    assert index.complete_names("lgnflw", limit=10)[0] == ["auth/login_flow"]
    assert index.complete_names("stlye", limit=10)[0] == ["style_guide"]  # one typo
    assert index.complete_names("qqqzzz", limit=10) == ([], False)
    assert index.complete_names("", limit=2) == (["auth/login_flow", "deploy_steps"], True)
    assert index.names_with_prefix("lo", limit=1) == ["login_notes"]


def test_facts_are_cached_on_disk_by_path_size_and_time(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    primary = Path(config.primary.path)
    write(primary / "kept.md", "---\ntags: [one]\n---\n# Kept\n")
    changed = write(primary / "changed.md", "---\ntags: [two]\n---\n# Changed\n")
    old = time.time() - 60  # not "racy": older than a modification-time tick could hide
    for path in primary.glob("*.md"):
        os.utime(path, (old, old))
    cache = tmp_path / "cache" / "facts.jsonl"
    index = fresh(config)
    assert index.warm(cache_path=str(cache)) == 2
    lines = cache.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3  # the version, then one line per file
    # A cached fact is used as long as the file keeps its size and time: proven by
    # planting a tag in the cache that the file does not have.
    cache.write_text(cache.read_text(encoding="utf-8").replace('"one"', '"planted"'))
    write(changed, "---\ntags: [three, four]\n---\n# Changed, and longer\n")
    again = fresh(config)
    again.warm(cache_path=str(cache))
    assert again.tag_counts() == {"planted": 1, "three": 1, "four": 1}
    # A file written just now is not cached: its time could hide the next write.
    assert all("changed.md" not in line for line in cache.read_text().splitlines())
    cache.write_text("not json\n")
    broken = fresh(config)
    broken.warm(cache_path=str(cache))  # an unreadable cache is ignored
    assert broken.tag_counts() == {"one": 1, "three": 1, "four": 1}


def test_facts_learnt_from_another_process_are_kept_and_cached(tmp_path: Path) -> None:
    """The indexing worker's facts (core/services/search/worker.py) count as the file's own, and the
    cache written after them holds them: the next start reads no file again."""
    config = make_config(tmp_path)
    primary = Path(config.primary.path)
    paths = [
        write(primary / "tagged.md", "---\ntags: [one]\n---\n# Tagged\n[[other]]\n"),
        write(primary / "other.md", "# Other\n"),
    ]
    old = time.time() - 60
    for path in paths:
        os.utime(path, (old, old))
    cache = tmp_path / "cache" / "facts.jsonl"
    index = fresh(config)
    rows = []
    for path in paths:
        text = path.read_text()
        info = path.stat()
        facts = facts_of_text(text, parse_document(text))
        # What another process read: a planted tag shows where the facts came from.
        rows.append((str(path), info.st_mtime_ns, info.st_size, (("planted",), *facts[1:])))
    # A row for a file that changed since it was read is not taken.
    rows.append((str(paths[1]), 1, 1, (("stale",), None, 1, ())))
    index.learn_facts(rows)
    assert index.warm(cache_path=str(cache)) == 0  # nothing left to read
    assert index.tag_counts() == {"planted": 2}
    assert cache.is_file()
    again = fresh(config)
    again.warm(cache_path=str(cache))
    assert again.tag_counts() == {"planted": 2}


def test_reading_a_folder_again_catches_changes_whose_events_were_lost(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    primary = Path(config.primary.path)
    for number in range(30):
        write(primary / f"n{number:02d}.md")
    index = fresh(config)
    index.warm()  # every file's stamp known, as after the first indexing
    # Changes nobody reported (the kernel's event queue overflowed in a burst).
    for number in range(0, 30, 3):
        (primary / f"n{number:02d}.md").unlink()
    write(primary / "late.md")
    write(primary / "n01.md", "# rewritten, and longer than before\n")
    update = index.update_path(str(primary))
    assert update.added == ("late",)
    assert sorted(update.removed) == [f"n{n:02d}" for n in range(0, 30, 3)]
    assert update.modified == ("n01",)
    assert snapshot(index) == snapshot(fresh(config))


def test_reading_a_parent_of_folders_again_reads_the_folders_in_it(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    shared = tmp_path / "ws" / "shared"
    write(shared / "spec" / "SPEC_a.md")
    write(shared / "notes.md")  # beside the folders, in no folder: not a memory
    index = fresh(config)
    assert "SPEC_a" in index.names()
    # A parent of folders is watched while a folder in it is missing; reading it again
    # (after a burst of events there) must not lose the memories of the folders inside.
    write(shared / "spec" / "SPEC_b.md")
    update = index.update_path(str(shared))
    assert update.added == ("SPEC_b",) and update.removed == ()
    assert snapshot(index) == snapshot(fresh(config))
