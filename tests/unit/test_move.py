"""Move: renames, re-routes, rewrites every reference form in every folder (SPEC 2.6, 2.7)."""

from __future__ import annotations

from pathlib import Path

from store_helpers import Workspace

from memory_ls.core import Store
from memory_ls.core.references import find_references

REFERRER = """---
tags: [links]
note: "[[OLD]] in frontmatter is not a reference"
---
# Links
Plain [[OLD]] and labelled [[OLD|the old one]] and spaced [[ OLD ]].
Serena style `mem:OLD` and `mem:OLD.md`.
Not these: [[OLD_more]] `mem:OLDER` [[other]] OLD [OLD] `OLD`.

```
[[OLD]] in a fenced block stays
`mem:OLD`
```

~~~markdown
[[OLD|fenced tilde]]
~~~
After the fence [[OLD]].
"""

EXPECTED = """---
tags: [links]
note: "[[OLD]] in frontmatter is not a reference"
---
# Links
Plain [[NEW_name]] and labelled [[NEW_name|the old one]] and spaced [[ NEW_name ]].
Serena style `mem:NEW_name` and `mem:NEW_name`.
Not these: [[OLD_more]] `mem:OLDER` [[other]] OLD [OLD] `OLD`.

```
[[OLD]] in a fenced block stays
`mem:OLD`
```

~~~markdown
[[OLD|fenced tilde]]
~~~
After the fence [[NEW_name]].
"""

REWRITTEN_PER_FILE = 6


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
    }
    for path in referrers:
        text = path.read_text()
        body = text.split("---\n", 2)[2]
        assert body == EXPECTED.split("---\n", 2)[2], path
        assert "note: '[[OLD]] in frontmatter is not a reference'" in text or (
            'note: "[[OLD]] in frontmatter is not a reference"' in text
        ), "frontmatter is kept"
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
    # No project memory is named x, so the plain self-link already resolves to global x.
    assert store.read("global/x")["content"] == "x [[x]]"
    assert [m["name"] for m in store.list_memories()["memories"]] == ["x"]


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


def test_move_of_a_global_memory_rewrites_global_references(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.global_dir / "g.md", "global g")
    ref = ws.write(
        ws.primary / "r.md", "[[global/g]] and [[g]] and `mem:global/g` [[global/g|label]]\n"
    )
    result = store.move("global/g", "global/h")
    assert result["path"] == str(ws.global_dir / "h.md")
    # [[g]] resolved to the global memory (no project g); [[h]] does so too.
    assert ref.read_text() == "[[global/h]] and [[h]] and `mem:global/h` [[global/h|label]]\n"


def test_move_to_global_qualifies_references_a_project_name_would_capture(
    ws: Workspace,
) -> None:
    store = ws.store()
    ws.write(ws.primary / "h.md", "a project memory named h")
    ws.write(ws.global_dir / "g.md", "global g")
    ref = ws.write(ws.primary / "r.md", "[[g]] `mem:g`\n")
    store.move("global/g", "global/h")
    assert ref.read_text() == "[[global/h]] `mem:global/h`\n"
    assert store.read("h")["content"] == "a project memory named h"
