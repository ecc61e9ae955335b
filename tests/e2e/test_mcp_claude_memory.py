"""An agent writing Claude Code's auto memory through `memory-ls mcp` (the SDK's stdio
client): a topic file and its line in MEMORY.md, as Claude Code keeps them, and the
headroom in every answer."""

from __future__ import annotations

import subprocess
from pathlib import Path

from test_mcp import mcp_process, ok

from memory_ls.core.layouts.claude import project_slug


def _project(tmp_path: Path) -> tuple[Path, dict[str, str], Path]:
    """A git repository whose project file names the claude layout; HOME in tmp_path."""
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "memory-ls.toml").write_text('layout = "claude"\n', encoding="utf-8")
    home = tmp_path / "home"
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    memory = home / ".claude" / "projects" / project_slug(str(root)) / "memory"
    return root, env, memory


async def test_writes_keep_memory_md_and_say_the_headroom(tmp_path: Path) -> None:
    root, env, memory = _project(tmp_path)
    # As an agent's MCP config starts it: no flags, in the repository.
    async with mcp_process([], env, root) as session:
        text, result = await ok(
            session,
            "write_memory",
            memory_name="testing",
            content=(
                "---\nname: Running the tests\ndescription: pytest -n 4 runs them in 40 s\n"
                "type: project\n---\nUse `pytest -n 4`.\n"
            ),
        )
        assert result["path"] == str(memory / "testing.md")
        assert result["index"]["change"] == "added" and result["index"]["line"] == 2
        assert "MEMORY.md: entry added on line 2; 2 of 200 lines loaded, 198 to spare." in text
        index = (memory / "MEMORY.md").read_text(encoding="utf-8")
        assert "- [Running the tests](testing.md) — pytest -n 4 runs them in 40 s" in index

        text, _ = await ok(session, "rename_memory", old_name="testing", new_name="test_runs")
        assert "MEMORY.md: its entry on line 2 now links the new name" in text
        assert "(test_runs.md)" in (memory / "MEMORY.md").read_text(encoding="utf-8")

        (memory / "MEMORY.md").write_text(
            (memory / "MEMORY.md").read_text(encoding="utf-8")
            + "".join(f"- fact {n}\n" for n in range(210)),
            encoding="utf-8",
        )
        text, result = await ok(session, "write_memory", memory_name="late", content="# Late\n")
        assert result["index"]["entryLoaded"] is False
        assert "200 of its 213 lines loaded" in text
        assert "never finds this memory" in text

        text, result = await ok(session, "delete_memory", memory_name="test_runs")
        assert result["index"]["change"] == "removed"
        assert "MEMORY.md: its entry removed" in text
        assert "test_runs.md" not in (memory / "MEMORY.md").read_text(encoding="utf-8")
