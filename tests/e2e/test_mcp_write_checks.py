"""What agents are told when they write and read through `memory-ls mcp` (the SDK's stdio client).

Every write answers the findings `check` gives for the memory it touched, new ones marked;
content `check` calls an error and possible secrets are refused; versions stop lost updates.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from test_mcp import Workspace, call, mcp_server, ok, refused, text_of
from test_mcp import ws as ws  # the fixture, shared with test_mcp

from memory_ls.core.services.journal import Journal
from memory_ls.core.storage.gate import version_of

AWS_KEY = "AKIA" + "Q3EXAMPLEKEY7XYZ"
STRIPE_KEY = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"


def _repository(ws: Workspace) -> None:
    """A small Python repository with a few memories, committed (so `stale-path` is on)."""
    (ws.root / "src" / "shop").mkdir(parents=True)
    (ws.root / "src" / "shop" / "cart.py").write_text("class Cart: ...\n")
    (ws.root / "docs").mkdir()
    (ws.root / "docs" / "payments.md").write_text("# Payments\n")
    payments = ws.primary / "payments"
    payments.mkdir(parents=True)
    (payments / "retry_policy.md").write_text("# Retry policy\n\nRetry 3 times.\n")
    (ws.primary / "checkout_flow.md").write_text("# Checkout\n\nSee `src/shop/cart.py`.\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=ws.root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=ws.root, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=ws.root, check=True)


def _check(ws: Workspace, *flags: str) -> list[dict[str, Any]]:
    """`memory-ls check --json` on the workspace, as CI runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", "check", "--json", *ws.flags(), *flags],
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
    rows: list[dict[str, Any]] = json.loads(done.stdout)["diagnostics"]
    return rows


def _where(row: dict[str, Any], root: Path) -> tuple[str, int, str]:
    """A problem by file, column and code: a later edit may move it to another line."""
    # `check` names files relative to the root it runs in; answers name them absolutely.
    return os.path.realpath(root / row["path"]), row["column"], row["code"]


async def test_every_problem_check_finds_is_in_the_answer_that_introduced_it(
    ws: Workspace,
) -> None:
    _repository(ws)
    before = {_where(r, ws.root) for r in _check(ws, "--secrets", "warn")}
    async with mcp_server(ws, *ws.flags(), "--secrets", "warn") as session:
        text, first = await ok(
            session,
            "write_memory",
            memory_name="BUGFIX_retry_notes",
            content=(
                "# Retry notes\n\nSee [[payments/retry_polcy]] and `src/shop/carts.py`.\n"
                f"The sandbox key is {AWS_KEY}.\n"
            ),
        )
        assert "Checked: 4 problems (4 new from this write):" in text
        assert "create it or fix the name. Did you mean payments/retry_policy?" in text
        assert "Closest existing path: src/shop/cart.py." in text
        assert "possible-secret, line 4 (new)" in text and AWS_KEY not in text
        assert "unknown-prefix, line 1 (new)" in text

        _, second = await ok(
            session,
            "write_memory",
            memory_name="HOTFIX_checkout",
            content="# Hotfix\n\nFollows [[checkout/flow_v2]] and [[payments/refunds]].\n",
        )
        text, third = await ok(
            session,
            "edit_memory",
            memory_name="HOTFIX_checkout",
            needle="# Hotfix\n",
            repl=f"# Hotfix\n\nLive key {STRIPE_KEY}, see `docs/payment.md`.\n",
            mode="literal",
        )
        # The edit introduced the key and the path; the links were there before it.
        new = {(d["code"], d["line"]) for d in third["diagnostics"] if d["new"]}
        old = {(d["code"], d["line"]) for d in third["diagnostics"] if not d["new"]}
        assert new == {("possible-secret", 3), ("stale-path", 3)}
        assert old == {("broken-link", 5), ("unknown-prefix", 1)}
        assert "(2 new from this write)" in text and "already there" in text
        assert "Closest existing path: docs/payments.md." in text

    after = _check(ws, "--secrets", "warn")
    introduced = {_where(r, ws.root) for r in after} - before
    assert len(introduced) == 9
    answered = set()
    for result in (first, second, third):
        answered |= {
            _where({**d, "path": result["path"]}, ws.root)
            for d in result["diagnostics"]
            if d["new"]
        }
    assert introduced <= answered, introduced - answered


