"""All the diagnostics of one Markdown text, and the encoding of the file behind an editor's."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from memory_ls.core.rules.document import parse_document
from memory_ls.core.rules.references import Reference, find_references
from memory_ls.core.rules.supersede import KEY_WORD, SupersedeGraph, declaration
from memory_ls.core.services.diagnostics.base import (
    READ_LIMIT_FACTOR,
    Diagnostic,
    Names,
    read_for_check,
)
from memory_ls.core.services.diagnostics.line_scans import LineScans, secret_diagnostics
from memory_ls.core.services.diagnostics.memory_checks import (
    conflict_diagnostics,
    memory_diagnostics,
    reference_diagnostics,
)
from memory_ls.core.services.diagnostics.repository import repository_diagnostics
from memory_ls.core.services.diagnostics.supersede import supersede_counts, supersede_diagnostics
from memory_ls.core.storage.folders import StoreConfig
from memory_ls.core.storage.memory import MemoryFile


def text_diagnostics(
    config: StoreConfig,
    index: Names,
    path: str,
    text: str | None,
    memory: MemoryFile | None,
    shadowed: Mapping[str, MemoryFile],
    size: int | None = None,
    encoding_problem: str | None = None,
    scans: LineScans | None = None,
    refs: Sequence[Reference] | None = None,
    exists: Callable[[str], bool] | None = None,
    supersedes: SupersedeGraph | None = None,
) -> list[Diagnostic]:
    """Diagnostics of one Markdown text: memory-file checks when it is a memory, then references.

    `text` is None for a file too large to read; binary text is not searched for links.
    `scans` carries an open document's line-by-line scans from one version to the next;
    `refs` are the text's references when the caller has found them already; `exists`
    answers whether a repository path exists (`stale-path`; default: on disk);
    `supersedes` is every memory's supersede relations (`superseded`; default: not checked).
    """
    found: list[Diagnostic] = []
    limit = READ_LIMIT_FACTOR * config.max_memory_bytes
    if text is not None and size is None and len(text) * 4 > limit:
        size = len(text.encode("utf-8", "surrogatepass"))
    if size is not None and size > limit:
        text = None  # far too large: only `too-large`, as `check` reports it (bounded work)
    readable = text is not None and encoding_problem is None
    if memory is not None:
        doc = parse_document(text) if readable and text is not None else None
        real_size = len((text or "").encode("utf-8")) if size is None else size
        found.extend(memory_diagnostics(memory, doc, real_size, config, shadowed.get(memory.path)))
        if encoding_problem is not None:
            found.append(
                Diagnostic(
                    memory.path,
                    0,
                    0,
                    0,
                    0,
                    "invalid-encoding",
                    f"This memory is not UTF-8 text ({encoding_problem}); agents and editors "
                    "cannot read it reliably. Re-save it as UTF-8 or remove it.",
                )
            )
        if readable and text is not None:
            found.extend(conflict_diagnostics(memory.path, text))
        if readable and text is not None and memory.scope == "project":
            found.extend(secret_diagnostics(memory.path, text, scans.secrets if scans else None))
        if supersedes is not None and doc is not None and supersede_counts(memory, shadowed):
            raw = doc.raw_frontmatter
            own = (
                declaration(memory.qualified, doc.metadata, raw)
                if raw is not None and KEY_WORD in raw
                else None
            )
            found.extend(supersede_diagnostics(memory, own, supersedes))
    if readable and text is not None:
        if refs is None:
            refs = scans.references.find(text) if scans else find_references(text)
        found.extend(reference_diagnostics(path, refs, config, index))
        found.extend(
            repository_diagnostics(
                config, path, text, memory, exists, scans.paths if scans else None
            )
        )
    return found


def editor_encoding_problem(path: str, text: str, max_memory_bytes: int) -> str | None:
    """What is wrong with the encoding of the file behind an editor's text, if anything.

    Editors show bytes that are not UTF-8 as U+FFFD and keep NULs, so the file is read
    only when its text holds one of those.
    """
    if "\ufffd" not in text and "\x00" not in text:
        return None
    try:
        return read_for_check(path, max_memory_bytes)[2]
    except OSError:
        return None
