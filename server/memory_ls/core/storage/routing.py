"""Routing rules: which folder a new memory goes to (SPEC 2.4), as pure functions."""

from __future__ import annotations

from collections.abc import Sequence

from memory_ls.core.rules.names import caps_prefixes, has_topic, prefix_run
from memory_ls.core.storage.folders import Folder


def prefix_folder(name: str, additional: Sequence[Folder]) -> Folder | None:
    """The additional folder an ALL-CAPS prefix routes to: longest prefix, first configured."""
    for prefix in caps_prefixes(name):
        wanted = prefix.lower()
        for folder in additional:
            if folder.label.lower() == wanted:
                return folder
    return None


def route_new(
    name: str, is_global: bool, primary: Folder, additional: Sequence[Folder]
) -> tuple[Folder | None, str]:
    """Where a memory that does not exist yet goes, and why.

    Returns (folder, routedBy); the folder is None for a global name when the global
    scope is disabled, which the caller reports.
    """
    if is_global:
        return None, "global"
    if has_topic(name):
        return primary, "topic"
    target = prefix_folder(name, additional)
    if target is not None:
        return target, "prefix"
    return primary, "default"


def unknown_prefix(name: str, additional: Sequence[Folder]) -> str | None:
    """The ALL-CAPS prefix of a name that matches no additional folder, if any.

    With no additional folders configured prefixes are not in use, so none is unknown.
    """
    if not additional:
        return None
    run = prefix_run(name)
    if run is None or prefix_folder(name, additional) is not None:
        return None
    return run


def routing_prefixes(additional: Sequence[Folder]) -> list[str]:
    """The prefixes that route somewhere (`FEATURE_`, `SPEC_`), for completion and hints."""
    seen: dict[str, None] = {}
    for folder in additional:
        label = folder.label
        parts = label.split("_")
        if all(p.isascii() and p.isalpha() for p in parts):
            seen.setdefault(label.upper() + "_", None)
    return list(seen)
