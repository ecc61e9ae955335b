"""The MCP tools' result shapes (SPEC 3.3 and what agents are told), as output schemas."""

from typing import Literal

from typing_extensions import NotRequired, TypedDict


class Finding(TypedDict):
    """One diagnostic of the memory a write touched (line and column 1-based)."""

    code: str
    severity: str
    line: int
    column: int
    message: str
    new: bool
    fix: NotRequired[str]


class SaveResult(TypedDict):
    """The result of write_memory (`memory.save`)."""

    name: str
    path: str
    scope: Literal["project", "global"]
    folder: str
    created: bool
    routedBy: Literal["existing", "prefix", "topic", "global", "default"]
    version: str
    previousVersion: str | None
    bytesBefore: int | None
    bytesAfter: int
    diagnostics: list[Finding]


class ReadResult(TypedDict):
    """The result of read_memory (`memory.read`)."""

    name: str
    path: str
    scope: Literal["project", "global"]
    folder: str
    content: str
    tags: list[str]
    createdAt: str | None
    updatedAt: str | None
    readOnly: bool
    version: str
    warning: NotRequired[str]


class EditResult(TypedDict):
    """The result of edit_memory (`memory.edit`)."""

    name: str
    path: str
    replacements: int
    version: str
    previousVersion: str | None
    bytesBefore: int | None
    bytesAfter: int
    diagnostics: list[Finding]


class DeleteResult(TypedDict):
    """The result of delete_memory (`memory.delete`)."""

    name: str
    path: str


class MoveResult(TypedDict):
    """The result of rename_memory (`memory.move`)."""

    name: str
    newName: str
    path: str
    updatedReferences: int
    diagnostics: list[Finding]


class ListedMemory(TypedDict):
    """One memory in a listing."""

    name: str
    path: str
    scope: Literal["project", "global"]
    folder: str
    tags: list[str]
    updatedAt: str | None
    readOnly: bool
    shadows: list[str]


class ListResult(TypedDict):
    """The result of list_memories (`memory.list`)."""

    memories: list[ListedMemory]


class SearchLine(TypedDict):
    """One of a memory's best matching lines (1-based line of the file)."""

    line: int
    text: str


class SearchMemory(TypedDict):
    """One memory a search found."""

    name: str
    path: str
    title: str  # its first heading, else its first line
    score: float  # 1-2: name or heading holds every word; 0.5-1: every word; below: some
    matched: list[str]  # the query's words (and phrases) it holds
    supersededBy: list[str]  # newer memories that replace it: read those
    lines: list[SearchLine]  # its best 1-3 lines


class SearchResult(TypedDict):
    """The result of search_memories: one row per memory, best first."""

    query: str
    mode: Literal["relevance", "all_words"]
    memories: list[SearchMemory]
    total: int  # memories that match in all
    more: int  # of those, how many come after these
    next_cursor: str | None  # pass as `cursor` for the next ones
    ignoredWords: list[str]  # stop words the ranking did not require
    # all_words mode, nothing found: how many memories hold some of the words.
    someWords: NotRequired[int]
