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

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import unquote

from memory_ls.core.document import split_frontmatter
from memory_ls.core.references import iter_lines_outside_code

_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
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
    _frontmatter, body, first_line = split_frontmatter(text)
    found: list[PathMention] = []
    for number, line in iter_lines_outside_code(body, first_line):
        if "`" not in line and "](" not in line and "]:" not in line:
            continue  # most lines: nothing to read
        found.extend(_mentions_in_line(line, number))
    return found


def _mentions_in_line(line: str, number: int) -> Iterator[PathMention]:
    spans = [(m.start(), m.end()) for m in _CODE_SPAN.finditer(line)] if "`" in line else []
    for match in _CODE_SPAN.finditer(line) if spans else ():
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


def _code_mention(content: str, offset: int, number: int) -> PathMention | None:
    stripped = content.strip(" ")
    if "/" not in stripped or not stripped:
        return None
    offset += content.index(stripped)
    path = _LOCATION_SUFFIX.sub("", stripped)
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
    written = re.split(r"[#?]", destination, maxsplit=1)[0]
    if not written or _SCHEME.match(written) or written.startswith("//"):
        return None
    path = unquote(written)
    if _GLOB_CHARS.intersection(path):
        return None
    return PathMention(number, offset, offset + len(written), written, path, "link")


def resolutions(mention: PathMention, memory_path: str, root: str) -> list[tuple[str, str]]:
    """(base, absolute path) for each way the mention can be meant inside the workspace."""
    if os.path.isabs(mention.path):
        candidates = [("root", os.path.normpath(mention.path))]
    elif mention.kind == "link":
        candidates = [
            ("memory", os.path.normpath(os.path.join(os.path.dirname(memory_path), mention.path))),
            ("root", os.path.normpath(os.path.join(root, mention.path))),
        ]
    else:
        candidates = [("root", os.path.normpath(os.path.join(root, mention.path)))]
    inside = root.rstrip(os.sep) + os.sep
    seen: set[str] = set()
    kept = []
    for base, path in candidates:
        if path.startswith(inside) and path not in seen:
            seen.add(path)
            kept.append((base, path))
    return kept


def stale_paths(
    text: str, memory_path: str, root: str, exists: Callable[[str], bool]
) -> list[StalePath]:
    """The mentions in a memory's text that name nothing in the workspace."""
    stale = []
    for mention in find_path_mentions(text):
        candidates = resolutions(mention, memory_path, root)
        if not candidates or any(exists(path) for _, path in candidates):
            continue
        stale.append(
            StalePath(
                mention,
                tuple(os.path.relpath(p, root).replace(os.sep, "/") for _, p in candidates),
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
