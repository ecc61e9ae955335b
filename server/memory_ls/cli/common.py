"""What every command module shares: the exit statuses, `UsageError` and `_relative`."""

from __future__ import annotations

import os

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_REFUSED = 3


class UsageError(Exception):
    """A mistake in how the tool was called (exit status 2)."""


def _relative(path: str, root: str) -> str:
    """A path relative to the root where it is inside it, else absolute."""
    relative = os.path.relpath(path, root)
    return path if relative.startswith("..") else relative
