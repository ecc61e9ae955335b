"""Which memories talk about a file, a folder or a symbol of the repository (issue 21).

An agent about to change `src/shop/cart.py` wants the memories that mention it. A target
is a path (`src/shop/cart.py`, `./src/shop/cart.py`, `shop/cart`, `src/shop/`, an absolute
path inside the workspace), a file name (`cart.py`) or a symbol (`Cart.total`,
`Cart::total`). What counts as a mention, outside frontmatter and fenced code:

- "path": a link or a path in inline code or prose that names the target, resolved as
  `stale-path` resolves it (a link from the memory's folder or from the root, the rest
  from the root; `./`, percent-encoding and `:42`/`#L10` suffixes allowed);
- "inside": a path to something inside the target, when the target is a folder;
- "name": a path elsewhere with the same file name (`lib/cart.py`), or the bare name
  (`cart.py`); more trailing folders in common rank higher (`shop/cart.py` before
  `cart.py` for `src/shop/cart.py`);
- "symbol": the symbol in inline code between identifier boundaries (`Cart.total()`,
  `shop.cart.Cart.total`); for a path, its module (`shop.cart` for `src/shop/cart.py`).

Paths and symbols are compared case-sensitively. Memories are found fast through the
full-text index: those whose body holds the file name's (or the symbol's) words in a row
are read and confirmed, so a file changed since it was indexed is judged as it is now
(the index is compared with the disk first). Without the index every memory is read.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from memory_ls.core.rules.conflicts import find_conflicts, may_hold_markers
from memory_ls.core.rules.document import split_frontmatter
from memory_ls.core.rules.errors import InvalidArguments, MemoryStoreError
from memory_ls.core.rules.headings import headings
from memory_ls.core.rules.names import is_valid_name
from memory_ls.core.rules.references import iter_lines_outside_code
from memory_ls.core.rules.stale_paths import PathMention, code_spans, mentions_in_line, resolutions
from memory_ls.core.services.related import successors
from memory_ls.core.services.relevance import snippet, tokens
from memory_ls.core.services.search import READ_LIMIT_FACTOR
from memory_ls.core.storage.folders import Folder, StoreConfig
from memory_ls.core.storage.fsio import read_text
from memory_ls.core.storage.memory import MemoryFile
from memory_ls.core.store import Store

# How well a line mentions the target, best first (the order results are ranked in).
MATCH_RANKS: Mapping[str, int] = {"path": 4, "inside": 3, "name": 2, "symbol": 1}
DEFAULT_LIMIT = 10
# Longer than any path a system takes (PATH_MAX is 4096 on Linux).
MAX_TARGET_CHARS = 4096
# A memory's mentioning lines kept in a result; the rest are counted (`moreLines`).
LINES_KEPT = 5
# A path as written in prose or in inline code: segments joined by `/`.
_PATH_TOKEN = re.compile(r"[\w.+@%~-]*(?:/[\w.+@%~-]*)+|[\w+@%~-][\w.+@%~-]*\.[A-Za-z0-9]+")
_LOCATION_SUFFIX = re.compile(r"(?::\d+(?:[-:]\d+)*|#L\d+(?:-L?\d+)?)$")
# What a link's path keeps unencoded (RFC 3986's path characters): a space is `%20`.
_PATH_SAFE = "/._-~:@+!$&'()*,;="
_IDENTIFIER = r"[A-Za-z_$][\w$]*"
_SEPARATOR = r"(?:\.|::|#|->)"
_SYMBOL = re.compile(rf"{_IDENTIFIER}(?:{_SEPARATOR}{_IDENTIFIER})*(?:\(\))?")


@dataclass(frozen=True)
class Target:
    """What to look for: a workspace-relative path and, where it can be one, a symbol."""

    text: str  # as given, trimmed
    path: str  # workspace-relative, `/`-separated, without a trailing `/`
    folder: bool  # written with a trailing `/`, or a folder of the workspace
    symbol: re.Pattern[str] | None  # in inline code: the symbol, or a path's module
    phrases: tuple[tuple[str, ...], ...]  # folded words a mentioning body holds in a row
    needles: tuple[str, ...]  # one of these is in every mentioning line, as written

    @property
    def segments(self) -> list[str]:
        """The path's segments."""
        return self.path.split("/")

    @property
    def name(self) -> str:
        """The file or folder name the path ends in."""
        return self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class LineMention:
    """A line of a memory that mentions the target (0-based line and column)."""

    line: int
    column: int
    text: str
    match: str
    common: int  # trailing path segments in common with the target


