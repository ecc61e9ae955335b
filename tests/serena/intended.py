"""The intended differences from Serena: named, narrow predicates over one diverging call.

Each id is listed in docs/guides/compatibility.md's "Differences from Serena" (a test
checks it). A predicate says whether a divergence of one call is that intended difference;
the SPEC rules it relies on are written out here, independently of memory-ls's
implementation, so a bug in memory-ls is not excused by the same bug in the oracle.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import tree_snapshot
import yaml
from tree_snapshot import Snapshot

PROJECT_MEMORIES = "project/.serena/memories"
GLOBAL_MEMORIES = "home/memories/global"
WINDOWS_CHARS = frozenset('\\:*?"<>|')
WINDOWS_DEVICES = frozenset(
    ["CON", "PRN", "AUX", "NUL"]
    + [f"COM{i}" for i in range(1, 10)]
    + [f"LPT{i}" for i in range(1, 10)]
)
MAX_SEGMENT_BYTES = 252
NAME_ARGS = ("memory_name", "old_name", "new_name")
# Rules no file on disk can break: `a/./b` is the file `a/b`, a 253-byte segment + `.md`
# is over the 255 bytes a file name may have.
NEVER_ON_DISK = frozenset(["dot-segment", "segment-bytes"])
_UPDATED_LINE = re.compile(r"^updated_at:.*\n", re.MULTILINE)
_TIMESTAMP_LINES = re.compile(r"^(created_at|updated_at):.*\n", re.MULTILINE)
_FRONTMATTER = re.compile(r"\A\ufeff?---\r?\n(?:.*?\r?\n)?---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


@dataclass(frozen=True)
class OpContext:
    """One call: the op, both outcomes, the trees before it and both trees after it."""

    op: Mapping[str, Any]
    serena: Mapping[str, Any]
    mls: Mapping[str, Any]
    before: Snapshot
    serena_after: Snapshot
    mls_after: Snapshot


@dataclass(frozen=True)
class Intended:
    """One intended difference: its id in the docs, and whether it explains a divergence."""

    id: str
    applies: Callable[[OpContext, str, str], bool]


# ----- SPEC 2.1's name rules --------------------------------------------------------------


def serena_name(raw: str) -> str:
    """A name as Serena's _sanitize_name leaves it (`mem:` and one `.md` removed)."""
    name = raw.removeprefix("mem:")
    return name[:-3] if name.endswith(".md") else name


def spec_bare_name(raw: str) -> str:
    """A name after SPEC 2.1's input normalisation, `global/` removed."""
    name = serena_name(raw.strip())
    return name.removeprefix("global/")


def broken_rules(raw: str) -> set[str]:
    """The SPEC naming rules a name breaks (only those where Serena accepts the name)."""
    broken = set()
    for segment in spec_bare_name(raw).split("/"):
        if segment == ".":
            broken.add("dot-segment")
        if any(ch in WINDOWS_CHARS for ch in segment):
            broken.add("windows-chars")
        if any(unicodedata.category(ch) in ("Cc", "Cf") for ch in segment):
            broken.add("control-format")
        if segment.split(".")[0].upper() in WINDOWS_DEVICES:
            broken.add("windows-device")
        if len(segment.encode("utf-8", "surrogatepass")) > MAX_SEGMENT_BYTES:
            broken.add("segment-bytes")
    return broken


def names_of(op: Mapping[str, Any]) -> list[str]:
    """The names a call passes."""
    return [op[arg] for arg in NAME_ARGS if isinstance(op.get(arg), str)]


def serena_file_name(raw: str) -> str:
    """The name whose file Serena touches: its _sanitize_name runs twice (the tool, then
    get_memory_file_path), so `notes.md.md` is the file `notes.md`."""
    return serena_name(serena_name(raw))


def memory_key(name: str) -> str:
    """The snapshot key of the file of a memory named as Serena names it."""
    if name.startswith("global/"):
        return f"{GLOBAL_MEMORIES}/{name.removeprefix('global/')}.md"
    return f"{PROJECT_MEMORIES}/{name}.md"


def created_names(op: Mapping[str, Any], before: Snapshot) -> list[str]:
    """The names a call would create: a write's name that has no file, a rename's new name."""
    if op["tool"] == "write_memory":
        name = op["memory_name"]
        return [] if memory_key(serena_file_name(name)) in before else [name]
    if op["tool"] == "rename_memory":
        return [op["new_name"]]
    return []


