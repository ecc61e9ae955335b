"""Each agent's format, as a user of that agent meets it: real files in a git repository
and a temporary HOME, checked live by the language server (pytest-lsp) and found by an
agent through `memory-ls mcp` (the SDK's stdio client). The CLI's `check --format json`
of the same formats: tests/unit/test_agent_files.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_support import Workspace
from lsprotocol import types
from test_lsp_agent_files import Repo, git, started
from test_mcp import mcp_process, ok

pytestmark = pytest.mark.asyncio(loop_scope="function")

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
FILES = {
    # Codex and others: a path that is gone, and a merge left unresolved.
    "AGENTS.md": (
        "# Agents\n\nThe ledger rounding is in `src/legacy/ledger.py`.\n"
        "<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n"
    ),
    # GitHub Copilot: instructions for files the repository does not have.
    ".github/instructions/go.instructions.md": (
        '---\napplyTo: "**/*.go"\n---\nThe ledger uses integer cents in Go too.\n'
    ),
    # Claude Code: a rule scoped to nothing.
    ".claude/rules/web.md": "---\npaths:\n  - web/**/*.tsx\n---\nThe ledger UI uses hooks.\n",
    # Cline: a token pasted into the memory bank.
    "memory-bank/techContext.md": f"# Tech\n\nThe ledger API token is {SECRET}.\n",
    # Cursor: a rule that can never apply on its own.
    ".cursor/rules/style.mdc": (
        "---\ndescription:\nglobs:\nalwaysApply: false\n---\nLedger style.\n"
    ),
    "src/app.py": "print('ledger')\n",
}


def make(base: Path) -> Repo:
    workspace = Workspace(base)
    for relative, text in FILES.items():
        workspace.write(relative, text)
    workspace.write(
        ".serena/memories/ledger_notes.md", "# Ledger notes\n\nThe ledger closes daily.\n"
    )
    git(workspace.root, "init", "-q", "-b", "main")
    return Repo(workspace, base / "home")


@pytest.mark.parametrize(
    ("relative", "codes"),
    [
        ("AGENTS.md", {"stale-path", "merge-conflict"}),
        (".github/instructions/go.instructions.md", {"unmatched-glob"}),
        (".claude/rules/web.md", {"unmatched-glob"}),
        ("memory-bank/techContext.md", {"possible-secret"}),
    ],
)
async def test_the_editor_checks_each_format_as_it_is_typed(
    tmp_path: Path, relative: str, codes: set[str]
) -> None:
    repo = make(tmp_path)
    async with started(repo) as server:
        uri = server.open(relative)
        assert set(await server.wait_for_codes(uri, lambda found: set(found) == codes)) == codes
        # Fixed in the editor, before any save: the problems go.
        fixed = {
            "AGENTS.md": "# Agents\n\nThe ledger rounding is in `src/app.py`.\n",
            ".github/instructions/go.instructions.md": '---\napplyTo: "**/*.py"\n---\nCents.\n',
            ".claude/rules/web.md": "---\npaths:\n  - src/**/*.py\n---\nHooks.\n",
            "memory-bank/techContext.md": "# Tech\n\nThe token is in the vault.\n",
        }[relative]
        server.replace_text(uri, fixed, 2)
        await server.wait_for_codes(uri, lambda found: found == [])


async def test_an_agent_finds_every_format_through_search(tmp_path: Path) -> None:
    repo = make(tmp_path)
    env = {**repo.env(), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    async with mcp_process(["--no-global"], env, repo.root) as session:
        text, result = await ok(session, "search_memories", query="ledger")
        assert [m["name"] for m in result["memories"]] == ["ledger_notes"]
        found = {row["path"]: row["agent"] for row in result["agentFiles"]}
        more = result["moreAgentFiles"]
        assert len(found) + more == 5, (found, more)
        assert set(found) <= {
            "AGENTS.md",
            ".github/instructions/go.instructions.md",
            ".claude/rules/web.md",
            "memory-bank/techContext.md",
            ".cursor/rules/style.mdc",
        }
        assert "Also in agents' files" in text


async def test_a_cursor_rule_opened_as_plain_text_is_checked_too(tmp_path: Path) -> None:
    # VS Code knows no language for `.mdc`: the extension sends it by file pattern.
    repo = make(tmp_path)
    async with started(repo) as server:
        uri = repo.workspace.uri(".cursor/rules/style.mdc")
        server.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri,
                    language_id="plaintext",
                    version=1,
                    text=FILES[".cursor/rules/style.mdc"],
                )
            )
        )
        assert await server.wait_for_codes(uri, bool) == ["unmatched-glob"]
        server.replace_text(uri, "---\nalwaysApply: true\n---\nLedger style.\n", 2)
        await server.wait_for_codes(uri, lambda found: found == [])