async def test_secrets_are_refused_by_default_and_the_file_is_unchanged(ws: Workspace) -> None:
    notes = ws.primary / "deploy.md"
    notes.parent.mkdir(parents=True)
    notes.write_text("# Deploy\n\nKeys live in the vault.\n")
    original = notes.read_bytes()
    async with mcp_server(ws) as session:
        error = await refused(
            session,
            "write_memory",
            memory_name="deploy",
            content=f"# Deploy\n\nUse {STRIPE_KEY} for the live shop.\n",
        )
        assert error.startswith("[possible-secret] ")
        assert "line 3: a Stripe key" in error and STRIPE_KEY not in error
        error = await refused(
            session,
            "edit_memory",
            memory_name="deploy",
            needle="the vault",
            repl=f"the vault ({AWS_KEY})",
            mode="literal",
        )
        assert error.startswith("[possible-secret] ") and "an AWS access key" in error
        assert AWS_KEY not in error
        await refused(session, "write_memory", memory_name="fresh", content=f"k={AWS_KEY}\n")
    assert notes.read_bytes() == original
    assert not (ws.primary / "fresh.md").exists()
    # Global memories are personal, never committed: not checked for secrets.
    async with mcp_server(ws) as session:
        _, result = await ok(session, "write_memory", memory_name="global/keys", content=AWS_KEY)
        assert result["diagnostics"] == []


async def test_content_check_calls_an_error_is_refused_with_its_code(ws: Workspace) -> None:
    async with mcp_server(ws) as session:
        error = await refused(session, "write_memory", memory_name="bad", content="a\x00b\n")
        assert error.startswith("[invalid-encoding] ")
        error = await refused(
            session, "write_memory", memory_name="bad", content="---\ntags: 5\n---\nbody\n"
        )
        assert error.startswith("[invalid-frontmatter] ") and "line 2" in error
    assert not (ws.primary / "bad.md").exists()