def parse_target(text: str, root: str) -> Target:
    """The target a path or symbol names; InvalidArguments when it names nothing to find."""
    given = text.strip()
    if len(given) > MAX_TARGET_CHARS:
        raise InvalidArguments(f"target is {len(given)} characters long: a path or symbol is not.")
    raw = given.strip("`").strip().replace("\\", "/")
    if "\n" in raw or not raw:
        raise InvalidArguments("target must be a path or a symbol on one line, not empty.")
    raw = _LOCATION_SUFFIX.sub("", raw) if ":" in raw or "#" in raw else raw
    folder = raw.endswith("/")
    if os.path.isabs(raw):
        absolute = os.path.normpath(raw)
        inside = root.rstrip(os.sep) + os.sep
        if not absolute.startswith(inside):
            raise InvalidArguments(f"target {given!r} is outside the workspace ({root}).")
        relative = absolute[len(inside) :].replace(os.sep, "/")
    else:
        relative = posixpath.normpath(raw)
    if relative in (".", "") or relative == ".." or relative.startswith("../"):
        raise InvalidArguments(f"target {given!r} does not name a file, folder or symbol.")
    folder = folder or os.path.isdir(os.path.join(root, *relative.split("/")))
    name = relative.rsplit("/", 1)[-1]
    symbol_text = _symbol_text(raw, relative)
    encoded = quote(name, safe=_PATH_SAFE)
    words = [tokens(name), tokens(encoded), tokens(symbol_text or "")]
    phrases = tuple(dict.fromkeys(tuple(w) for w in words if w))
    if not phrases:
        raise InvalidArguments(f"target {given!r} has no word to look for (letters or digits).")
    needles = [name, encoded]
    if symbol_text:
        # Every part is in a mentioning line: the longest one lets the fewest lines by.
        needles.append(max(re.split(_SEPARATOR, symbol_text.removesuffix("()")), key=len))
    return Target(
        given,
        relative,
        folder,
        _symbol_pattern(symbol_text) if symbol_text else None,
        phrases,
        tuple(dict.fromkeys(needles)),
    )


def _symbol_text(raw: str, relative: str) -> str | None:
    """The symbol a target names: itself when it is one, a path's module (`shop.cart`)."""
    if "/" not in raw.rstrip("/"):
        bare = raw.removesuffix("()")
        return bare if _SYMBOL.fullmatch(bare) else None
    stems = relative.split("/")
    stems[-1] = stems[-1].split(".", 1)[0]
    module = [s for s in stems[-2:] if re.fullmatch(_IDENTIFIER, s)]
    return ".".join(module) if len(module) == 2 else None


def _symbol_pattern(symbol: str) -> re.Pattern[str]:
    parts = re.split(_SEPARATOR, symbol.removesuffix("()"))
    body = _SEPARATOR.join(re.escape(part) for part in parts)
    return re.compile(rf"(?<![\w$]){body}(?![\w$])")


# ----- one memory ------------------------------------------------------------------------


def find_mentions(text: str, memory_path: str, target: Target, root: str) -> list[LineMention]:
    """The lines of a memory's text that mention the target, each with its best match."""
    if not any(needle in text for needle in target.needles):
        return []  # most candidates the index names hold only the words
    raw, body, body_line = split_frontmatter(text)
    if raw is None:
        body, body_line = text, 0
    found = []
    for number, line in iter_lines_outside_code(body, body_line):
        if any(needle in line for needle in target.needles):
            best = _best_in_line(line, number, memory_path, target, root)
            if best is not None:
                found.append(best)
    return found


