"""The link index: each file's link keys, and which files the memory index names for a
name after any sequence of changes (issue 14)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygls.uris import from_fs_path
from test_index import fresh, make_config, write

from memory_ls.core.operations.navigation import LargeFileReferences, texts_with_references
from memory_ls.core.rules.references import find_references, serena_mem_references
from memory_ls.core.services.backlinks import SERENA_MARK, LinkIndex, link_keys, serena_key
from memory_ls.core.services.index import MemoryIndex
from memory_ls.core.services.index import facts as index_facts
from memory_ls.lsp.targets import file_uri


def test_link_keys_are_reference_targets_and_serena_mentions() -> None:
    text = (
        "---\nsee: '[[in_frontmatter]]'\n---\n"
        "[[plain]] [[global/tips|mine]] `mem:FEATURE_x` [[plain]] `[[in_code_span]]`\n"
        "```\n[[in_fence]] mem:fenced.name\n```\n"
        "xmem:glued mem: (nothing)\n"
    )
    keys = link_keys(text)
    assert [k for k in keys if not k.startswith(SERENA_MARK)] == [
        "plain",
        "global/tips",
        "FEATURE_x",
    ]
    # Serena's rename rewrites a `mem:` anywhere, fenced code included, but not one glued
    # to a name before it; a name's run of name characters is its key.
    assert {k for k in keys if k.startswith(SERENA_MARK)} == {
        SERENA_MARK + "FEATURE_x",
        SERENA_MARK + "fenced",
        SERENA_MARK,
    }
    assert serena_key("fenced.name") == SERENA_MARK + "fenced"
    assert link_keys("# nothing\n") == ()


_NAME = st.text(alphabet="ab._/é- ", min_size=1, max_size=6).map(str.strip).filter(bool)
_PIECE = st.one_of(
    _NAME.map(lambda n: f"mem:{n}"),
    _NAME.map(lambda n: f"`mem:{n}`"),
    _NAME.map(lambda n: f"[[{n}]]"),
    st.sampled_from(["\n", "```\n", " ", "x", "/", "`"]),
)


@settings(max_examples=300, deadline=None)
@given(name=_NAME, pieces=st.lists(_PIECE, max_size=12))
def test_a_mention_serenas_rename_rewrites_is_always_under_its_key(
    name: str, pieces: list[str]
) -> None:
    text = "".join(pieces)
    if serena_mem_references(text, name):
        assert serena_key(name) in link_keys(text)
    if any(ref.target == name for ref in find_references(text)):
        assert name in link_keys(text)


@settings(max_examples=300, deadline=None)
@given(needle=_NAME, pieces=st.lists(_PIECE, max_size=12))
def test_references_near_a_needle_are_those_on_its_lines(needle: str, pieces: list[str]) -> None:
    text = "".join(pieces)
    lines = text.split("\n")
    expected = [ref for ref in find_references(text) if needle in lines[ref.line]]
    assert find_references(text, needle) == expected


_NAMES = ["alpha", "beta", "FEATURE_x", "topic/deep"]
_ACTIONS = st.lists(
    st.tuples(
        st.sampled_from(["write", "delete", "rename", "learn"]),
        st.sampled_from(["primary", "spec", "global"]),
        st.sampled_from(_NAMES),
        st.lists(st.sampled_from([*_NAMES, "global/alpha", "missing"]), max_size=3),
    ),
    max_size=25,
)


def linking_files(index: MemoryIndex, target: str) -> set[str]:
    """The files on disk whose references name `target` (by reading every one)."""
    found = set()
    for memory in index.files():
        text = Path(memory.path).read_text(encoding="utf-8")
        if any(ref.target == target for ref in find_references(text)):
            found.add(memory.path)
    return found


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(actions=_ACTIONS)
def test_after_any_changes_the_index_names_every_file_that_links(
    tmp_path_factory: pytest.TempPathFactory, actions: list[tuple[str, str, str, list[str]]]
) -> None:
    tmp = tmp_path_factory.mktemp("links")
    config = make_config(tmp)
    folders = {
        "primary": Path(config.primary.path),
        "spec": tmp / "ws" / "shared" / "spec",
        "global": tmp / "global",
    }
    index = fresh(config)
    index.warm()
    for step, (action, where, name, links) in enumerate(actions):
        path = folders[where] / f"{name}.md"
        if action == "write":
            body = " ".join(f"[[{link}]]" for link in links)
            # A different size each time: a rewrite within the same clock tick is new.
            write(path, f"# {name}\n{body}\n{'.' * step}\n")
            index.update_path(str(path))
        elif action == "delete" and path.exists():
            path.unlink()
            index.update_path(str(path))
        elif action == "rename" and path.exists():
            target = folders[where] / f"renamed_{name.replace('/', '_')}.md"
            os.replace(path, target)
            index.update_paths([str(path), str(target)])
        elif action == "learn":
            index.learn_links()
    for target in [*_NAMES, "global/alpha", "missing"]:
        truth = linking_files(index, target)
        # Before anything is read again: every linking file is a candidate.
        assert truth <= set(index.link_candidates([target]))
    assert index.learn_links()
    for target in [*_NAMES, "global/alpha", "missing"]:
        truth = linking_files(index, target)
        assert set(index.link_candidates([target])) == truth
        assert index.backlink_count(target) == len(truth)


def test_links_come_from_the_facts_cache_without_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = make_config(tmp_path)
    primary = Path(config.primary.path)
    linker = write(primary / "linker.md", "[[alpha]] `mem:beta`\n")
    write(primary / "alpha.md")
    old = os.stat(linker).st_mtime_ns - 10**10  # older than the racy window: cacheable
    for path in primary.glob("*.md"):
        os.utime(path, ns=(old, old))
    cache = str(tmp_path / "facts.jsonl")
    first = fresh(config)
    first.warm(cache_path=cache)
    assert first.link_candidates(["alpha"]) == [str(linker)]

    def no_reads(path: str) -> object:
        raise AssertionError(f"{path} was read")

    monkeypatch.setattr(index_facts, "_read_file", no_reads)
    second = fresh(config)
    second.warm(cache_path=cache)
    assert second.link_candidates(["alpha"]) == [str(linker)]
    assert second.link_candidates([serena_key("beta")]) == [str(linker)]
    assert second.backlink_count("alpha") == 1


def test_large_files_are_parsed_once_while_unchanged(tmp_path: Path) -> None:
    cache = LargeFileReferences(min_bytes=100)
    note = write(tmp_path / "long.md", "[[alpha]] [[beta]]\n" + "filler\n" * 40)
    paths = [str(note)]

    def lines_of(needle: str) -> list[int]:
        found = texts_with_references(paths, lambda ref: True, needle, large=cache)
        return [ref.line for _path, _text, refs in found for ref in refs]

    assert lines_of("alpha") == [0]
    text, by_name = cache.lookup(str(note)) or ("", {})
    assert cache.lookup(str(note)) == (text, by_name)  # the same objects: not read again
    assert cache.lines_of(str(note), text) == text.split("\n")
    write(note, "moved\n[[alpha]]\n" + "filler\n" * 40)
    assert lines_of("alpha") == [1]
    assert lines_of("beta") == []
    small = write(tmp_path / "small.md", "[[alpha]]\n")
    assert cache.lookup(str(small)) is None


@pytest.mark.parametrize(
    "path", ["/tmp/a b/c#d?.md", "/tmp/é/ü%20.md", "/x/[y]/{z}.md", "/x/;,=&+$@.md"]
)
def test_file_uris_are_what_pygls_makes(path: str) -> None:
    assert file_uri(path) == from_fs_path(path)


def test_the_link_index_keeps_one_holder_and_many_alike() -> None:
    links = LinkIndex()
    links.add("/a.md", ["x", "y"])
    assert (links.sources("x"), links.count("x")) == (["/a.md"], 1)
    links.add("/b.md", ["x"])
    links.add("/c.md", ["x"])
    assert (sorted(links.sources("x")), links.count("x")) == (["/a.md", "/b.md", "/c.md"], 3)
    links.remove("/b.md", ["x"])
    links.remove("/c.md", ["x"])
    assert (links.sources("x"), links.count("x")) == (["/a.md"], 1)
    links.remove("/elsewhere.md", ["x", "y", "z"])  # not a holder: nothing changes
    assert links.sources("y") == ["/a.md"]
    links.remove("/a.md", ["x", "y"])
    assert (links.sources("x"), links.count("y")) == ([], 0)