async def test_reads_of_damaged_files_say_so(ws: Workspace) -> None:
    ws.primary.mkdir(parents=True)
    (ws.primary / "latin.md").write_bytes("Caf\xe9 cr\xe8me\n".encode("latin-1"))
    (ws.primary / "image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
    (ws.primary / "wide.md").write_bytes("# Wide\n\nUTF-16 text\n".encode("utf-16"))
    async with mcp_server(ws) as session:
        answer = await call(session, "read_memory", memory_name="latin")
        assert not answer.is_error
        blocks = [b.text for b in answer.content if hasattr(b, "text")]
        assert blocks[0].startswith("Warning [invalid-encoding]: memory 'latin' is not UTF-8")
        assert blocks[1] == "Café crème\n"
        error = await refused(session, "read_memory", memory_name="image")
        assert error.startswith("[invalid-encoding] ") and "a PNG image" in error
        answer = await call(session, "read_memory", memory_name="wide")
        blocks = [b.text for b in answer.content if hasattr(b, "text")]
        assert "stored as UTF-16" in blocks[0] and blocks[1] == "# Wide\n\nUTF-16 text\n"


async def test_versions_stop_lost_updates_and_create_only_stops_overwrites(
    ws: Workspace,
) -> None:
    ws.primary.mkdir(parents=True)
    plan = ws.primary / "plan.md"
    body = "# Plan\n\n" + "".join(f"- step {i}: do the thing number {i}\n" for i in range(14))
    plan.write_text(body)
    async with mcp_server(ws) as a, mcp_server(ws) as b:
        answer = await call(a, "read_memory", memory_name="plan", include_version=True)
        version = answer.structured_content["version"] if answer.structured_content else None
        assert version == version_of(body.encode())
        assert text_of(answer).endswith(
            f"Version: {version} (give it as expected_version when "
            "you write, edit, rename or delete this memory)."
        )
        # Without include_version, the text is Serena's: the file alone.
        assert text_of(await call(a, "read_memory", memory_name="plan")) == body

        await ok(
            b, "edit_memory", memory_name="plan", needle="step 0", repl="STEP 0", mode="literal"
        )
        edited = plan.read_bytes()
        error = await refused(
            a,
            "write_memory",
            memory_name="plan",
            content="# Plan\n\nmine\n",
            expected_version=version,
        )
        assert error.startswith("[version-conflict] ")
        assert f"it is now version {version_of(edited)}" in error
        for tool, args in (
            ("edit_memory", {"needle": "Plan", "repl": "P", "mode": "literal"}),
            ("delete_memory", {}),
            ("rename_memory", {"new_name": "plan2"}),
        ):
            key = "old_name" if tool == "rename_memory" else "memory_name"
            error = await refused(a, tool, **{key: "plan"}, **args, expected_version=version)
            assert error.startswith("[version-conflict] "), tool
        assert plan.read_bytes() == edited

        error = await refused(a, "write_memory", memory_name="plan", content="x", create_only=True)
        assert error.startswith("[exists] ") and version_of(edited) in error
        assert plan.read_bytes() == edited

        text, result = await ok(
            a,
            "write_memory",
            memory_name="plan",
            content="short\n",
            expected_version=version_of(edited),
        )
        assert text.startswith("Saved plan: replaced in place at ")
        assert f"{len(edited)} -> 6 bytes" in text and "much shorter" in text
        assert (result["bytesBefore"], result["bytesAfter"], result["created"]) == (
            len(edited),
            6,
            False,
        )


async def test_secrets_warn_writes_and_warns(ws: Workspace) -> None:
    async with mcp_server(ws, *ws.flags(), "--secrets", "warn") as session:
        text, result = await ok(
            session, "write_memory", memory_name="deploy", content=f"key {AWS_KEY}\n"
        )
    assert [(d["code"], d["new"]) for d in result["diagnostics"]] == [("possible-secret", True)]
    assert "possible-secret, line 1 (new): This looks like an AWS access key" in text
    assert AWS_KEY not in text
    assert (ws.primary / "deploy.md").read_text() == f"key {AWS_KEY}\n"


async def test_memories_serena_wrote_under_names_we_would_not_create(ws: Workspace) -> None:
    ws.primary.mkdir(parents=True)
    names = ["what?", "CON", "tab\tname", "name:colon", " padded ", 'say "hi"']
    for name in names:
        (ws.primary / f"{name}.md").write_text(f"# {name}\n")
    async with mcp_server(ws) as session:
        listed = json.loads(text_of(await call(session, "list_memories")).split("\n")[0])
        assert set(names) <= set(listed["memories"])
        for name in names:
            read = await call(session, "read_memory", memory_name=name)
            assert not read.is_error and text_of(read).startswith(f"# {name}\n"), name
            await ok(
                session, "edit_memory", memory_name=name, needle="# ", repl="## ", mode="literal"
            )
            assert (ws.primary / f"{name}.md").read_text().startswith("## ")
        # Renamed to a valid name, deleted under its own name; creating such a name is refused.
        await ok(session, "rename_memory", old_name="what?", new_name="what")
        assert (ws.primary / "what.md").exists() and not (ws.primary / "what?.md").exists()
        await ok(session, "delete_memory", memory_name=" padded ")
        assert not (ws.primary / " padded .md").exists()
        error = await refused(session, "write_memory", memory_name="new:colon", content="x")
        assert error.startswith("[invalid-name] ")


async def test_a_near_duplicate_is_reported_with_the_offer_to_supersede(ws: Workspace) -> None:
    body = (
        "# Session tokens\n\nSession tokens are signed with the rotating key in the vault and "
        "expire after {hours} hours of inactivity. The refresh endpoint issues a new token "
        "when the old one has less than ten minutes left, and the logout endpoint revokes "
        "every token of the session at once.\n"
    )
    async with mcp_server(ws) as session:
        _, first = await ok(
            session, "write_memory", memory_name="auth/session_tokens", content=body.format(hours=4)
        )
        assert first["diagnostics"] == []
        text, second = await ok(
            session,
            "write_memory",
            memory_name="auth/token_lifetime",
            content=body.format(hours=12),
        )
        found = [d for d in second["diagnostics"] if d["code"] == "near-duplicate"]
        assert len(found) == 1 and found[0]["new"] is True
        assert "Near-duplicate of auth/session_tokens" in found[0]["message"]
        assert "`supersedes: auth/session_tokens`" in found[0]["fix"]
        assert "information near-duplicate, line 1 (new)" in text
        # Once linked, they are related on purpose: the finding goes, and says it went.
        _, third = await ok(
            session,
            "edit_memory",
            memory_name="auth/token_lifetime",
            needle="# Session tokens\n",
            repl="# Session tokens\n\nReplaces [[auth/session_tokens]].\n",
            mode="literal",
        )
        assert [d["code"] for d in third["diagnostics"]] == []


async def test_writes_are_journaled_as_the_mcp_servers_and_can_be_reverted(ws: Workspace) -> None:
    async with mcp_server(ws) as session:
        await ok(session, "write_memory", memory_name="plan", content="# Plan\n\nStep one.\n")
        first = (ws.primary / "plan.md").read_bytes()
        await ok(session, "write_memory", memory_name="plan", content="# Plan\n\nStep two.\n")
    (journal_file,) = (ws.tmp / "cache" / "memory-ls" / "journal").glob("*.sqlite3")
    journal = Journal(str(journal_file))
    entries = journal.history("plan")
    journal.close()
    # Named by the client's `initialize`: the Python SDK's client calls itself "mcp".
    assert [(e.action, e.source) for e in entries] == [("save", "mcp:mcp"), ("save", "mcp:mcp")]
    assert entries[0].before == first
    done = subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", "revert", "plan", *ws.flags()],
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
    assert done.returncode == 0, done.stderr
    assert (ws.primary / "plan.md").read_bytes() == first
