"""Move: renames, re-routes, rewrites every reference form in every folder (SPEC 2.6, 2.7)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from store_helpers import Workspace

from memory_ls.core import Store
from memory_ls.core.rules.references import find_references
from memory_ls.core.services.backlinks import serena_key
from memory_ls.core.services.index import MemoryIndex

REFERRER = """---
tags: [links]
note: "[[OLD]] in frontmatter is not a link"
see: mem:OLD
updated_at: 2020-01-02T03:04:05Z
---
# Links
Plain [[OLD]] and labelled [[OLD|the old one]] and spaced [[ OLD ]].
Serena style `mem:OLD` and `mem:OLD.md`, bare mem:OLD and (mem:OLD).
Not these: [[OLD_more]] `mem:OLDER` [[other]] OLD [OLD] `OLD` mem:OLD/sub mem:OLD-2 xmem:OLD.

```
[[OLD]] in a fenced block stays
`mem:OLD`
```

~~~markdown
[[OLD|fenced tilde]]
~~~
After the fence [[OLD]].
"""

# `[[...]]` links outside code, and every `mem:OLD` Serena's rename rewrites (frontmatter
# and fenced code included, `.md` after it kept); nothing else of the file changes.
EXPECTED = """---
tags: [links]
note: "[[OLD]] in frontmatter is not a link"
see: mem:NEW_name
updated_at: 2020-01-02T03:04:05Z
---
# Links
Plain [[NEW_name]] and labelled [[NEW_name|the old one]] and spaced [[ NEW_name ]].
Serena style `mem:NEW_name` and `mem:NEW_name.md`, bare mem:NEW_name and (mem:NEW_name).
Not these: [[OLD_more]] `mem:OLDER` [[other]] OLD [OLD] `OLD` mem:OLD/sub mem:OLD-2 xmem:OLD.

```
[[OLD]] in a fenced block stays
`mem:NEW_name`
```

