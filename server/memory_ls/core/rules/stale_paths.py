"""Paths in a memory that name files or folders of the repository (`stale-path`, SPEC 3.2).

A memory says "the retry logic lives in `src/net/retry.py`" or links
`[notes](../docs/deploy.md)`; the code moves on and the memory keeps pointing at what
is gone. Two kinds of mention are read, outside frontmatter and fenced code:

- Markdown links and link definitions with a relative (or in-workspace absolute)
  destination. Markdown resolves them against the memory's folder; agents often write
  them from the workspace root instead (`[x](src/x.py)` in `.serena/memories/`), so a
  link is good when either resolution exists. URLs, `mailto:`, `mem:` and in-page
  `#anchors` are not paths.
- Inline code that looks like a repository path: a `/` and a file extension
  (`src/net/retry.py`, `src/x.py:42`), or a trailing `/` (`src/net/`), resolved against
  the workspace root. Globs, commands (anything with a space), URLs and `~`/`$` paths
  are left alone.

A resolution that leaves the workspace is not checked (absolute paths elsewhere,
`../` out of the root). Whether a path exists is the caller's question (`exists`):
a live stat in the editor, a snapshot of `git ls-files` plus a stat for `check`.
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote, unquote

from memory_ls.core.rules.document import split_frontmatter
from memory_ls.core.rules.references import iter_lines_outside_code

_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
# Where every backtick run is one backtick (most lines), spans are simply pairs: faster.
_SIMPLE_CODE_SPAN = re.compile(r"(`)([^`]+)`")
_INLINE_LINK = re.compile(r"!?\[[^\[\]\n]*\]\(\s*(<[^<>\n]*>|[^\s()<>]+)(?:\s+[\"'(][^\n]*?)?\s*\)")
_LINK_DEFINITION = re.compile(r"^ {0,3}\[[^\[\]\n]+\]:\s*(<[^<>\n]*>|\S+)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# A path as agents write one: segments of word characters and . + @ % ~ -, joined by /.
_CODE_PATH = re.compile(
    r"(?:\.{1,2}/|/)?(?:[\w.+@%~-]+/)+(?:[\w+@%~-][\w.+@%~-]*\.[A-Za-z0-9]*[A-Za-z][A-Za-z0-9]*)?"
)
# `src/x.py:42`, `src/x.py:42:7`, `src/x.py#L10-L20`: the location after the path.
_LOCATION_SUFFIX = re.compile(r"(?::\d+(?:[-:]\d+)*|#L\d+(?:-L?\d+)?)$")
_GLOB_CHARS = frozenset("*?[]{}")
# "Closest existing path" needs this similarity (0-100) when no file has the same name.
CLOSEST_PATH_CUTOFF = 60.0


@dataclass(frozen=True)
class PathMention:
    """A path written in a memory; columns are 0-based code points of its line."""

    line: int
    start: int  # the path as written, without `<>`, `#anchor` or `:line`
    end: int
    written: str  # the path text as written (percent-encoding kept)
    path: str  # the path it means (percent-decoded)
    kind: str  # "link" or "code"


@dataclass(frozen=True)
class StalePath:
    """A mention whose every resolution inside the workspace is missing."""

    mention: PathMention
    resolved: tuple[str, ...]  # workspace-relative paths (with `/`) that were looked for
    bases: tuple[str, ...]  # "memory" (the memory's folder) or "root", one per resolution


def find_path_mentions(text: str) -> list[PathMention]:
    """Link destinations and path-like inline code outside frontmatter and fenced code."""
    if "`" not in text and "](" not in text and "]:" not in text:
        return []  # many memories: no code and no links
    _frontmatter, body, first_line = split_frontmatter(text)
    found: list[PathMention] = []
    for number, line in iter_lines_outside_code(body, first_line):
        if "`" not in line and "](" not in line and "]:" not in line:
            continue  # most lines: nothing to read
        found.extend(mentions_in_line(line, number))
    return found


def mentions_in_line(line: str, number: int) -> Iterator[PathMention]:
    """The path mentions of one line outside fenced code."""
    spans = []
    spans_of = _CODE_SPAN if "``" in line else _SIMPLE_CODE_SPAN
    for match in spans_of.finditer(line) if "`" in line else ():
        spans.append((match.start(), match.end()))
        mention = _code_mention(match.group(2), match.start(2), number)
        if mention is not None:
            yield mention
    if "](" in line:
        for match in _INLINE_LINK.finditer(line):
            if not any(start <= match.start() < end for start, end in spans):
                mention = _link_mention(match.group(1), match.start(1), number)
                if mention is not None:
                    yield mention
    definition = _LINK_DEFINITION.match(line) if "]:" in line else None
    if definition and not any(start <= definition.start(1) < end for start, end in spans):
        mention = _link_mention(definition.group(1), definition.start(1), number)
        if mention is not None:
            yield mention


def code_spans(line: str) -> list[tuple[int, int]]:
    """(start, end) of the content of each inline code span of a line outside fenced code."""
    if "`" not in line:
        return []
    spans_of = _CODE_SPAN if "``" in line else _SIMPLE_CODE_SPAN
    return [(match.start(2), match.end(2)) for match in spans_of.finditer(line)]


def _code_mention(content: str, offset: int, number: int) -> PathMention | None:
    stripped = content.strip(" ")
    if "/" not in stripped or not stripped:
        return None
    offset += content.index(stripped)
    path = _LOCATION_SUFFIX.sub("", stripped) if ":" in stripped or "#" in stripped else stripped
    if "://" in path or _GLOB_CHARS.intersection(path) or path.startswith(("~", "$", "mem:")):
        return None
    match = _CODE_PATH.fullmatch(path)
    if match is None or path.startswith("//"):
        return None
    if not path.endswith("/") and "." not in path.rsplit("/", 1)[-1]:
        return None
    return PathMention(number, offset, offset + len(path), path, path, "code")


def _link_mention(destination: str, offset: int, number: int) -> PathMention | None:
    if destination.startswith("<"):
        destination, offset = destination[1:-1], offset + 1
    written = destination
    for mark in "#?":
        if mark in written:
            written = written[: written.index(mark)]
    if not written or (":" in written and _SCHEME.match(written)) or written.startswith("//"):
        return None
    path = unquote(written) if "%" in written else written
    if _GLOB_CHARS.intersection(path):
        return None
    return PathMention(number, offset, offset + len(written), written, path, "link")


def resolutions(mention: PathMention, memory_path: str, root: str) -> list[tuple[str, str]]:
    """(base, absolute path) for each way the mention can be meant inside the workspace."""
    if os.path.isabs(mention.path):
        candidates = [("root", os.path.normpath(mention.path))]
    elif mention.kind == "link":
        candidates = [
            ("memory", _joined(os.path.dirname(memory_path), mention.path)),
            ("root", _joined(root, mention.path)),
        ]
    else:
        candidates = [("root", _joined(root, mention.path))]
    inside = root.rstrip(os.sep) + os.sep
    seen: set[str] = set()
    kept = []
    for base, path in candidates:
        if path.startswith(inside) and path not in seen:
            seen.add(path)
            kept.append((base, path))
    return kept


@functools.lru_cache(maxsize=8192)
def _joined(base: str, relative: str) -> str:
    # `check` resolves the same few links from the same few folders thousands of times.
    return os.path.normpath(os.path.join(base, relative))


def stale_paths(
    text: str,
    memory_path: str,
    root: str,
    exists: Callable[[str], bool],
    mentions: Sequence[PathMention] | None = None,
) -> list[StalePath]:
    """The mentions in a memory's text that name nothing in the workspace.

    `mentions` are the text's mentions when the caller has them (an open document's memo).
    """
    stale = []
    for mention in find_path_mentions(text) if mentions is None else mentions:
        candidates = resolutions(mention, memory_path, root)
        if not candidates or any(exists(path) for _, path in candidates):
            continue
        # Every candidate lies inside the root (see resolutions): cut the root off.
        start = len(root.rstrip(os.sep)) + 1
        stale.append(
            StalePath(
                mention,
                tuple(p[start:].replace(os.sep, "/") for _, p in candidates),
                tuple(base for base, _ in candidates),
            )
        )
    return stale


def lexists(path: str) -> bool:
    """Whether anything is at `path` (a dangling link too: git tracks links)."""
    return os.path.lexists(path)


class RepoSnapshot:
    """The workspace's files and folders as git lists them, for many questions at once.

    A path git does not list (ignored, or created since) is looked up on disk.
    """

    def __init__(self, root: str, files: list[str]) -> None:
        self.root = root
        self._paths: set[str] = set()
        for relative in files:
            path = os.path.join(root, *relative.split("/"))
            while path not in self._paths and path != root:
                self._paths.add(path)
                path = os.path.dirname(path)

    def exists(self, path: str) -> bool:
        """Whether the repository has a file or folder at an absolute path."""
        return path in self._paths or os.path.lexists(path)


# ----- what to put instead (the quick fix) ------------------------------------------


@dataclass(frozen=True)
class Suggestion:
    """A path to put in place of a stale one: workspace-relative, and why."""

    path: str  # workspace-relative, `/`-separated; ends in `/` for a folder
    base: str  # "memory" or "root": how the replacement is written
    moved: bool  # git saw the file moved there (else: the closest existing path)


def suggest_paths(
    resolved: Sequence[str],
    bases: Sequence[str],
    is_folder: bool,
    renames: Mapping[str, str],
    files: Sequence[str],
    exists: Callable[[str], bool],
    limit: int = 3,
) -> list[Suggestion]:
    """Where a stale path went (git's renames, for a file or a folder), else the closest paths.

    `resolved` and `bases` are a stale path's looked-for paths; `files` the workspace's
    files (relative); `exists` answers for a relative path.
    """
    for relative, base in zip(resolved, bases, strict=True):
        moved = _folder_moved(relative, renames) if is_folder else renames.get(relative)
        if moved is not None and exists(moved):
            return [Suggestion(moved + ("/" if is_folder else ""), base, True)]
    # The base whose surroundings exist is the one the author most likely meant.
    pairs = list(zip(resolved, bases, strict=True))
    relative, base = next(
        ((r, b) for r, b in pairs if exists(posixpath.dirname(r.rstrip("/")) or ".")), pairs[0]
    )
    from rapidfuzz import fuzz, process  # only a quick fix needs it: kept off `check`'s start

    choices = sorted(_folders_of(files)) if is_folder else list(files)
    name = posixpath.basename(relative.rstrip("/"))
    same_name = [c for c in choices if posixpath.basename(c) == name]
    pool = same_name or choices
    found = process.extract(
        relative.rstrip("/"),
        pool,
        scorer=fuzz.ratio,
        limit=limit,
        score_cutoff=0 if same_name else CLOSEST_PATH_CUTOFF,
    )
    return [Suggestion(choice + ("/" if is_folder else ""), base, False) for choice, *_ in found]


def _folder_moved(folder: str, renames: Mapping[str, str]) -> str | None:
    """Where git moved a folder: where most of the files renamed out of it went together."""
    inside = folder.rstrip("/") + "/"
    votes: dict[str, int] = {}
    for old, new in renames.items():
        if old.startswith(inside):
            rest = old[len(inside) :]
            if new.endswith("/" + rest):
                target = new[: -len(rest) - 1]
                votes[target] = votes.get(target, 0) + 1
    return max(votes, key=lambda target: votes[target]) if votes else None


def _folders_of(files: Sequence[str]) -> set[str]:
    folders: set[str] = set()
    for path in files:
        parent = posixpath.dirname(path)
        while parent and parent not in folders:
            folders.add(parent)
            parent = posixpath.dirname(parent)
    return folders


def write_like(mention: PathMention, suggestion: Suggestion, memory_path: str, root: str) -> str:
    """The suggestion written the way the mention was: relative to the memory's folder or
    to the root, `./` or absolute as it was, percent-encoded where it was."""
    target = os.path.join(root, *suggestion.path.rstrip("/").split("/"))
    if os.path.isabs(mention.path):
        text = target
    elif suggestion.base == "memory":
        text = os.path.relpath(target, os.path.dirname(memory_path)).replace(os.sep, "/")
    else:
        text = suggestion.path.rstrip("/")
        if mention.path.startswith("./"):
            text = "./" + text
    if suggestion.path.endswith("/"):
        text += "/"
    if mention.kind == "link" and (mention.written != mention.path or " " in text):
        text = quote(text, safe="/._-~")
    return text
