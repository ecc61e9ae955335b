"""`memory-ls check --format text|github|sarif|json`: the formatters and the real command.

The SARIF schema in data/ is the OASIS SARIF 2.1.0 schema (errata 01) as published in
the oasis-tcs/sarif-spec repository (sarif-2.1/schema/sarif-schema-2.1.0.json, commit
e0583813964ec43cea53b6b531b402866095ed1f), unchanged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from memory_ls import __version__
from memory_ls.config import DIAGNOSTIC_CODES
from memory_ls.core.services.diagnostics import Diagnostic
from memory_ls.core.services.formats import (
    display_path,
    escape_data,
    escape_property,
    github_line,
    json_report,
    render,
    report_base,
    sarif_log,
)

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())


def assert_valid_sarif(log: dict[str, Any]) -> None:
    """Validated against the vendored SARIF 2.1.0 schema (draft-04)."""
    validator = jsonschema.Draft4Validator(
        SCHEMA, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
    )
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def check(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(cwd.parent / "home"), "XDG_CACHE_HOME": str(cwd.parent)}
    return subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", "check", "--no-global", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository whose store (in sub/) has an error, a warning and a note."""
    top = tmp_path / "repo"
    top.mkdir()
    git(top, "init", "-q")
    memories = top / "sub" / ".serena" / "memories"
    write(memories / "good.md", "# Good\n\nFine, see [[other]].\n")
    write(memories / "other.md", "# Other\n\nAlso fine.\n")
    # A broken link (warning) in a file whose name needs escaping in a property.
    write(memories / "a,b.md", "# A, b\n\nSee [[missing_note]] now.\n")
    # Frontmatter that does not parse (error).
    write(memories / "broken.md", "---\ntags: [unclosed\n---\n# Broken\n")
    return top


# ----- escaping and single lines -------------------------------------------------------------


def test_github_escapes_data_and_properties_as_the_actions_toolkit_does() -> None:
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_github_line_within_one_line_and_over_several() -> None:
    one = Diagnostic("/r/m/x.md", 2, 4, 2, 9, "broken-link", "No memory: x, y", "warning")
    assert github_line(one, "m/x.md") == (
        "::warning file=m/x.md,line=3,col=5,endColumn=9,endLine=3,"
        "title=memory-ls broken-link::No memory: x, y"
    )
    several = Diagnostic("/r/m/x.md", 0, 0, 3, 0, "invalid-frontmatter", "Bad\nYAML", "error")
    assert github_line(several, "m/x.md") == (
        "::error file=m/x.md,line=1,endLine=4,title=memory-ls invalid-frontmatter::Bad%0AYAML"
    )
    hint = Diagnostic("/r/x.md", 0, 0, 0, 0, "superseded", "Read y", "hint")
    assert github_line(hint, "x.md").startswith(
        "::notice file=x.md,line=1,col=1,endColumn=1,endLine=1,"
    )


def test_paths_are_relative_to_the_git_top_else_absolute(tmp_path: Path) -> None:
    top = tmp_path / "top"
    (top / ".git").mkdir(parents=True)
    (top / "a" / "b").mkdir(parents=True)
    assert report_base(str(top / "a" / "b")) == str(top)
    assert display_path(str(top / "a" / "b" / "x y.md"), str(top)) == "a/b/x y.md"
    outside = str(tmp_path / "elsewhere.md")
    assert display_path(outside, str(top)) == outside
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    assert report_base(str(lonely)) == str(lonely)


