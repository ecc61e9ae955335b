#!/usr/bin/env python3
"""Simulate a team sharing memories through git, and count the merge conflicts.

    python3 bench/git_merge.py                        # 6 agents, 30 edits each
    python3 bench/git_merge.py --agents 3 --edits 8   # the small run CI does

N agents each work on a branch of their own off one shared store (a real git
repository) and make M random writes through the core Store API, as memory-ls makes
them for an agent: a paragraph rewritten (`edit`), a paragraph appended, a tag added, a
memory saved again unchanged (a new `updated_at` only), a new memory. The writes'
clock is simulated (each write a few minutes after the last, agents interleaved), so
two branches never share a stamp by chance. Then every pair of branches is merged
(`git merge`, aborted after counting) three ways:

- driver: memories with frontmatter, merged by `memory-ls merge-driver`;
- no driver: the same branches, merged by git's text merge;
- plain: the same writes on memories without frontmatter (tag writes and stamps do
  nothing there): plain Markdown, the floor a driver cannot go below.

Counted per way: pairs that conflict, conflicted files and conflict blocks. With the
driver the counts should be the floor's. A clean driver merge is also checked: every tag
either branch has is in the result (`tags lost`), and its frontmatter parses.
Prints a Markdown table and writes JSON to bench/results/git_merge.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import memory_ls.core.rules.document as document_module
from memory_ls.config import Settings
from memory_ls.core.rules.conflicts import find_conflicts
from memory_ls.core.rules.document import parse_document
from memory_ls.core.services.git_setup import attribute_lines, driver_command, memory_patterns
from memory_ls.core.storage.folders import resolve_store_config
from memory_ls.core.store import Store

RESULTS = Path(__file__).parent / "results"
PARAGRAPHS = 8
TAG_POOL = ["auth", "api", "db", "ops", "ui", "perf", "security", "billing", "infra", "docs"]
KINDS = ("edit", "append", "tag", "stamp", "new")
WEIGHTS = (40, 15, 20, 15, 10)
START = dt.datetime(2025, 6, 1, 9, 0, tzinfo=dt.timezone.utc)


@dataclass(frozen=True)
class Write:
    """One agent's write: what it does and to which memory (the same in every world)."""

    kind: str
    memory: str
    paragraph: int = 0
    text: str = ""
    tag: str = ""
    minute: int = 0  # of the simulated clock


@dataclass
class Tally:
    """Conflicts of one way of merging, over every pair of branches."""

    pairs: int = 0
    conflicted_pairs: int = 0
    conflicted_files: int = 0
    conflict_blocks: int = 0
    tags_lost: int = 0
    unreadable_frontmatter: int = 0
    seconds: float = 0.0
    per_pair: list[dict[str, Any]] = field(default_factory=list)


def paragraph(memory: str, number: int, words: random.Random) -> str:
    """A paragraph of a few words, unique to its memory and number."""
    sentence = " ".join(words.choice(TAG_POOL) for _ in range(8))
    return f"{memory} paragraph {number}: {sentence}."


def initial_memories(count: int, seed: int) -> dict[str, tuple[list[str], list[str]]]:
    """name -> (tags, paragraphs) of the shared store before anyone branches."""
    words = random.Random(seed)
    memories = {}
    for number in range(count):
        name = f"topic_{number:02d}"
        tags = words.sample(TAG_POOL, 2)
        memories[name] = (tags, [paragraph(name, p, words) for p in range(PARAGRAPHS)])
    return memories


def plan_writes(agents: int, edits: int, names: Sequence[str], seed: int) -> list[list[Write]]:
    """Each agent's writes, drawn once so that every world gets the same ones."""
    chance = random.Random(seed + 1)
    plans: list[list[Write]] = []
    for agent in range(agents):
        writes = []
        for number in range(edits):
            kind = chance.choices(KINDS, WEIGHTS)[0]
            minute = number * agents * 3 + agent + 1  # interleaved: no two writes share one
            text = f"Agent {agent} wrote this in write {number} ({chance.random():.6f})."
            if kind == "new":
                name = f"agent{agent}_note_{number:02d}"
                writes.append(
                    Write(kind, name, text=text, tag=chance.choice(TAG_POOL), minute=minute)
                )
                continue
            writes.append(
                Write(
                    kind,
                    chance.choice(names),
                    paragraph=chance.randrange(PARAGRAPHS),
                    text=text,
                    tag=chance.choice(TAG_POOL),
                    minute=minute,
                )
            )
        plans.append(writes)
    return plans


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False, timeout=300
    )
    if check and done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {done.stderr}")
    return done


@contextmanager
def simulated_clock(minute: int) -> Iterator[None]:
    """The store stamps `updated_at` at this minute of the simulation."""
    real = document_module.utc_now
    document_module.utc_now = lambda: START + dt.timedelta(minutes=minute)
    try:
        yield
    finally:
        document_module.utc_now = real


