"""The `memory-ls` command-line tool, run as a real process (SPEC 4)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_FLAGS = [
    "--additional-folders",
    "shared/feature,shared/feature_builder,shared/spec,shared/vendor:ro",
    "--global-folder",
    "../global-memories",
    "--max-memory-bytes",
    "4096",
]
FOLDERS = EXAMPLE_FLAGS[:4]


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under root with its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A copy of the example workspace; returns the workspace folder."""
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    return tmp_path / "examples" / "workspace"


def cli(
    cwd: Path, *args: str, stdin: str | None = None, flags: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run memory-ls in `cwd` with the example's flags after the command."""
    # HOME (and the lock files under it) lie outside the snapshotted example tree.
    env = {**os.environ, "HOME": str(cwd.parent.parent / "home")}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "memory_ls.cli",
            *args,
            *(EXAMPLE_FLAGS if flags is None else flags),
        ],
        cwd=cwd,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_check_on_example_shows_every_diagnostic_and_exits_1(example: Path) -> None:
    result = cli(example, "check")
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    codes = {line.split(": ", 1)[1].split()[1] for line in lines}
    assert codes == {
        "invalid-name",
        "unknown-prefix",
        "misrouted",
        "too-large",
        "broken-link",
        "invalid-frontmatter",
        "shadowed",
    }
    assert (
        ".serena/memories/project_overview.md:14:29: warning broken-link "
        "No memory named deployment_checklist"
    ) in result.stdout
    assert "2 error(s), 4 warning(s), 1 note(s)" in result.stderr


