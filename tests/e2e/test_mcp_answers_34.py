"""What agents are told for issue 34's point 7, through `memory-ls mcp` (the SDK's stdio client).

A malformed expected_version is a wrong argument, not a conflict; a password inside a URL
is refused like other secrets (and by the CLI, as a process).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from test_mcp import Workspace, call, mcp_server, ok, refused, text_of
from test_mcp import ws as ws  # the fixture, shared with test_mcp

from memory_ls.core.storage.gate import version_of


async def test_a_malformed_version_is_a_wrong_argument_not_a_conflict(ws: Workspace) -> None:
    ws.primary.mkdir(parents=True)
    plan = ws.primary / "plan.md"
    plan.write_text("# Plan\n\nstep one\n")
    before = plan.read_bytes()
    async with mcp_server(ws) as session:
        for given in ("latest", "abc", "v1", "0" * 64, "   "):
            for tool, args in (
                ("write_memory", {"memory_name": "plan", "content": "mine\n"}),
                (
                    "edit_memory",
                    {"memory_name": "plan", "needle": "one", "repl": "1", "mode": "literal"},
                ),
                ("delete_memory", {"memory_name": "plan"}),
                ("rename_memory", {"old_name": "plan", "new_name": "plan2"}),
            ):
                error = await refused(session, tool, **args, expected_version=given)
                assert error.startswith("[invalid-arguments] "), (tool, given, error)
                assert "16 hex digits" in error and "read_memory" in error, error
                assert "changed since you read it" not in error
        assert plan.read_bytes() == before
        assert not (ws.primary / "plan2.md").exists()

        # The version read_memory answers goes through, in capitals too.
        answer = await call(session, "read_memory", memory_name="plan", include_version=True)
        assert answer.structured_content is not None
        version = answer.structured_content["version"]
        assert version == version_of(before) and f"Version: {version}" in text_of(answer)
        await ok(
            session,
            "write_memory",
            memory_name="plan",
            content="mine\n",
            expected_version=version.upper(),
        )
        assert plan.read_text() == "mine\n"


DB_PASSWORD = "Tr0ub4dor3x-9q"
URL = f"postgres://shop:{DB_PASSWORD}@db.internal:5432/shop"


async def test_a_password_inside_a_url_is_refused_like_other_secrets(ws: Workspace) -> None:
    ws.primary.mkdir(parents=True)
    deploy = ws.primary / "deploy.md"
    deploy.write_text("# Deploy\n\nThe database URL is in the vault.\n")
    before = deploy.read_bytes()
    async with mcp_server(ws) as session:
        for tool, args in (
            ("write_memory", {"content": f"# Deploy\n\nDATABASE_URL={URL}\n"}),
            ("edit_memory", {"needle": "in the vault", "repl": URL, "mode": "literal"}),
        ):
            error = await refused(session, tool, memory_name="deploy", **args)
            assert error.startswith("[possible-secret] "), error
            assert "line 3: a password in a URL" in error and DB_PASSWORD not in error
        for url in (
            "https://ci-bot:ghs_4f7Qm2LpZx9Rk1@git.example.com/org/repo.git",
            "mysql://root:s3cr3tP4ss@localhost/app",
            "redis://:hunter2pw@cache:6379/0",
            # The issue's own: a word that names a password is one inside a URL.
            "postgres://user:pass@host/db",
        ):
            error = await refused(session, "write_memory", memory_name="fresh", content=url)
            assert error.startswith("[possible-secret] ") and "a password in a URL" in error
        assert deploy.read_bytes() == before
        assert not (ws.primary / "fresh.md").exists()
        # Placeholders document the shape of a URL: written, and nothing is reported.
        text, result = await ok(
            session,
            "write_memory",
            memory_name="urls",
            content="# URLs\n\npostgres://user:<password>@localhost/db\n"
            "postgres://app:${DB_PASSWORD}@db/app\nredis://:****@cache:6379\n",
        )
        assert result["diagnostics"] == [], text


def _cli(ws: Workspace, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`memory-ls` as a process on the workspace, with a HOME of its own."""
    return subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", *ws.flags(), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "HOME": str(ws.tmp / "home"),
            "XDG_CACHE_HOME": str(ws.tmp / "cache"),
            "PYTHONPATH": os.pathsep.join(sys.path),
        },
        cwd=ws.root,
    )


def test_the_cli_refuses_a_password_inside_a_url_and_check_reports_it(ws: Workspace) -> None:
    content = f"# Deploy\n\nDATABASE_URL={URL}\n"
    done = _cli(ws, "save", "deploy", stdin=content)
    assert done.returncode != 0
    assert "[possible-secret]" in done.stderr and "line 3: a password in a URL" in done.stderr
    assert DB_PASSWORD not in done.stderr + done.stdout
    assert not (ws.primary / "deploy.md").exists()
    # Written behind the store's back (or with --secrets warn): `check` fails on it.
    (ws.primary).mkdir(parents=True)
    Path(ws.primary / "deploy.md").write_text(content)
    done = _cli(ws, "check", "--json")
    assert done.returncode == 1, done.stderr
    rows = json.loads(done.stdout)["diagnostics"]
    found = [(Path(r["path"]).name, r["code"], r["line"]) for r in rows]
    assert ("deploy.md", "possible-secret", 3) in found
    assert DB_PASSWORD not in done.stdout


async def test_not_found_suggests_the_name_under_its_topic_folder(ws: Workspace) -> None:
    (ws.primary / "payments").mkdir(parents=True)
    (ws.primary / "payments" / "retry_policy.md").write_text("# Retry policy\n")
    (ws.primary / "unrelated.md").write_text("# Unrelated\n")
    async with mcp_server(ws) as session:
        for tool, args in (
            ("read_memory", {"memory_name": "retry_policy"}),
            ("delete_memory", {"memory_name": "retry_policy"}),
            ("read_memory", {"memory_name": "retry_polcy"}),
        ):
            result = await call(session, tool, **args)
            assert result.is_error and result.structured_content is not None
            error = await refused(session, tool, **args)
            assert error.startswith("[not-found] "), error
            assert "Did you mean payments/retry_policy" in error, error
            assert result.structured_content["suggestions"][0] == "payments/retry_policy"
        # The suggestion reads.
        text, _ = await ok(session, "read_memory", memory_name="payments/retry_policy")
        assert text.startswith("# Retry policy")
    assert (ws.primary / "payments" / "retry_policy.md").exists()