~~~markdown
[[OLD|fenced tilde]]
~~~
After the fence [[NEW_name]].
"""

REWRITTEN_PER_FILE = 10


def _world(ws: Workspace) -> tuple[Store, list[Path]]:
    store = ws.store(["team/feature", "docs/new", ("vendor/ro", True)])
    ws.write(ws.primary / "OLD.md", "the memory itself, [[OLD]] self-link\n")
    referrers = [
        ws.write(ws.primary / "refs.md", REFERRER),
        ws.write(ws.primary / "topic" / "refs.md", REFERRER),
        ws.write(ws.root / "team" / "feature" / "FEATURE_refs.md", REFERRER),
        ws.write(ws.global_dir / "global_refs.md", REFERRER),
    ]
    return store, referrers


def test_move_rewrites_all_reference_forms_everywhere(ws: Workspace) -> None:
    store, referrers = _world(ws)
    read_only = ws.write(ws.root / "vendor" / "ro" / "ro_refs.md", REFERRER)
    result = store.move("OLD", "NEW_name")
    assert result == {
        "name": "OLD",
        "newName": "NEW_name",
        "path": str(ws.root / "docs" / "new" / "NEW_name.md"),
        "updatedReferences": REWRITTEN_PER_FILE * len(referrers) + 1,
        # Every memory rewritten, by name (the moved one by its new name, for its self-link).
        "rewritten": ["FEATURE_refs", "NEW_name", "global/global_refs", "refs", "topic/refs"],
        "moreRewritten": 0,
    }
    for path in referrers:  # the global memory's [[OLD]] means the project OLD too
        assert path.read_text() == EXPECTED, path  # updated_at kept: not an update
    assert read_only.read_text() == REFERRER, "read-only folders are never written"
    moved = ws.root / "docs" / "new" / "NEW_name.md"
    assert moved.read_text() == "the memory itself, [[NEW_name]] self-link\n"
    assert not (ws.primary / "OLD.md").exists()
    with ws.refuses("not-found"):
        store.read("OLD")


def test_labels_survive_and_links_resolve_after_move(ws: Workspace) -> None:
    store, referrers = _world(ws)
    store.move("OLD", "NEW_name")
    refs = find_references(referrers[0].read_text())
    labels = [r.label for r in refs if r.name == "NEW_name" and r.form == "wiki"]
    assert labels == [None, "the old one", None, None]
    assert all(r.name != "OLD" for r in refs), "no live reference to the old name is left"


def test_move_reroutes_by_prefix(ws: Workspace) -> None:
    store = ws.store(["team/feature", "docs/spec"])
    store.save("FEATURE_x", "x [[FEATURE_x]]")
    assert (ws.root / "team" / "feature" / "FEATURE_x.md").exists()

    to_spec = store.move("FEATURE_x", "SPEC_x")
    assert to_spec["path"] == str(ws.root / "docs" / "spec" / "SPEC_x.md")
    assert not (ws.root / "team" / "feature" / "FEATURE_x.md").exists()

    to_primary = store.move("SPEC_x", "plain_x")
    assert to_primary["path"] == str(ws.primary / "plain_x.md")
    to_topic = store.move("plain_x", "area/x")
    assert to_topic["path"] == str(ws.primary / "area" / "x.md")
    to_global = store.move("area/x", "global/x")
    assert to_global["path"] == str(ws.global_dir / "x.md")
    # The self-link followed every move, spelled as the new name is.
    assert store.read("global/x")["content"] == "x [[global/x]]"
    assert [m["name"] for m in store.list_memories()["memories"]] == ["global/x"]


def test_move_to_a_taken_name_is_refused(ws: Workspace) -> None:
    store = ws.store(["team/feature"])
    store.save("a", "a [[b]]")
    store.save("b", "b")
    store.save("FEATURE_c", "c")
    store.save("global/g", "g")
    with ws.refuses("exists"):
        store.move("a", "b")
    with ws.refuses("exists"):
        store.move("a", "FEATURE_c")
    with ws.refuses("exists"):
        store.move("b", "global/g")
    with ws.refuses("exists"):
        store.move("a", "mem:a.md")
    # A file that is not a valid memory name still takes the spot: nothing is overwritten.
    ws.write(ws.primary / "target.md", "squatter")
    with ws.refuses("exists"):
        store.move("a", "target")


def test_move_of_a_global_memory_rewrites_global_references_only(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.global_dir / "g.md", "global g")
    ref = ws.write(
        ws.primary / "r.md", "[[global/g]] and [[g]] and `mem:global/g` [[global/g|label]] mem:g\n"
    )
    result = store.move("global/g", "global/h")
    assert result["name"] == "global/g" and result["newName"] == "global/h"
    assert result["path"] == str(ws.global_dir / "h.md")
    assert result["updatedReferences"] == 3
    # [[g]] and mem:g name a project memory g (none exists): they never meant global/g.
    assert ref.read_text() == (
        "[[global/h]] and [[g]] and `mem:global/h` [[global/h|label]] mem:g\n"
    )


def test_move_into_global_spells_references_global(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "h.md", "a project memory named h")
    ws.write(ws.primary / "g.md", "project g")
    ref = ws.write(ws.primary / "r.md", "[[g]] `mem:g` [[h]] `mem:h`\n")
    result = store.move("g", "global/h")
    assert result["newName"] == "global/h"
    assert ref.read_text() == "[[global/h]] `mem:global/h` [[h]] `mem:h`\n"
    assert store.read("h")["content"] == "a project memory named h"
    assert store.read("global/h")["content"] == "project g"


def test_move_out_of_global_spells_references_bare(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.global_dir / "g.md", "global g")
    ref = ws.write(ws.global_dir / "r.md", "[[global/g]] `mem:global/g` [[g]]\n")
    result = store.move("global/g", "p")
    assert result == {
        "name": "global/g",
        "newName": "p",
        "path": str(ws.primary / "p.md"),
        "updatedReferences": 2,
        "rewritten": ["global/r"],
        "moreRewritten": 0,
    }
    assert ref.read_text() == "[[p]] `mem:p` [[g]]\n"


def test_move_of_a_bare_name_never_takes_the_global_memory(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.global_dir / "g.md", "global g")
    with ws.refuses("not-found"):
        store.move("g", "h")
    with ws.refuses("not-found"):
        store.move("mem:g.md", "global/h")


def test_move_leaves_memories_under_read_only_patterns_alone(ws: Workspace) -> None:
    ws.write(
        ws.root / ".serena" / "project.yml",
        "read_only_memory_patterns: ['frozen/.*', 'global/frozen']\n",
    )
    store = ws.store()
    ws.write(ws.primary / "OLD.md", "old\n")
    text = "[[OLD]] `mem:OLD`\n"
    writable = ws.write(ws.primary / "refs.md", text)
    frozen = ws.write(ws.primary / "frozen" / "refs.md", text)
    frozen_global = ws.write(ws.global_dir / "frozen.md", text)
    other_global = ws.write(ws.global_dir / "thawed.md", text)
    result = store.move("OLD", "NEW")
    assert result["updatedReferences"] == 4
    assert writable.read_text() == other_global.read_text() == "[[NEW]] `mem:NEW`\n"
    assert frozen.read_text() == frozen_global.read_text() == text


def _indexed(store: Store) -> tuple[Store, list[list[str]]]:
    """The store as the language server makes it: a move asks a warm link index (not every
    file) who refers to the memory. Also returns the keys it was asked for."""
    index = MemoryIndex(store.config)
    index.scan()
    index.warm()
    asked: list[list[str]] = []

    def sources(keys: Sequence[str]) -> list[str]:
        asked.append(list(keys))
        return index.link_candidates(keys)

    return Store(store.config, None, sources), asked


def test_a_move_with_a_link_index_rewrites_every_reference(ws: Workspace) -> None:
    scanning, referrers = _world(ws)
    plain = [ws.write(ws.primary / f"plain_{n}.md", f"nothing about it {n}\n") for n in range(20)]
    store, asked = _indexed(scanning)
    result = store.move("OLD", "NEW_name")
    assert asked == [["OLD", serena_key("OLD")]]
    assert result["updatedReferences"] == REWRITTEN_PER_FILE * len(referrers) + 1
    for path in referrers:
        assert path.read_text() == EXPECTED, path
    moved = ws.root / "docs" / "new" / "NEW_name.md"
    assert moved.read_text() == "the memory itself, [[NEW_name]] self-link\n"
    assert all(path.read_text().startswith("nothing about it") for path in plain)


def test_a_move_reads_only_the_files_the_link_index_names(ws: Workspace) -> None:
    scanning, referrers = _world(ws)
    source = str(ws.primary / "OLD.md")
    # An index that knows of the memory's own self-link only: the referrers' links are
    # never read, so they stay as they are (and the self-link follows the file).
    store = Store(scanning.config, None, lambda keys: [source])
    result = store.move("OLD", "NEW_name")
    assert result["updatedReferences"] == 1
    assert Path(result["path"]).read_text() == "the memory itself, [[NEW_name]] self-link\n"
    assert all(path.read_text() == REFERRER for path in referrers)
    # Where the index cannot tell (None), every memory is read.
    store = Store(scanning.config, None, lambda keys: None)
    result = store.move("NEW_name", "OTHER_name")
    assert result["updatedReferences"] == 1


def test_a_move_leaves_a_link_that_leads_out_of_the_store_alone_and_completes(
    ws: Workspace,
) -> None:
    # A memory folder may hold a symlink to a file outside every folder (found by the
    # hardening fuzz): its reference is not ours to rewrite, and the move must not stop
    # half-way with the file moved and an error answered.
    outside = ws.write(ws.tmp / "elsewhere" / "target.md", "see [[style_guide]]\n")
    ws.write(ws.primary / "style_guide.md", "# Style\n")
    ws.write(ws.primary / "reader.md", "see [[style_guide]]\n")
    ws.primary.joinpath("escape.md").symlink_to(outside)
    store = ws.store(global_enabled=False)
    result = store.move("style_guide", "guides/style")
    assert result["updatedReferences"] == 1
    assert (ws.primary / "guides" / "style.md").read_text() == "# Style\n"
    assert not (ws.primary / "style_guide.md").exists()
    assert (ws.primary / "reader.md").read_text() == "see [[guides/style]]\n"
    assert outside.read_text() == "see [[style_guide]]\n"
    assert (ws.primary / "escape.md").is_symlink()


def test_delete_names_the_memories_whose_links_break(ws: Workspace) -> None:
    store = ws.store(["team/feature"])
    ws.write(ws.primary / "gone.md", "to be deleted [[gone]]\n")
    ws.write(ws.primary / "a.md", "intro\n\nsee [[gone|the old one]]\n")
    ws.write(ws.primary / "topic" / "b.md", "# B\nuse `mem:gone` here\n[[gone]] again\n")
    ws.write(ws.root / "team" / "feature" / "FEATURE_c.md", "[[ gone ]]\n")
    ws.write(ws.primary / "d.md", "not links: [[gone_more]] gone ```[[gone]]``` mem:gone\n")
    ws.write(ws.primary / "e.md", "```\n[[gone]] in fenced code\n```\n")
    result = store.delete("gone")
    assert result == {
        "name": "gone",
        "path": str(ws.primary / "gone.md"),
        "brokenLinks": [
            {"name": "FEATURE_c", "path": str(ws.root / "team/feature/FEATURE_c.md"), "line": 1},
            {"name": "a", "path": str(ws.primary / "a.md"), "line": 3},
            {"name": "topic/b", "path": str(ws.primary / "topic" / "b.md"), "line": 2},
        ],
        "moreBrokenLinks": 0,
    }


def test_delete_broken_links_capped_and_counted(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "hub.md", "the hub\n")
    for number in range(25):
        ws.write(ws.primary / f"spoke_{number:02}.md", f"line one\n[[hub]] {number}\n")
    result = store.delete("hub")
    assert [row["name"] for row in result["brokenLinks"]] == [f"spoke_{n:02}" for n in range(20)]
    assert {row["line"] for row in result["brokenLinks"]} == {2}
    assert result["moreBrokenLinks"] == 5


def test_delete_nobody_links_to_or_still_answered_says_nothing_more(ws: Workspace) -> None:
    store = ws.store(["team/feature"])
    ws.write(ws.primary / "alone.md", "nobody links here\n")
    ws.write(ws.primary / "other.md", "[[alone_not]] and [[shared]]\n")
    assert set(store.delete("alone")) == {"name", "path"}
    # Two files of one name: deleting the winner leaves the other to answer the links.
    ws.write(ws.primary / "shared.md", "first\n")
    ws.write(ws.root / "team" / "feature" / "shared.md", "second\n")
    assert set(store.delete("shared")) == {"name", "path"}


def test_delete_asks_the_link_index_before_the_delete(ws: Workspace) -> None:
    asked: list[list[str]] = []
    linking = ws.write(ws.primary / "linking.md", "see [[target]]\n")
    ws.write(ws.primary / "target.md", "x\n")
    ws.write(ws.primary / "unnamed.md", "also [[target]], but the index does not say so\n")

    def sources(keys: Sequence[str]) -> list[str]:
        asked.append(list(keys))
        assert (ws.primary / "target.md").exists(), "asked before the file goes"
        return [str(linking)]

    plain = ws.store()
    store = Store(plain.config, reference_sources=sources)
    result = store.delete("target")
    assert asked == [["target"]]
    assert result["brokenLinks"] == [{"name": "linking", "path": str(linking), "line": 1}]


def test_move_without_references_lists_none(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "lonely.md", "no links\n")
    assert set(store.move("lonely", "solo")) == {"name", "newName", "path", "updatedReferences"}