def store_of(repo: Path) -> Store:
    return Store(resolve_store_config(Settings(global_enabled=False), str(repo), environ={}))


def apply_write(store: Store, write: Write, frontmatter: bool) -> None:
    """One write through the Store API, as memory-ls makes it."""
    if write.kind == "new":
        tags = [write.tag] if frontmatter else None
        store.save(write.memory, f"# {write.memory}\n\n{write.text}\n", tags)
        return
    _memory, data = store.read_file(write.memory)
    doc = parse_document(data.decode("utf-8"))
    paragraphs = doc.body.rstrip("\n").split("\n\n")
    if write.kind == "edit":
        # The heading is paragraph 0: edits go to the text below it.
        target = paragraphs[1 + write.paragraph % (len(paragraphs) - 1)]
        store.edit(write.memory, needle=target, replacement=write.text)
    elif write.kind == "append":
        store.save(write.memory, doc.body.rstrip("\n") + f"\n\n{write.text}\n")
    elif write.kind == "tag":
        if frontmatter and write.tag not in doc.tags:
            store.save(write.memory, doc.body, [*doc.tags, write.tag])
    elif write.kind == "stamp" and frontmatter:
        store.save(write.memory, doc.body)  # the same text: a new `updated_at` only


def build_repository(
    repo: Path,
    memories: dict[str, tuple[list[str], list[str]]],
    plans: list[list[Write]],
    frontmatter: bool,
) -> None:
    """The shared store, committed, and one branch per agent with its writes."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "bench")
    git(repo, "config", "user.email", "bench@example.com")
    git(repo, "config", "merge.conflictStyle", "merge")
    folder = repo / ".serena" / "memories"
    folder.mkdir(parents=True)
    stamp = START.strftime("%Y-%m-%dT%H:%M:%SZ")
    for name, (tags, paragraphs) in memories.items():
        head = (
            f"---\ntags: [{', '.join(tags)}]\ncreated_at: {stamp}\nupdated_at: {stamp}\n---\n"
            if frontmatter
            else ""
        )
        (folder / f"{name}.md").write_text(f"{head}# {name}\n\n" + "\n\n".join(paragraphs) + "\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "shared store")
    for agent, writes in enumerate(plans):
        git(repo, "checkout", "-q", "-b", f"agent{agent}", "main")
        store = store_of(repo)
        for write in writes:
            with simulated_clock(write.minute):
                apply_write(store, write, frontmatter)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "--allow-empty", "-m", f"agent {agent}")
    git(repo, "checkout", "-q", "main")


def set_driver(repo: Path, on: bool) -> None:
    """Give the memories the driver through .git/info/attributes (no commit changes)."""
    info = repo / ".git" / "info"
    info.mkdir(exist_ok=True)
    attributes = info / "attributes"
    if on:
        config = store_of(repo).config
        patterns, _ = memory_patterns(config, str(repo.resolve()))
        attributes.write_text("".join(f"{line}\n" for line in attribute_lines(patterns)))
        git(repo, "config", "merge.memory-ls.name", "memory-ls")
        git(repo, "config", "merge.memory-ls.driver", driver_command(executable=sys.executable))
    else:
        attributes.unlink(missing_ok=True)
        git(repo, "config", "--remove-section", "merge.memory-ls", check=False)


def merge_pairs(repo: Path, agents: int, check_tags: bool) -> Tally:
    """Merge every pair of agent branches; count what conflicts."""
    tally = Tally()
    started = time.perf_counter()
    for first, second in itertools.combinations(range(agents), 2):
        git(repo, "checkout", "-q", "--detach", f"agent{first}")
        done = git(repo, "merge", "--no-commit", "--no-ff", f"agent{second}", check=False)
        conflicted = [
            line
            for line in git(repo, "diff", "--name-only", "--diff-filter=U").stdout.splitlines()
            if line
        ]
        blocks = 0
        for path in conflicted:
            text = (repo / path).read_text(encoding="utf-8", errors="replace")
            found = find_conflicts(text)
            blocks += len(found.blocks) or 1  # a modify/delete conflict has no markers
        if check_tags and not conflicted:
            lost, unreadable = _check_tags(repo, f"agent{first}", f"agent{second}")
            tally.tags_lost += lost
            tally.unreadable_frontmatter += unreadable
        tally.pairs += 1
        tally.conflicted_pairs += bool(conflicted) or done.returncode != 0
        tally.conflicted_files += len(conflicted)
        tally.conflict_blocks += blocks
        tally.per_pair.append(
            {"pair": [first, second], "conflictedFiles": conflicted, "blocks": blocks}
        )
        git(repo, "merge", "--abort", check=False)
        git(repo, "reset", "-q", "--hard")
        git(repo, "clean", "-q", "-fd")
    git(repo, "checkout", "-q", "main")
    tally.seconds = time.perf_counter() - started
    return tally


def _check_tags(repo: Path, first: str, second: str) -> tuple[int, int]:
    """(tags either branch has that the merged memory lacks, memories whose merged
    frontmatter does not parse), over the memories the merge left in the work tree."""
    lost = unreadable = 0
    folder = repo / ".serena" / "memories"
    for path in sorted(folder.glob("*.md")):
        merged = parse_document(path.read_text(encoding="utf-8"))
        if merged.problem is not None:
            unreadable += 1
            continue
        relative = path.relative_to(repo).as_posix()

        base, ours, theirs = (tags_at(repo, branch, relative) for branch in ("main", first, second))
        # What a three-way merge of the tags keeps: both have it, or one side added it.
        kept = (ours & theirs) | (ours - base) | (theirs - base)
        lost += len(kept - set(merged.tags))
    return lost, unreadable


def tags_at(repo: Path, branch: str, relative: str) -> set[str]:
    """The tags of a memory on a branch (none where the branch does not have it)."""
    shown = git(repo, "show", f"{branch}:{relative}", check=False)
    return set(parse_document(shown.stdout).tags) if shown.returncode == 0 else set()


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--agents", type=int, default=6)
    parser.add_argument("--edits", type=int, default=30, help="writes per agent")
    parser.add_argument("--memories", type=int, default=12, help="memories in the shared store")
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--output", default=str(RESULTS / "git_merge.json"))
    args = parser.parse_args(argv)
    if shutil.which("git") is None:
        sys.exit("git is needed")
    memories = initial_memories(args.memories, args.seed)
    plans = plan_writes(args.agents, args.edits, sorted(memories), args.seed)
    scratch = Path(tempfile.mkdtemp(prefix="memory-ls-git-merge-"))
    home = scratch / "home"
    home.mkdir()
    saved_env = {k: os.environ.get(k) for k in ("HOME", "XDG_CACHE_HOME", "GIT_CONFIG_NOSYSTEM")}
    # The user's git settings (conflict style, drivers) and lock files stay out of it.
    os.environ.update(
        {"HOME": str(home), "XDG_CACHE_HOME": str(home / "cache"), "GIT_CONFIG_NOSYSTEM": "1"}
    )
    try:
        with_frontmatter, plain = scratch / "frontmatter", scratch / "plain"
        build_repository(with_frontmatter, memories, plans, frontmatter=True)
        build_repository(plain, memories, plans, frontmatter=False)
        set_driver(with_frontmatter, on=True)
        driver = merge_pairs(with_frontmatter, args.agents, check_tags=True)
        set_driver(with_frontmatter, on=False)
        no_driver = merge_pairs(with_frontmatter, args.agents, check_tags=False)
        floor = merge_pairs(plain, args.agents, check_tags=False)
    finally:
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(scratch, ignore_errors=True)
    ways = {"driver": driver, "no driver": no_driver, "plain (floor)": floor}
    kinds = {kind: sum(w.kind == kind for plan in plans for w in plan) for kind in KINDS}
    print(
        f"{args.agents} agents x {args.edits} writes on {args.memories} memories "
        f"(seed {args.seed}; writes: {', '.join(f'{k} {v}' for k, v in kinds.items())}); "
        f"{driver.pairs} pairs merged each way\n"
    )
    print(
        "| merged by | pairs with conflicts | conflicted files | conflict blocks | tags lost | s |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for name, tally in ways.items():
        lost = str(tally.tags_lost) if name == "driver" else "-"
        print(
            f"| {name} | {tally.conflicted_pairs}/{tally.pairs} | {tally.conflicted_files} | "
            f"{tally.conflict_blocks} | {lost} | {tally.seconds:.1f} |"
        )
    report = {
        "parameters": vars(args) | {"writes": kinds},
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "loadavg": Path("/proc/loadavg").read_text().split()[:3]
        if Path("/proc/loadavg").exists()
        else None,
        "ways": {
            name: {
                "pairs": t.pairs,
                "conflictedPairs": t.conflicted_pairs,
                "conflictedFiles": t.conflicted_files,
                "conflictBlocks": t.conflict_blocks,
                "tagsLost": t.tags_lost,
                "unreadableFrontmatter": t.unreadable_frontmatter,
                "seconds": round(t.seconds, 2),
                "perPair": t.per_pair,
            }
            for name, t in ways.items()
        },
        "driverAtFloor": driver.conflict_blocks <= floor.conflict_blocks
        and driver.conflicted_files <= floor.conflicted_files,
    }
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwritten to {out}")
    return report


if __name__ == "__main__":
    main()