def test_sarif_of_any_code_is_valid_and_has_a_rule_for_each(tmp_path: Path) -> None:
    inside = str(tmp_path / "dir with space" / "x.md")
    outside = "/elsewhere/global/y.md"
    found = [
        Diagnostic(inside, 0, 0, 0, 3, "broken-link", "m1", "warning"),
        Diagnostic(inside, 1, 2, 4, 0, "a-code-added-later", "m2", "error"),
        Diagnostic(outside, 0, 0, 0, 1, "shadowed", "m3", "information"),
        Diagnostic(outside, 0, 0, 0, 1, "superseded", "m4", "hint"),
    ]
    log = sarif_log(found, str(tmp_path))
    assert_valid_sarif(log)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [rule["id"] for rule in rules]
    assert set(DIAGNOSTIC_CODES) <= set(ids)
    assert "a-code-added-later" in ids
    assert all(rule["shortDescription"]["text"] and rule["helpUri"] for rule in rules)
    assert run["tool"]["driver"]["version"] == __version__
    first, later, shadowed, _hint = run["results"]
    assert ids[later["ruleIndex"]] == "a-code-added-later"
    assert [r["level"] for r in run["results"]] == ["warning", "error", "note", "note"]
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {
        "uri": "dir%20with%20space/x.md",
        "uriBaseId": "%SRCROOT%",
    }
    assert location["region"] == {"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 4}
    assert later["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 2,
        "startColumn": 3,
        "endLine": 5,
        "endColumn": 1,
    }
    assert shadowed["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "file:///elsewhere/global/y.md"
    }
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.as_uri() + "/"


def test_sarif_schema_rejects_what_it_should() -> None:
    """The validation can fail: a result without a message is not SARIF."""
    log = sarif_log([Diagnostic("/x.md", 0, 0, 0, 1, "broken-link", "m", "warning")], "/")
    del log["runs"][0]["results"][0]["message"]
    with pytest.raises(AssertionError, match="message"):
        assert_valid_sarif(log)


def test_json_report_shape() -> None:
    found = [
        Diagnostic("/r/m/x.md", 2, 4, 2, 9, "broken-link", "w", "warning"),
        Diagnostic("/r/m/y.md", 0, 0, 1, 0, "invalid-frontmatter", "e", "error"),
        Diagnostic("/r/m/y.md", 0, 0, 0, 0, "shadowed", "i", "information"),
    ]
    report = json_report(found, "/r", lambda p: os.path.basename(p)[:-3])
    assert report["version"] == 1
    assert report["tool"] == {"name": "memory-ls", "version": __version__}
    assert report["diagnostics"][0] == {
        "path": "m/x.md",
        "name": "x",
        "line": 3,
        "col": 5,
        "endLine": 3,
        "endCol": 10,
        "severity": "warning",
        "code": "broken-link",
        "message": "w",
    }
    assert report["summary"] == {
        "error": 1,
        "warning": 1,
        "information": 1,
        "hint": 0,
        "total": 3,
        "files": 2,
    }


def test_render_refuses_an_unknown_format() -> None:
    with pytest.raises(ValueError, match="xml"):
        render([], "xml", root="/", name_of=lambda p: None)


# ----- the command ------------------------------------------------------------------------------


BROKEN_LINK = (
    "No memory named missing_note in the project's memory folders; create it or fix the name."
)
BAD_YAML = (
    "Frontmatter is not valid YAML (did not find expected ',' or ']'); "
    "fix it so tags and dates can be read."
)


def test_check_text_is_unchanged_and_github_is_checked_line_by_line(repo: Path) -> None:
    store = repo / "sub"
    text = check(store)
    assert text.returncode == 1
    assert text.stdout.splitlines() == [
        f".serena/memories/a,b.md:3:7: warning broken-link {BROKEN_LINK}",
        f".serena/memories/broken.md:3:1: error invalid-frontmatter {BAD_YAML}",
    ]
    github = check(store, "--format", "github")
    assert github.returncode == 1
    assert github.stderr == text.stderr == "memory-ls: 1 error(s), 1 warning(s), 0 note(s)\n"
    assert github.stdout.splitlines() == [
        "::warning file=sub/.serena/memories/a%2Cb.md,line=3,col=7,endColumn=18,endLine=3,"
        f"title=memory-ls broken-link::{BROKEN_LINK}",
        "::error file=sub/.serena/memories/broken.md,line=3,col=1,endColumn=1,endLine=3,"
        f"title=memory-ls invalid-frontmatter::{BAD_YAML}",
    ]


def test_check_sarif_and_json_of_the_same_run(repo: Path) -> None:
    store = repo / "sub"
    sarif = check(store, "--format", "sarif")
    assert sarif.returncode == 1
    log = json.loads(sarif.stdout)
    assert_valid_sarif(log)
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("broken-link", "warning"),
        ("invalid-frontmatter", "error"),
    ]
    uri = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert uri == {"uri": "sub/.serena/memories/a%2Cb.md", "uriBaseId": "%SRCROOT%"}

    report = json.loads(check(store, "--format", "json").stdout)
    assert report["root"] == str(repo)
    assert [(d["path"], d["name"], d["code"], d["line"]) for d in report["diagnostics"]] == [
        ("sub/.serena/memories/a,b.md", "a,b", "broken-link", 3),
        ("sub/.serena/memories/broken.md", "broken", "invalid-frontmatter", 3),
    ]
    assert report["summary"]["error"] == 1 and report["summary"]["files"] == 2


def test_check_of_given_files_only_with_the_store_as_context(repo: Path) -> None:
    """What a pre-commit hook passes: some files; their links resolve against every memory."""
    store = repo / "sub"
    good = check(store, "--format", "json", ".serena/memories/good.md")
    assert good.returncode == 0, good.stdout
    assert json.loads(good.stdout)["diagnostics"] == []
    bad = check(store, "--format", "github", ".serena/memories/a,b.md", ".serena/memories/good.md")
    assert bad.returncode == 1
    assert [line.split(" ", 1)[0] for line in bad.stdout.splitlines()] == ["::warning"]


def test_clean_store_exits_0_in_every_format(tmp_path: Path) -> None:
    root = tmp_path / "clean"
    write(root / ".serena" / "memories" / "fine.md", "# Fine\n")
    for fmt in ("text", "github", "json", "sarif"):
        done = check(root, "--format", fmt)
        assert done.returncode == 0, (fmt, done.stderr)
        if fmt == "sarif":
            assert_valid_sarif(json.loads(done.stdout))
            assert json.loads(done.stdout)["runs"][0]["results"] == []
        elif fmt == "json":
            assert json.loads(done.stdout)["summary"]["total"] == 0
        else:
            assert done.stdout == ""


def test_json_flag_and_a_format_together_are_a_usage_error(repo: Path) -> None:
    done = check(repo / "sub", "--json", "--format", "sarif")
    assert done.returncode == 2
    assert "not both" in done.stderr
    unknown = check(repo / "sub", "--format", "xml")
    assert unknown.returncode == 2