def test_check_is_clean_when_problems_are_off_or_absent(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".serena" / "memories").mkdir(parents=True)
    (ws / ".serena" / "memories" / "a.md").write_text("see [[b]]\n")
    (ws / ".serena" / "memories" / "b.md").write_text("fine\n")
    result = cli(ws, "check", flags=["--no-global"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""


def test_check_reports_near_duplicates_as_information(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    memories = ws / ".serena" / "memories"
    memories.mkdir(parents=True)
    body = (
        "# Release\n\nTag the release on main, wait for the staging deploy and its smoke "
        "tests, then promote to production from the Actions tab and watch the error rate "
        "for fifteen minutes before announcing it.\n"
    )
    (memories / "release_steps.md").write_text(body)
    (memories / "how_to_release.md").write_text(body.replace("fifteen", "twenty"))
    result = cli(ws, "check", flags=["--no-global"])
    assert result.returncode == 0, result.stdout + result.stderr  # information only
    lines = sorted(result.stdout.splitlines())
    assert [line.split(" ", 3)[:3] for line in lines] == [
        [".serena/memories/how_to_release.md:1:1:", "information", "near-duplicate"],
        [".serena/memories/release_steps.md:1:1:", "information", "near-duplicate"],
    ]
    assert "Near-duplicate of release_steps (their bodies are" in lines[0]


def test_check_given_paths_checks_only_those(example: Path) -> None:
    result = cli(example, "check", "README.md")
    # The workspace README links to an existing memory: no finding.
    assert result.returncode == 0, result.stdout
    result = cli(example, "check", ".serena/memories/project_overview.md")
    assert result.returncode == 1
    assert all("project_overview.md" in line for line in result.stdout.splitlines())


def test_options_before_or_after_the_command(example: Path) -> None:
    after = cli(example, "route", "FEATURE_BUILDER_x", "--json")
    before = subprocess.run(
        [
            sys.executable,
            "-m",
            "memory_ls.cli",
            "--json",
            *EXAMPLE_FLAGS,
            "route",
            "FEATURE_BUILDER_x",
        ],
        cwd=example,
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(example.parent / "home")},
        check=True,
    )
    assert json.loads(after.stdout) == json.loads(before.stdout)
    assert json.loads(after.stdout) == {
        "name": "FEATURE_BUILDER_x",
        "path": str(example / "shared" / "feature_builder" / "FEATURE_BUILDER_x.md"),
        "folder": str(example / "shared" / "feature_builder"),
        "routedBy": "prefix",
        "exists": False,
        "readOnly": False,
        "unknownPrefix": None,
    }


def test_json_results_have_the_server_shapes(example: Path) -> None:
    saved = json.loads(
        cli(example, "save", "FEATURE_new", "--tag", "x", "--json", stdin="zebra\n").stdout
    )
    assert set(saved) == {
        "name",
        "path",
        "scope",
        "folder",
        "created",
        "routedBy",
        "version",
        "previousVersion",
        "bytesBefore",
        "bytesAfter",
        "diagnostics",
    }
    assert saved["routedBy"] == "prefix" and saved["created"] is True
    read = json.loads(cli(example, "read", "FEATURE_new", "--json").stdout)
    assert set(read) == {
        "name",
        "path",
        "scope",
        "folder",
        "content",
        "tags",
        "createdAt",
        "updatedAt",
        "readOnly",
        "version",
        "supersededBy",
    }
    assert read["content"] == "zebra\n" and read["tags"] == ["x"]
    edited = json.loads(
        cli(
            example, "edit", "FEATURE_new", "--needle", "zebra", "--replacement", "okapi", "--json"
        ).stdout
    )
    assert {k: edited[k] for k in ("name", "path", "replacements", "diagnostics")} == {
        "name": "FEATURE_new",
        "path": saved["path"],
        "replacements": 1,
        "diagnostics": [],
    }
    assert edited["previousVersion"] == read["version"] != edited["version"]
    listed = json.loads(cli(example, "list", "--tag", "x", "--json").stdout)
    assert [m["name"] for m in listed["memories"]] == ["FEATURE_new"]
    assert set(listed["memories"][0]) == {
        "name",
        "path",
        "scope",
        "folder",
        "tags",
        "updatedAt",
        "readOnly",
        "validName",
        "shadows",
        "title",
        "supersededBy",
    }
    found = json.loads(cli(example, "search", "OKAPI", "--json").stdout)
    assert found["results"][0]["name"] == "FEATURE_new"
    assert set(found["results"][0]) == {
        "name",
        "path",
        "line",
        "text",
        "score",
        "title",
        "matched",
        "supersededBy",
    }
    tags = json.loads(cli(example, "tags", "--json").stdout)
    assert {"tag": "x", "count": 1} in tags["tags"]
    moved = json.loads(cli(example, "move", "FEATURE_new", "SPEC_new", "--json").stdout)
    assert moved["path"].endswith("shared/spec/SPEC_new.md") and moved["updatedReferences"] == 0
    deleted = json.loads(cli(example, "delete", "SPEC_new", "--json").stdout)
    assert deleted == {"name": "SPEC_new", "path": moved["path"]}
    assert not Path(moved["path"]).exists()


def test_edit_body_from_stdin_and_file(example: Path, tmp_path: Path) -> None:
    assert cli(example, "edit", "suggested_commands", stdin="new body\n").returncode == 0
    path = example / ".serena" / "memories" / "suggested_commands.md"
    assert path.read_text() == "new body\n"
    body = tmp_path / "body.md"
    body.write_text("from file\n")
    assert cli(example, "edit", "suggested_commands", "--file", str(body)).returncode == 0
    assert path.read_text() == "from file\n"


def test_read_of_a_missing_memory_says_where_it_looked_and_what_is_close(example: Path) -> None:
    result = cli(example, "read", "suggested_commandz")
    assert result.returncode == 3 and result.stdout == ""
    assert result.stderr == (
        "memory-ls: error: [not-found] No memory named 'suggested_commandz' in the project "
        "scope (searched .serena/memories, shared/feature, shared/feature_builder, shared/spec, "
        "shared/vendor), nor 'global/suggested_commandz' in the global scope (searched "
        f"{example.parent / 'global-memories'}). Did you mean suggested_commands?\n"
    )


@pytest.mark.parametrize(
    ("args", "stdin", "code"),
    [
        (["save", "../../etc/x"], "x", "invalid-name"),
        (["read", "no_such_memory"], None, "not-found"),
        (["move", "suggested_commands", "style_guide"], None, "exists"),
        (["save", "vendor_sdk_notes"], "x", "read-only"),
        (["save", "big"], "x" * 5000, "too-large"),
        (["edit", "suggested_commands", "--needle", "zzz", "--replacement", "y"], None, "no-match"),
        (
            ["edit", "suggested_commands", "--needle", "make", "--replacement", "y"],
            None,
            "ambiguous-match",
        ),
    ],
)
def test_refusals_exit_3_with_code_and_change_nothing(
    example: Path, args: list[str], stdin: str | None, code: str
) -> None:
    before = snapshot(example.parent)
    result = cli(example, *args, stdin=stdin)
    assert result.returncode == 3, result.stderr
    assert result.stderr.startswith(f"memory-ls: error: [{code}] ")
    assert result.stdout == ""
    assert snapshot(example.parent) == before


def test_global_save_with_global_scope_disabled_is_refused(example: Path) -> None:
    before = snapshot(example.parent)
    result = cli(example, "save", "global/x", "--no-global", stdin="x", flags=[])
    assert result.returncode == 3
    assert result.stderr.startswith("memory-ls: error: [outside-store] ")
    assert snapshot(example.parent) == before


@pytest.mark.parametrize(
    "args",
    [
        ["bogus"],
        [],
        ["read"],
        ["list", "--scope", "nowhere"],
        ["edit", "x", "--needle", "a"],
        ["check", "does/not/exist.md"],
        ["list", "--layout", "vim"],
    ],
)
def test_usage_errors_exit_2(example: Path, args: list[str]) -> None:
    before = snapshot(example.parent)
    result = cli(example, *args, flags=[])
    assert result.returncode == 2, result.stdout + result.stderr
    assert "memory-ls: usage error" in result.stderr
    assert snapshot(example.parent) == before


def test_export_then_import_gives_back_the_same_memories(example: Path, tmp_path: Path) -> None:
    for fmt in ("json", "jsonl"):
        out = tmp_path / f"export.{fmt}"
        exported = cli(
            example,
            "export",
            "--scope",
            "project",
            "--format",
            fmt,
            "--output",
            str(out),
            flags=FOLDERS,
        )
        assert exported.returncode == 0, exported.stderr
        fresh = tmp_path / f"fresh-{fmt}"
        for sub in ("shared/feature", "shared/feature_builder", "shared/spec", "shared/vendor"):
            (fresh / sub).mkdir(parents=True)
        imported = cli(fresh, "import", str(out), "--json", flags=FOLDERS)
        assert imported.returncode == 0, imported.stderr
        again = cli(fresh, "export", "--scope", "project", flags=FOLDERS).stdout
        original = cli(example, "export", "--scope", "project", flags=FOLDERS).stdout
        assert len(json.loads(original)) == 12
        assert _by_name(json.loads(again)) == _by_name(json.loads(original))


def _by_name(records: list[dict[str, object]]) -> dict[object, dict[str, object]]:
    return {r["name"]: r for r in records}


def test_import_skips_existing_unless_overwrite(example: Path, tmp_path: Path) -> None:
    records = tmp_path / "r.jsonl"
    records.write_text(json.dumps({"name": "suggested_commands", "content": "replaced\n"}) + "\n")
    result = json.loads(cli(example, "import", str(records), "--json").stdout)
    assert result == {"imported": [], "skipped": ["suggested_commands"]}
    result = json.loads(cli(example, "import", str(records), "--overwrite", "--json").stdout)
    assert [r["name"] for r in result["imported"]] == ["suggested_commands"]
    assert (example / ".serena/memories/suggested_commands.md").read_text() == "replaced\n"


def test_bad_import_file_writes_nothing(example: Path, tmp_path: Path) -> None:
    records = tmp_path / "r.json"
    records.write_text(
        json.dumps([{"name": "ok_one", "content": "x"}, {"name": "../bad", "content": "y"}])
    )
    before = snapshot(example.parent)
    result = cli(example, "import", str(records))
    assert result.returncode == 3
    assert "[invalid-name] record 2" in result.stderr
    assert snapshot(example.parent) == before


def test_human_output_is_short(example: Path) -> None:
    result = cli(example, "save", "SPEC_x", stdin="body\n")
    assert result.stdout.strip() == "SPEC_x -> shared/spec/SPEC_x.md (created; routed by prefix)"
    assert cli(example, "read", "SPEC_x").stdout == "body\n"


def test_list_pages_with_limit_and_cursor(example: Path) -> None:
    everything = json.loads(cli(example, "list", "--json").stdout)
    names = [m["name"] for m in everything["memories"]]
    assert len(names) > 3 and "nextCursor" not in everything
    paged: list[str] = []
    arguments = ["list", "--json", "--limit", "3"]
    while True:
        page = json.loads(cli(example, *arguments).stdout)
        paged += [m["name"] for m in page["memories"]]
        if "nextCursor" not in page:
            break
        arguments = ["list", "--json", "--limit", "3", "--cursor", page["nextCursor"]]
    assert paged == names
    human = cli(example, "list", "--limit", "1").stdout.splitlines()
    assert human[0].startswith(names[0] + "  ")
    assert human[1].startswith(f"({len(names) - 1:,} more: --cursor ")
    refused = cli(example, "list", "--limit", "0")
    assert refused.returncode == 2 and "limit must be a positive whole number" in refused.stderr


def test_about_lists_the_memories_that_mention_a_path(example: Path) -> None:
    (example / "src").mkdir()
    (example / "src" / "cart.py").write_text("")
    primary = example / ".serena" / "memories"
    (primary / "cart_notes.md").write_text("# Cart\nThe total is in `src/cart.py:3`.\n")
    (primary / "other_cart.md").write_text("Not [this](../../lib/cart.py).\n")
    done = cli(example, "about", "src/cart.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "cart_notes (Cart)  .serena/memories/cart_notes.md",
        "  2: The total is in `src/cart.py:3`.",
        "other_cart  .serena/memories/other_cart.md",
        "  1: Not [this](../../lib/cart.py).",
    ]
    found = json.loads(cli(example, "about", "./src/cart.py", "--limit", "1", "--json").stdout)
    assert [m["name"] for m in found["memories"]] == ["cart_notes"]
    assert (found["more"], found["targetPath"]) == (1, "src/cart.py")
    assert cli(example, "about", "src/none.py").stdout == "(no memory mentions src/none.py)\n"
    refused = cli(example, "about", "../outside.py")
    assert refused.returncode == 2 and "[invalid-arguments]" in refused.stderr


def test_search_ranks_by_relevance_and_all_words_keeps_every_word(example: Path) -> None:
    cli(example, "save", "payments/retry_policy", stdin="# Retry policy\nCaptures are retried.\n")
    ranked = json.loads(cli(example, "search", "refund retries", "--json").stdout)["results"]
    assert ranked[0]["name"] == "payments/retry_policy"
    assert ranked[0]["matched"] == ["retries"] and ranked[0]["title"] == "Retry policy"
    strict = cli(example, "search", "refund retries", "--all-words", "--json")
    assert strict.returncode == 0 and json.loads(strict.stdout)["results"] == []
    assert json.loads(cli(example, "search", "retry policy", "--all-words", "--json").stdout)[
        "results"
    ][0]["name"] == ("payments/retry_policy")


def test_delete_and_move_name_their_side_effects(tmp_path: Path) -> None:
    root = tmp_path / "a" / "workspace"
    memories = root / ".serena" / "memories"
    memories.mkdir(parents=True)
    (memories / "payments.md").write_text("# Payments\n")
    (memories / "checkout.md").write_text("# Checkout\n\nThen [[payments]].\n")
    (memories / "refunds.md").write_text("As in `mem:payments`.\n")
    (memories / "alone.md").write_text("# Alone\n")

    moved = cli(root, "move", "payments", "billing", flags=[])
    assert moved.returncode == 0, moved.stderr
    assert "References rewritten in checkout and refunds." in moved.stdout
    moved_json = json.loads(cli(root, "move", "billing", "billing_v2", "--json", flags=[]).stdout)
    assert moved_json["rewritten"] == ["checkout", "refunds"]

    deleted = cli(root, "delete", "billing_v2", flags=[])
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stdout.splitlines()[1] == (
        "2 memories link to it and now have broken links: checkout (line 3) and refunds "
        "(line 1). Edit them to link elsewhere, or write a memory named billing_v2 again."
    )
    (memories / "billing_v2.md").write_text("# Back\n")
    deleted_json = json.loads(cli(root, "delete", "billing_v2", "--json", flags=[]).stdout)
    assert deleted_json["brokenLinks"] == [
        {"name": "checkout", "path": str(memories / "checkout.md"), "line": 3},
        {"name": "refunds", "path": str(memories / "refunds.md"), "line": 1},
    ]
    assert deleted_json["moreBrokenLinks"] == 0
    # A memory nobody links to: the answer is as short as ever.
    alone = cli(root, "delete", "alone", flags=[])
    assert alone.stdout == "deleted alone (.serena/memories/alone.md)\n"
    lonely = cli(root, "move", "checkout", "checkout_flow", flags=[])
    assert "References rewritten" not in lonely.stdout