def refused_for_rule(rule: str) -> Callable[[OpContext, str, str], bool]:
    """A predicate: memory-ls refused a call whose name breaks `rule`.

    A file on disk with such a name (Serena writes them) is read, edited, saved in place,
    renamed and deleted as Serena does: only a name the call would CREATE is excused,
    except for rules no file name can break (a `.` segment, an over-long segment).
    """

    def applies(ctx: OpContext, _aspect: str, _path: str) -> bool:
        if ctx.mls["kind"] != "invalid-name":
            return False
        names = names_of(ctx.op) if rule in NEVER_ON_DISK else created_names(ctx.op, ctx.before)
        return any(rule in broken_rules(name) for name in names)

    return applies


def names_trimmed(ctx: OpContext, _aspect: str, _path: str) -> bool:
    """A name with surrounding whitespace that memory-ls trims where Serena keeps it: a new
    name, or a lookup where the trimmed name exists. Where only the file exactly as given
    exists, memory-ls uses it as Serena does (no difference)."""
    for arg in NAME_ARGS:
        raw = ctx.op.get(arg)
        if not isinstance(raw, str) or raw == raw.strip():
            continue
        if arg == "new_name":
            return True  # a new name is trimmed (SPEC 2.1)
        exact = memory_key(serena_file_name(raw))
        trimmed = memory_key(serena_name(raw.strip()))
        if trimmed in ctx.before or exact not in ctx.before:
            return True
    return False


def empty_needle(ctx: OpContext, _aspect: str, _path: str) -> bool:
    """An empty needle: Serena matches it between every two characters, memory-ls refuses."""
    return (
        ctx.op["tool"] == "edit_memory"
        and ctx.op["needle"] == ""
        and ctx.mls["kind"] == "invalid-arguments"
    )


def _file_text(tree: Snapshot, path: str) -> str | None:
    entry = tree.get(path)
    if entry is None or entry["kind"] != "file":
        return None
    return tree_snapshot.entry_bytes(entry).decode("utf-8", "replace")


def _without_timestamps(text: str, lines: re.Pattern[str]) -> str | None:
    match = _FRONTMATTER.match(text)
    if match is None:
        return None
    return lines.sub("", match.group(0)) + text[match.end() :]


def frontmatter_timestamps(ctx: OpContext, aspect: str, path: str) -> bool:
    """A file with frontmatter that differs only in updated_at (and created_at if new)."""
    if aspect != "file":
        return False
    serena, mls = _file_text(ctx.serena_after, path), _file_text(ctx.mls_after, path)
    if serena is None or mls is None:
        return False
    # created_at is written when a memory is created, and never changed after.
    lines = _UPDATED_LINE if path in ctx.before else _TIMESTAMP_LINES
    left, right = _without_timestamps(serena, lines), _without_timestamps(mls, lines)
    return left is not None and left == right


def _split_frontmatter(text: str) -> tuple[dict[str, Any], str] | None:
    """(keys, body) of a text with a parsable frontmatter block, else None."""
    match = _FRONTMATTER.match(text)
    if match is None:
        return None
    block = match.group(0).lstrip("\ufeff").split("\n", 1)[1].rsplit("---", 1)[0]
    try:
        keys = yaml.safe_load(block) or {}
    except yaml.YAMLError:
        return None
    return (keys, text[match.end() :]) if isinstance(keys, dict) else None


def save_merges_frontmatter(ctx: OpContext, aspect: str, path: str) -> bool:
    """A save over a memory with frontmatter keeps its keys, merged with the content's."""
    if ctx.op["tool"] != "write_memory" or aspect != "file" or ctx.mls["kind"] != "ok":
        return False
    old, mls = _file_text(ctx.before, path), _file_text(ctx.mls_after, path)
    serena = _file_text(ctx.serena_after, path)
    if old is None or mls is None or serena != ctx.op["content"]:
        return False
    old_parts, mls_parts = _split_frontmatter(old), _split_frontmatter(mls)
    if old_parts is None or mls_parts is None:
        return False
    given = _split_frontmatter(serena) or ({}, serena)
    expected = {**old_parts[0], **given[0]}
    for keys in (expected, mls_parts[0]):
        keys.pop("updated_at", None)
    # created_at stays what the memory had (none if it had none).
    expected["created_at"] = old_parts[0].get("created_at")
    mls_parts[0].setdefault("created_at", None)
    return mls_parts[0] == expected and mls_parts[1] == given[1]


def read_body(ctx: OpContext, aspect: str, _path: str) -> bool:
    """A read of a memory with frontmatter: memory-ls gives the body, Serena the whole file."""
    if ctx.op["tool"] != "read_memory" or aspect != "value":
        return False
    serena, mls = ctx.serena["value"], ctx.mls["value"]
    if not serena.endswith(mls):
        return False
    head = serena[: len(serena) - len(mls)]
    match = _FRONTMATTER.match(head)
    # The body may start after one blank line that separates it from the frontmatter.
    return match is not None and head[match.end() :] in ("", "\n")


