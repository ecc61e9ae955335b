"""Workspace diagnostics in the core: each file's report as on disk, kept current by
rechecking only what a change can affect, with result ids that change with the report."""

from __future__ import annotations

from store_helpers import Workspace

from memory_ls.core import check_store
from memory_ls.core.operations.disk_check import DiskDiagnostics
from memory_ls.core.services.diagnostics import Diagnostic
from memory_ls.core.services.index import MemoryIndex


def codes_of(path: str, found: list[Diagnostic], text: str | None) -> tuple[str, ...]:
    """A report as the codes of its diagnostics (what the tests compare)."""
    return tuple(sorted(d.code for d in found))


def reports(disk: DiskDiagnostics[tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """File name -> codes, for files with problems."""
    return {path.rsplit("/", 1)[-1]: report for path, (_, report) in disk.reports().items()}


def test_the_first_check_matches_memory_ls_check(ws: Workspace) -> None:
    ws.write(ws.primary / "plans.md", "# Plans\nSee [[missing]] and [[notes]].\n")
    ws.write(ws.primary / "notes.md", "# Notes\n")
    ws.write(ws.primary / "BUGFIX_x.md", "# Bug\n")
    ws.write(ws.primary / "bad:name.md", "# Bad\n")
    ws.write(ws.global_dir / "notes.md", "---\ntags: 5\n---\n")
    store = ws.store(["team/feature"])
    index = MemoryIndex(store.config)
    index.scan()
    disk = DiskDiagnostics(index, codes_of)
    assert disk.check_all() is not None and disk.complete
    expected: dict[str, list[str]] = {}
    for found in check_store(store):
        expected.setdefault(found.path.rsplit("/", 1)[-1], []).append(found.code)
    assert reports(disk) == {name: tuple(sorted(codes)) for name, codes in expected.items()}
    assert reports(disk) == {
        "plans.md": ("broken-link",),
        "BUGFIX_x.md": ("unknown-prefix",),
        "bad:name.md": ("invalid-name",),
        "notes.md": ("invalid-frontmatter",),  # the global one
    }


def test_a_change_rechecks_what_it_can_affect(ws: Workspace) -> None:
    plans = ws.write(ws.primary / "plans.md", "See [[later]].\n")
    other = ws.write(ws.primary / "other.md", "See [[elsewhere]].\n")
    store = ws.store()
    index = MemoryIndex(store.config)
    index.scan()
    disk = DiskDiagnostics(index, codes_of)
    disk.check_all()
    first_id, _ = disk.report(str(plans))
    other_id, _ = disk.report(str(other))

    # A memory appears: the link to it resolves; the other file is not touched.
    later = ws.write(ws.primary / "later.md", "# Later\n")
    update = index.update_paths([str(later)])
    assert disk.update([str(later)], update) == {str(plans)}
    assert disk.report(str(plans)) == (disk.clean_id, None)
    assert disk.report(str(other))[0] == other_id

    # It goes again: the link breaks again, with a new result id.
    later.unlink()
    update = index.update_paths([str(later)])
    assert disk.update([str(later)], update) == {str(plans)}
    again_id, again = disk.report(str(plans))
    assert again == ("broken-link",) and again_id not in (first_id, disk.clean_id)

    # Rewritten with the same problems: same report, same id, nothing changed.
    plans.write_text("Still [[later]].\n")
    update = index.update_paths([str(plans)])
    assert disk.update([str(plans)], update) == set()
    assert disk.report(str(plans))[0] == again_id


def test_shadowing_follows_the_other_file(ws: Workspace) -> None:
    store = ws.store()
    index = MemoryIndex(store.config)
    index.scan()
    disk = DiskDiagnostics(index, codes_of)
    disk.check_all()
    personal = ws.write(ws.global_dir / "tips.md", "# Personal\n")
    project = ws.write(ws.primary / "tips.md", "# Project\n")
    update = index.update_paths([str(personal), str(project)])
    disk.update([str(personal), str(project)], update)
    # global/tips and tips are two memories: neither shadows the other.
    assert reports(disk) == {}
    copy = ws.write(ws.root / "team" / "tips.md", "# Team\n")
    store = ws.store(["team"])
    index = MemoryIndex(store.config)
    index.scan()
    disk = DiskDiagnostics(index, codes_of)
    disk.check_all()
    assert reports(disk) == {"tips.md": ("shadowed",)}
    assert str(copy) in disk.reports()
    project.unlink()
    update = index.update_paths([str(project)])
    assert disk.update([str(project)], update) == {str(copy)}
    assert reports(disk) == {}