def _best_in_line(
    line: str, number: int, memory_path: str, target: Target, root: str
) -> LineMention | None:
    best: LineMention | None = None

    def offer(column: int, match: str, common: int = 0) -> None:
        nonlocal best
        if best is None or (MATCH_RANKS[match], common) > (MATCH_RANKS[best.match], best.common):
            best = LineMention(number, column, line, match, common)

    covered: list[tuple[int, int]] = []
    for mention in mentions_in_line(line, number):
        covered.append((mention.start, mention.end))
        found = _path_match(_resolved(mention, memory_path, root), mention.path, target)
        if found is not None:
            offer(mention.start, *found)
    spans = code_spans(line)
    for start, end in spans:
        if target.symbol is not None:
            symbol = target.symbol.search(line, start, end)
            if symbol is not None:
                offer(symbol.start(), "symbol")
    for token in _PATH_TOKEN.finditer(line):
        at = token.start()
        if any(start <= at < end for start, end in covered):
            continue  # a link or a code path already judged
        written = _LOCATION_SUFFIX.sub("", token.group().rstrip(".-"))
        if "/" not in written:
            # A bare name: a file's in inline code; a symbol's is the symbol pass's.
            in_code = any(start <= at < end for start, end in spans)
            if not in_code or (target.symbol is not None and "/" not in target.path):
                continue
        if "://" in line[max(0, at - 3) : at + 3]:
            continue  # a URL's path
        found = _path_match(_written_resolved(written, root), written, target)
        if found is not None:
            offer(at, *found)
    return best


def _written_resolved(written: str, root: str) -> list[str]:
    """The workspace-relative path a path in prose or a command means: from the root."""
    if os.path.isabs(written):
        inside = root.rstrip(os.sep) + os.sep
        absolute = os.path.normpath(written)
        return [absolute[len(inside) :]] if absolute.startswith(inside) else []
    relative = posixpath.normpath(written)
    return [] if relative.startswith("../") else [relative]


def _resolved(mention: PathMention, memory_path: str, root: str) -> list[str]:
    """The workspace-relative paths a path mention can mean (as `stale-path` looks)."""
    start = len(root.rstrip(os.sep)) + 1
    return [p[start:].replace(os.sep, "/") for _, p in resolutions(mention, memory_path, root)]


def _path_match(resolved: Iterable[str], written: str, target: Target) -> tuple[str, int] | None:
    """("path" | "inside" | "name", trailing segments in common) of a path, or None."""
    paths = [p.rstrip("/") for p in resolved]
    if target.path in paths:
        return "path", len(target.segments)
    if target.folder and any(p.startswith(target.path + "/") for p in paths):
        return "inside", len(target.segments)
    segments = [s for s in written.rstrip("/").split("/") if s not in ("", ".", "..")]
    if not segments or not _same_name(segments[-1], target):
        return None
    common = max(_common_tail(p.split("/"), target) for p in [*paths, "/".join(segments)])
    return "name", common


def _same_name(written: str, target: Target) -> bool:
    """Whether a written file name is the target's: the same, or with an extension where
    a file target has none (`cart.py` for `shop/cart`)."""
    name = target.name
    if written == name:
        return True
    return not target.folder and "." not in name and written.split(".", 1)[0] == name


def _common_tail(segments: list[str], target: Target) -> int:
    count = 0
    for have, want in zip(reversed(segments), reversed(target.segments), strict=False):
        if not (have == want or (count == 0 and _same_name(have, target))):
            break
        count += 1
    return count


# ----- the store -------------------------------------------------------------------------