def read_global_fallback(ctx: OpContext, aspect: str, _path: str) -> bool:
    """A read of a bare name that only a global memory has: memory-ls falls back to it."""
    if ctx.op["tool"] != "read_memory" or aspect not in ("kind", "value"):
        return False
    name = serena_name(ctx.op["memory_name"])
    if name.startswith("global/") or ctx.serena["kind"] != "not-found":
        return False
    in_project = f"{PROJECT_MEMORIES}/{name}.md" in ctx.before
    in_global = f"{GLOBAL_MEMORIES}/{name}.md" in ctx.before
    return ctx.mls["kind"] == "ok" and in_global and not in_project


def _link_leads_outside(before: Snapshot, key: str) -> bool:
    entry = before[key]
    target = posixpath.normpath(posixpath.join(posixpath.dirname(key), entry["target"]))
    inside = (PROJECT_MEMORIES, GLOBAL_MEMORIES)
    return not any(target == root or target.startswith(root + "/") for root in inside)


def symlink_outside(ctx: OpContext, _aspect: str, _path: str) -> bool:
    """A write through a link out of the memory folders: memory-ls refuses (outside-store)."""
    if ctx.mls["kind"] != "outside-store" or ctx.serena["kind"] != "ok":
        return False
    for raw in names_of(ctx.op):
        name = serena_name(raw)
        base = GLOBAL_MEMORIES if name.startswith("global/") else PROJECT_MEMORIES
        parts = name.removeprefix("global/").split("/")
        for depth in range(1, len(parts) + 1):
            key = "/".join([base, *parts[:depth]]) + (".md" if depth == len(parts) else "")
            if ctx.before.get(key, {}).get("kind") == "link" and _link_leads_outside(
                ctx.before, key
            ):
                return True
    return False


def rename_wiki_links(ctx: OpContext, aspect: str, path: str) -> bool:
    """A rename also rewrites `[[OLD]]` / `[[OLD|label]]` links, which Serena leaves alone."""
    if ctx.op["tool"] != "rename_memory" or aspect != "file":
        return False
    serena, mls = _file_text(ctx.serena_after, path), _file_text(ctx.mls_after, path)
    if serena is None or mls is None:
        return False
    old, new = serena_name(ctx.op["old_name"]), serena_name(ctx.op["new_name"])
    restored = mls.replace(f"[[{new}]]", f"[[{old}]]").replace(f"[[{new}|", f"[[{old}|")
    return restored == serena


def crlf_kept(ctx: OpContext, aspect: str, path: str) -> bool:
    """A file whose line breaks were all CRLF keeps them; Serena writes it back with LF."""
    if aspect != "file":
        return False
    before = _file_text(ctx.before, path)
    serena, mls = _file_text(ctx.serena_after, path), _file_text(ctx.mls_after, path)
    if before is None or serena is None or mls is None or "\r" in serena:
        return False
    all_crlf = "\r\n" in before and before.count("\n") == before.count("\r\n")
    return all_crlf and mls == serena.replace("\n", "\r\n")


def one_md_suffix(ctx: OpContext, _aspect: str, _path: str) -> bool:
    """A name ending in `.md.md`: SPEC removes one `.md`, Serena (sanitising twice) both."""
    return any(serena_name(name.strip()).endswith(".md") for name in names_of(ctx.op))


REGISTRY: tuple[Intended, ...] = (
    Intended("names-windows-chars", refused_for_rule("windows-chars")),
    Intended("names-control-format", refused_for_rule("control-format")),
    Intended("names-windows-device", refused_for_rule("windows-device")),
    Intended("names-segment-bytes", refused_for_rule("segment-bytes")),
    Intended("names-dot-segment", refused_for_rule("dot-segment")),
    Intended("names-trimmed", names_trimmed),
    Intended("edit-empty-needle", empty_needle),
    Intended("frontmatter-updated-at", frontmatter_timestamps),
    Intended("save-merges-frontmatter", save_merges_frontmatter),
    Intended("read-body-without-frontmatter", read_body),
    Intended("read-global-fallback", read_global_fallback),
    Intended("crlf-kept", crlf_kept),
    Intended("names-one-md-suffix", one_md_suffix),
    Intended("symlink-outside-write-refused", symlink_outside),
    Intended("rename-wiki-links", rename_wiki_links),
)


def explain(ctx: OpContext, aspect: str, path: str) -> str | None:
    """The id of the intended difference that explains this divergence, or None."""
    for difference in REGISTRY:
        if difference.applies(ctx, aspect, path):
            return difference.id
    return None
