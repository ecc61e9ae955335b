"""Move without a link index: the full-text index names the memories that may refer to the
one moved (SearchIndex.reference_sources), as the disk has them when the move starts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from store_helpers import Workspace

from memory_ls.core import Store
from memory_ls.core.services.backlinks import serena_key
from memory_ls.core.services.search import SearchIndex, database, schema

PLAIN = 30

# Every form a move rewrites: links outside code, and each `mem:OLD` Serena's rename
# rewrites (frontmatter and fenced code too, and before a letter no name holds).
REFERRER = """---
see: mem:OLD
---
Plain [[OLD]], labelled [[OLD|the old one]], spaced [[ OLD.md ]] and `mem:OLD`.
Serena's too: mem:OLDé. Not these: [[OLD_more]] mem:OLDER [[other]] OLD.
```
[[OLD]] in code stays, mem:OLD does not
```
"""
EXPECTED = """---
see: mem:NEW_name
---
Plain [[NEW_name]], labelled [[NEW_name|the old one]], spaced [[ NEW_name ]] and `mem:NEW_name`.
Serena's too: mem:NEW_nameé. Not these: [[OLD_more]] mem:OLDER [[other]] OLD.
```
[[OLD]] in code stays, mem:NEW_name does not
```
"""
PER_REFERRER = 7


def _touch_later(path: Path, text: str) -> None:
    """Rewrite a file in place, as an editor does: same size, a later time."""
    before = path.stat().st_mtime_ns
    assert len(text.encode()) == path.stat().st_size
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))


def _indexed(ws: Workspace, **values: object) -> tuple[Store, SearchIndex, list[Path]]:
    """A store whose full-text index is up to date with OLD and memories not naming it."""
    scanning = ws.store(["team/feature"], **values)
    ws.write(ws.primary / "OLD.md", "the memory itself, [[OLD]] self-link\n")
    plain = [
        ws.write(ws.primary / f"plain_{n:02d}.md", f"nothing [[about]] it {n:02d}\n")
        for n in range(PLAIN)
    ]
    index = SearchIndex(scanning.config, live=False)
    assert index.sync()
    return Store(scanning.config, index), index, plain


def test_references_written_behind_the_index_s_back_are_rewritten(ws: Workspace) -> None:
    store, index, plain = _indexed(ws)
    # Written after the index last saw the disk, and nobody told it.
    referrers = [
        ws.write(ws.primary / "later.md", REFERRER),
        ws.write(ws.primary / "topic" / "deep.md", REFERRER),
        ws.write(ws.root / "team" / "feature" / "FEATURE_later.md", REFERRER),
        ws.write(ws.global_dir / "global_later.md", REFERRER),
    ]
    edited = plain[3]  # edited in place: same size, only its time tells
    _touch_later(edited, "nothing [[OLD]]ut it 03\n")

    # The index names them (and the memory's self-link), not the memories that do not.
    sources = index.reference_sources(["OLD", serena_key("OLD")])
    assert sources is not None
    assert set(sources) == {str(p) for p in [*referrers, edited, ws.primary / "OLD.md"]}

    result = store.move("OLD", "NEW_name")
    assert result["updatedReferences"] == PER_REFERRER * len(referrers) + 2
    for path in referrers:
        assert path.read_text() == EXPECTED, path
    assert edited.read_text() == "nothing [[NEW_name]]ut it 03\n"
    assert Path(result["path"]).read_text() == "the memory itself, [[NEW_name]] self-link\n"
    assert all(p.read_text().startswith("nothing [[about]]") for p in plain if p != edited)


def test_a_referrer_changed_since_an_earlier_move_is_read_as_it_is_now(ws: Workspace) -> None:
    store, _index, plain = _indexed(ws)
    assert store.move("OLD", "MID_name")["updatedReferences"] == 1
    # The index last saw `plain_05` without a reference; now it has one to MID_name.
    _touch_later(plain[5], "nothing [[MID_name]] 05\n")
    later = ws.write(ws.primary / "later.md", "see mem:MID_name\n")
    assert store.move("MID_name", "NEW_name")["updatedReferences"] == 3
    assert plain[5].read_text() == "nothing [[NEW_name]] 05\n"
    assert later.read_text() == "see mem:NEW_name\n"


def test_references_the_index_has_no_words_for_are_found_all_the_same(ws: Workspace) -> None:
    # A body too large to index (4 x maxMemoryBytes), and `mem:` in frontmatter only.
    store, index, _plain = _indexed(ws, max_memory_bytes=1000)
    big = ws.write(ws.primary / "big.md", "x " * 2500 + "\nsee [[OLD]]\n")
    front = ws.write(ws.primary / "front.md", "---\nsee: mem:OLD\n---\nbody\n")
    sources = index.reference_sources(["OLD", serena_key("OLD")])
    assert sources is not None and {str(big), str(front)} <= set(sources)
    assert store.move("OLD", "NEW_name")["updatedReferences"] == 3
    assert big.read_text().endswith("\nsee [[NEW_name]]\n")
    assert front.read_text() == "---\nsee: mem:NEW_name\n---\nbody\n"


def test_a_name_whose_words_the_tokenizers_may_cut_apart_reads_every_memory(
    ws: Workspace,
) -> None:
    store, index, _plain = _indexed(ws)
    ws.write(ws.primary / "café_notes.md", "about coffee\n")
    referrer = ws.write(ws.primary / "later.md", "see [[café_notes]] and mem:café_notes\n")
    assert index.reference_sources(["café_notes", serena_key("café_notes")]) is None
    assert store.move("café_notes", "NEW_name")["updatedReferences"] == 2
    assert referrer.read_text() == "see [[NEW_name]] and mem:NEW_name\n"


def test_a_live_index_leaves_it_to_its_owner(ws: Workspace) -> None:
    store, _index, _plain = _indexed(ws)
    live = SearchIndex(store.config, live=True)
    assert live.sync(store.scan())
    assert live.reference_sources(["OLD"]) is None


def test_without_fts5_a_move_reads_every_memory(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(database, "fts5_available", lambda: False)
    scanning = ws.store()
    ws.write(ws.primary / "OLD.md", "the memory\n")
    referrer = ws.write(ws.primary / "refs.md", "[[OLD]] and mem:OLD\n")
    index = SearchIndex(scanning.config, live=False)
    assert index.reference_sources(["OLD"]) is None
    assert Store(scanning.config, index).move("OLD", "NEW_name")["updatedReferences"] == 2
    assert referrer.read_text() == "[[NEW_name]] and mem:NEW_name\n"


def test_a_sync_that_indexed_changes_leaves_a_manifest_that_needs_no_rows(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, index, plain = _indexed(ws)
    _touch_later(plain[7], "nothing [[OLD]]ut it 07\n")
    ws.write(ws.primary / "later.md", "new\n")
    (ws.primary / "plain_08.md").unlink()
    assert index.sync()  # indexes the three changes, then writes the manifest

    def no_rows(self: schema.Listing) -> set[tuple[int, str, int, int]]:
        raise AssertionError("rows compared one by one")

    monkeypatch.setattr(schema.Listing, "rows", no_rows)
    sources = SearchIndex(store.config, live=False).reference_sources(["OLD"])
    assert sources is not None
    assert set(sources) == {str(plain[7]), str(ws.primary / "OLD.md")}
