"""One memory's links both ways (core/operations/link_view.py): every linking line, from the link
index and the open texts; every outgoing reference, resolved or broken."""

from __future__ import annotations

from pathlib import Path

from test_index import fresh, make_config, write

from memory_ls.core.operations.link_view import backlinks, index_resolver, outgoing_links


def test_backlinks_list_every_linking_line_of_every_file(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    primary = Path(config.primary.path)
    target = write(primary / "alpha.md", "# Alpha\n")
    write(
        primary / "one.md",
        "---\ntags: [x]\n---\nSee [[alpha]].\nAnd `mem:alpha` and [[alpha|A]].\n",
    )
    write(primary / "two.md", "```\n[[alpha]]\n```\n`[[alpha]]` is an example\n")
    write(primary / "mention.md", "alpha, not a link\n")
    write(tmp_path / "ws" / "shared" / "spec" / "spec.md", "[[alpha]]\n")
    write(tmp_path / "global" / "g.md", "[[global/alpha]] is another memory\n")
    index = fresh(config)
    alpha = index.memory_for(str(target))
    assert alpha is not None

    found = backlinks(index, alpha)

    assert [(link.memory.qualified if link.memory else None) for link in found] == ["one", "spec"]
    one = found[0]
    assert [(line.line, line.start, line.end) for line in one.lines] == [
        (3, 6, 11),
        (4, 9, 14),
        (4, 22, 27),
    ]
    assert one.lines[1].text == "And `mem:alpha` and [[alpha|A]]."


def test_open_texts_win_over_the_disk_and_may_be_notes(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    primary = Path(config.primary.path)
    target = write(primary / "alpha.md")
    linker = write(primary / "linker.md", "[[alpha]]\n")
    note = str(tmp_path / "ws" / "notes" / "todo.md")
    index = fresh(config)
    alpha = index.memory_for(str(target))
    assert alpha is not None

    found = backlinks(index, alpha, {str(linker): "none\n", note: "\n[[alpha]]\n"})

    assert [(link.path, link.memory) for link in found] == [(note, None)]
    assert found[0].lines[0].line == 1


def test_a_shadowed_memory_has_no_backlinks_its_name_goes_elsewhere(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    primary = Path(config.primary.path)
    winner = write(primary / "dup.md")
    hidden = write(tmp_path / "ws" / "shared" / "spec" / "dup.md")
    write(primary / "linker.md", "[[dup]]\n")
    index = fresh(config)
    hidden_memory = index.memory_for(str(hidden))
    winner_memory = index.memory_for(str(winner))
    assert hidden_memory is not None and winner_memory is not None

    assert backlinks(index, hidden_memory) == []
    assert [link.path for link in backlinks(index, winner_memory)] == [str(primary / "linker.md")]


def test_files_changed_but_not_indexed_yet_are_read_when_named(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    primary = Path(config.primary.path)
    target = write(primary / "alpha.md")
    late = write(primary / "late.md", "nothing\n")
    index = fresh(config)
    index.learn_links()
    late.write_text("now [[alpha]]\n", encoding="utf-8")  # the index has not seen this
    alpha = index.memory_for(str(target))
    assert alpha is not None

    assert backlinks(index, alpha) == []
    assert [link.path for link in backlinks(index, alpha, also=[str(late)])] == [str(late)]


def test_outgoing_links_resolve_by_lookup_order_or_are_broken(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    primary = Path(config.primary.path)
    alpha = write(primary / "alpha.md")
    tips = write(tmp_path / "global" / "tips.md")
    index = fresh(config)
    text = "[[alpha]] [[Alpha]]\n[[global/tips|Tips]] [[tips]] `mem:bad:name`\n```\n[[code]]\n```\n"

    links = outgoing_links(text, index_resolver(index))

    shown = [
        (link.reference.target, link.where.line, link.memory.path if link.memory else None)
        for link in links
    ]
    # Names are case-sensitive; a global memory is named with `global/`; invalid names are broken.
    assert shown == [
        ("alpha", 0, str(alpha)),
        ("Alpha", 0, None),
        ("global/tips", 1, str(tips)),
        ("tips", 1, None),
        ("bad:name", 1, None),
    ]
    assert links[2].reference.label == "Tips"
    assert links[2].where.text == "[[global/tips|Tips]] [[tips]] `mem:bad:name`"
