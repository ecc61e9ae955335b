"""How much of a memory each agent reads (`context-budget`, SPEC 3.2): where a limit cuts a text.

Some agents load a memory file into every prompt and cut it past a size. An agent's
limit says which agent, which file (a pattern relative to the workspace root), how many
bytes it reads, and the environment variable that changes that; each agent's limits are
in its layout (`memory_ls.core.layouts`).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ContextLimit:
    """An agent reads only the first `limit_bytes` bytes of the files matching `pattern`."""

    agent: str
    pattern: str  # relative to the workspace root, `/`-separated, fnmatch wildcards
    limit_bytes: int
    env_var: str | None
    use: str  # what the agent does with the file, for the message

    def applies_to(self, path: str, root: str) -> bool:
        """Whether a file (absolute path) is one this limit governs."""
        # The file name first: cheap, and most files fail it.
        if not fnmatch.fnmatchcase(os.path.basename(path), self.pattern.rsplit("/", 1)[-1]):
            return False
        relative = os.path.relpath(path, root).replace(os.sep, "/")
        return fnmatch.fnmatchcase(relative, self.pattern)


@dataclass(frozen=True)
class Cut:
    """Where an agent stops reading a text: the byte and the character it falls in."""

    limit: ContextLimit
    limit_bytes: int  # the limit in force (the environment may change it)
    size: int  # bytes of the whole text
    line: int  # 0-based line and code-point column of the first character not read whole
    col: int
    end_line: int  # the end of the text
    end_col: int
    setting: str  # how the limit was set, for the message


def effective_limit(limit: ContextLimit, environ: Mapping[str, str]) -> tuple[int, str]:
    """The limit in bytes and how it was set (the default, or the environment variable)."""
    default = f"{limit.agent}'s default"
    raw = environ.get(limit.env_var, "").strip() if limit.env_var else ""
    if not raw:  # unset or empty
        return limit.limit_bytes, default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        return limit.limit_bytes, f"{default}; {limit.env_var}={raw!r} is not a number of bytes"
    return value, f"{limit.env_var}={value}"


def find_cut_among(
    limits: Sequence[ContextLimit], text: str, path: str, root: str, environ: Mapping[str, str]
) -> Cut | None:
    """Where one of these limits makes an agent stop reading this file, if one does."""
    for limit in limits:
        if not limit.applies_to(path, root):
            continue
        limit_bytes, setting = effective_limit(limit, environ)
        # Quick exit: a text is never longer in UTF-8 bytes than 4 per code point.
        if len(text) * 4 <= limit_bytes:
            continue
        data = text.encode("utf-8", "surrogatepass")
        if len(data) <= limit_bytes:
            continue
        # The characters read whole; a character cut in half counts as cut.
        read = data[:limit_bytes].decode("utf-8", "ignore")
        line = read.count("\n")
        col = len(read) - (read.rfind("\n") + 1)
        lines = text.split("\n")
        return Cut(
            limit, limit_bytes, len(data), line, col, len(lines) - 1, len(lines[-1]), setting
        )
    return None