def memories_about(
    store: Store,
    target: object,
    limit: object = None,
    texts: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The memories that mention a path or symbol, best first, each with its lines.

    `texts` are the current texts of memories by path where the caller knows better than
    the disk (an editor's unsaved documents).
    """
    if not isinstance(target, str):
        raise InvalidArguments("target must be a string: a path or a symbol.")
    try:
        target.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate, which JSON allows
        raise InvalidArguments(
            f"target is not valid Unicode text (a lone surrogate at position {exc.start})."
        ) from exc
    if limit is None:
        limit = DEFAULT_LIMIT
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise InvalidArguments("limit must be a positive integer.")
    config = store.config
    parsed = parse_target(target, config.root)
    known = dict(texts or {})
    found: list[tuple[tuple[int, int, int], MemoryFile, _Facts, list[LineMention]]] = []
    for memory in _candidates(store, parsed, known):
        text = known.get(memory.path)
        if text is None:
            text = _read(memory.path, config)
            if text is None:
                continue
        lines = find_mentions(text, memory.path, parsed, config.root)
        if lines:
            best = max(lines, key=lambda m: (MATCH_RANKS[m.match], m.common))
            titles = headings(text)
            newer = [successor.name for successor in successors(store, memory, text)]
            rank = (MATCH_RANKS[best.match], best.common, len(lines))
            facts = _Facts(
                titles[0].title if titles else "",
                newer,
                may_hold_markers(text) and bool(find_conflicts(text)),
            )
            found.append((rank, memory, facts, lines))
    # An outdated memory after the current ones: what holds now comes first (issue 34).
    found.sort(
        key=lambda item: (
            bool(item[2].superseded_by),
            tuple(-n for n in item[0]),
            item[1].qualified,
            item[1].path,
        )
    )
    memories = [_memory_result(memory, facts, lines) for _, memory, facts, lines in found[:limit]]
    return {
        "target": parsed.text,
        "targetPath": parsed.path,
        "memories": memories,
        "more": max(0, len(found) - limit),
    }


def _candidates(store: Store, target: Target, texts: Mapping[str, str]) -> list[MemoryFile]:
    """The memories that may mention the target: the index's, else every memory."""
    config = store.config
    index = store.search_index
    paths = index.files_with_phrases(target.phrases) if index is not None else None
    if paths is None:
        return [item.memory for item in store.resolve()]
    # The index knows which files are memories; of the texts, only those on disk are.
    opened = [path for path in texts if path not in paths and os.path.isfile(path)]
    found = []
    for path in dict.fromkeys([*paths, *opened]):
        owned = config.name_of(path)
        if owned is None or _shadowed(config, *owned):
            continue
        folder, name = owned
        if folder.patterns.ignored and folder.patterns.is_ignored(folder.qualified(name)):
            continue
        found.append(MemoryFile(name, path, folder))
    return found


def _shadowed(config: StoreConfig, folder: Folder, name: str) -> bool:
    """Whether a project memory is hidden by one of the same name earlier in lookup order."""
    if folder.kind == "global" or not is_valid_name(name):
        return False
    for earlier in config.folders:
        if earlier.path == folder.path:
            return False
        if earlier.kind != "global" and os.path.isfile(earlier.file_for(name)):
            return True
    return False


def _read(path: str, config: StoreConfig) -> str | None:
    """A memory's text; None when it is gone or far too large to read (as search)."""
    try:
        if os.path.getsize(path) > READ_LIMIT_FACTOR * config.max_memory_bytes:
            return None
        return read_text(path)
    except (OSError, MemoryStoreError):
        return None


@dataclass(frozen=True)
class _Facts:
    """What an answer says of a memory besides its lines."""

    title: str
    superseded_by: list[str]
    conflicted: bool  # it holds unresolved git conflict markers


def _memory_result(memory: MemoryFile, facts: _Facts, lines: list[LineMention]) -> dict[str, Any]:
    """A memory of the answer: its title, lines, and what supersedes it."""
    ranked = sorted(lines, key=lambda m: (-MATCH_RANKS[m.match], -m.common, m.line))
    kept = sorted(ranked[:LINES_KEPT], key=lambda m: m.line)
    return {
        "name": memory.qualified,
        "path": memory.path,
        "scope": memory.scope,
        "title": facts.title,
        "supersededBy": facts.superseded_by,
        "match": ranked[0].match,
        "lines": [
            {"line": m.line + 1, "text": snippet(m.text, m.column), "match": m.match} for m in kept
        ],
        "moreLines": len(lines) - len(kept),
        # As a search's hit: both sides of a conflict are shown, neither settled.
        **({"warnings": ["merge-conflict"]} if facts.conflicted else {}),
    }
