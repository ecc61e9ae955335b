"""The human-readable form of a command's result (without --json): `_human` and its helpers."""

from __future__ import annotations

import json
import os
from datetime import datetime
from typing import Any

from memory_ls.cli.common import _relative
from memory_ls.core.operations.report import broken_links_note, index_note, rewritten_note
from memory_ls.core.storage.folders import StoreConfig


def _human(command: str, result: dict[str, Any], config: StoreConfig) -> str:
    """The short human-readable form of a result."""
    root = config.root

    def rel(path: str) -> str:
        return _relative(path, root)

    text = _result_text(command, result, rel)
    # What the write did to the agent's index (Claude Code's MEMORY.md), as agents are told.
    note = index_note(result) if command in ("save", "delete", "move") else ""
    return f"{text}\n{note}" if note else text


def _result_text(command: str, result: dict[str, Any], rel: Any) -> str:
    """The short human-readable form of a result, without the index's note."""
    if command == "save":
        state = "created" if result["created"] else "updated"
        return (
            f"{result['name']} -> {rel(result['path'])} ({state}; routed by {result['routedBy']})"
        )
    if command == "read":
        return str(result["content"]).rstrip("\n")
    if command == "edit":
        return f"{result['name']}: {result['replacements']} replacement(s) in {rel(result['path'])}"
    if command == "delete":
        text = f"deleted {result['name']} ({rel(result['path'])})"
        # What the delete broke, as agents are told it.
        broken = broken_links_note(result)
        return f"{text}\n{broken}" if broken else text
    if command == "move":
        text = (
            f"{result['name']} -> {result['newName']} ({rel(result['path'])}); "
            f"{result['updatedReferences']} reference(s) updated"
        )
        rewritten = rewritten_note(result)
        return f"{text}\n{rewritten}" if rewritten else text
    if command == "history":
        return _history_text(result, rel)
    if command == "revert":
        if "newName" in result:
            undid = result["revertedTo"]
            return f"{result['name']} moved back to {result['newName']} (undid {undid})"
        if "deleted" in result:
            state = "deleted" if result["deleted"] else "already absent"
            return f"{result['name']}: {state} (undid {result['revertedTo']})"
        if result.get("merged"):
            kept = ", ".join(map(str, result["keptChanges"])) or "none"
            return (
                f"{result['name']} -> {rel(result['path'])}: undid {result['revertedTo']} "
                f"merged into version {result['version']}; kept later change(s) {kept}"
            )
        return (
            f"{result['name']} -> {rel(result['path'])} restored to version {result['version']} "
            f"(undid {result['revertedTo']})"
        )
    if command == "route":
        state = "exists" if result["exists"] else "new"
        return (
            f"{result['name']} -> {rel(result['path'])} ({state}; routed by {result['routedBy']})"
        )
    if command == "list":
        lines = []
        for memory in result["memories"]:
            tags = f"  [{', '.join(memory['tags'])}]" if memory["tags"] else ""
            flags = " (read-only)" if memory["readOnly"] else ""
            shadow = f" (shadows {len(memory['shadows'])})" if memory["shadows"] else ""
            folder = rel(memory["folder"])
            lines.append(f"{memory['name']}  {memory['scope']}:{folder}{tags}{flags}{shadow}")
        if "nextCursor" in result:
            more = f"{result['remaining']:,} more" if "remaining" in result else "more"
            lines.append(f"({more}: --cursor {result['nextCursor']})")
        return "\n".join(lines) if lines else "(no memories)"
    if command == "search":
        warned: set[str] = set()
        rows = []
        for r in result["results"]:
            if "merge-conflict" in r.get("warnings", ()) and r["name"] not in warned:
                warned.add(r["name"])
                rows.append(
                    f"⚠ merge-conflict: {r['name']} holds unresolved conflict markers; "
                    "both sides are shown"
                )
            rows.append(f"{r['name']}:{r['line']}: {r['text']}")
        return "\n".join([*(rows or ["(no matches)"]), *_agent_files_text(result)])
    if command == "about":
        return _about_text(result, rel)
    if command == "tags":
        rows = [f"{t['count']:>5}  {t['tag']}" for t in result["tags"]]
        return "\n".join(rows) if rows else "(no tags)"
    if command == "import":
        lines = [f"imported {r['name']} -> {rel(r['path'])}" for r in result["imported"]]
        lines += [f"skipped {name} (exists; use --overwrite)" for name in result["skipped"]]
        lines += [
            f"rejected {r['source']} {r['name']!r}: {r['reason']}"
            for r in result.get("rejected", ())
        ]
        return "\n".join(lines) if lines else "(nothing to import)"
    return json.dumps(result, ensure_ascii=False, indent=2)


def _agent_files_text(result: dict[str, Any]) -> list[str]:
    """The agents' files a search found, after the memories and apart from them."""
    found = result.get("agentFiles") or []
    if not found:
        return []
    more = result.get("moreAgentFiles", 0)
    total = len(found) + more
    lines = [f"Also in agents' files ({total}; ranked apart from the memories):"]
    lines += [f"{_home_relative(r['path'])}:{r['line']}: {r['text']}" for r in found]
    if more:
        lines.append(f"(and {more} more)")
    return lines


def _home_relative(path: str) -> str:
    """A path under the home as `~/...` (auto memory's); others as they are."""
    home = os.path.expanduser("~")
    if os.path.isabs(path) and path.startswith(home.rstrip(os.sep) + os.sep):
        return "~/" + os.path.relpath(path, home)
    return path


def _history_text(result: dict[str, Any], rel: Any) -> str:
    """One line per change: id, local time, action, who, versions, size before."""
    lines = []
    for entry in result["entries"]:
        when = datetime.fromtimestamp(entry["time"]).astimezone().isoformat(timespec="seconds")
        versions = f"{entry['versionBefore'] or '(none)'} -> {entry['versionAfter'] or '(none)'}"
        size = "new" if entry["sizeBefore"] is None else f"{entry['sizeBefore']} bytes before"
        if entry["withheld"]:
            size += ", withheld (possible secret)"
        if entry.get("reviewed"):
            size += ", reviewed"
        moved = f" to {rel(entry['newPath'])}" if "newPath" in entry else ""
        lines.append(
            f"{entry['id']:>6}  {when}  {entry['action']}{moved}  {entry['source']}  "
            f"{versions}  ({size})"
        )
    return "\n".join(lines) if lines else f"(no recorded change of {result['name']})"


def _about_text(result: dict[str, Any], rel: Any) -> str:
    """Each memory (name, title, file), then its mentioning lines; then how many more."""
    lines = []
    for memory in result["memories"]:
        title = f" ({memory['title']})" if memory["title"] else ""
        newer = memory.get("supersededBy")
        title += f" [superseded by {', '.join(newer)}]" if newer else ""
        lines.append(f"{memory['name']}{title}  {rel(memory['path'])}")
        lines += [f"  {m['line']}: {m['text']}" for m in memory["lines"]]
        if memory["moreLines"]:
            lines.append(f"  ... {memory['moreLines']} more line(s)")
    if result["more"]:
        lines.append(f"... {result['more']} more memories (--limit)")
    return "\n".join(lines) if lines else f"(no memory mentions {result['target']})"
