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


class IndexState(TypedDict):
    """What a write did to the agent's index of its folder (Claude Code's MEMORY.md)."""

    path: str
    change: Literal["added", "removed", "renamed", "unchanged"]
    line: int | None  # 1-based line of the memory's entry
    entryLoaded: bool  # whether the agent loads that line
    loadedLines: int
    totalLines: int
    limitLines: int
    totalBytes: int
    limitBytes: int


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
    index: NotRequired[IndexState]


class RelatedLink(TypedDict):
    """A memory the read one links to: its title, or broken when no memory has the name."""

    name: str
    title: NotRequired[str]
    broken: bool


class Backlink(TypedDict):
    """A memory that links to the read one, and its first linking line (1-based)."""

    name: str
    line: int
    text: str


class Related(TypedDict):
    """The memories one link away from the read one, and how many more were left out."""

    links: list[RelatedLink]
    moreLinks: int
    backlinks: list[Backlink]
    moreBacklinks: int


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
    supersededBy: list[str]
    related: NotRequired[Related]


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


class BrokenLink(TypedDict):
    """A memory whose link a delete broke, and its first such line (1-based)."""

    name: str
    path: str
    line: int


class DeleteResult(TypedDict):
    """The result of delete_memory (`memory.delete`)."""

    name: str
    path: str
    # The memories that link to the deleted one (at most 20), and how many more do.
    brokenLinks: NotRequired[list[BrokenLink]]
    moreBrokenLinks: NotRequired[int]
    index: NotRequired[IndexState]


class MoveResult(TypedDict):
    """The result of rename_memory (`memory.move`)."""

    name: str
    newName: str
    path: str
    updatedReferences: int
    # The memories whose references were rewritten (at most 20), and how many more were.
    rewritten: NotRequired[list[str]]
    moreRewritten: NotRequired[int]
    diagnostics: list[Finding]
    index: NotRequired[IndexState]


class ListedMemory(TypedDict):
    """One memory in a listing; its title is its first heading, else its first line."""

    name: str
    path: str
    scope: Literal["project", "global"]
    folder: str
    tags: list[str]
    updatedAt: str | None
    readOnly: bool
    validName: bool  # False: a name memory-ls would not create (Serena may have)
    shadows: list[str]
    title: str | None
    supersededBy: list[str]  # newer memories that replace it: read those


class NameGroup(TypedDict):
    """Memories whose names start alike (up to a `/` or `_`): list them with this prefix."""

    prefix: str
    count: int


class FolderCount(TypedDict):
    """How many of the memories counted are in one folder."""

    folder: str
    count: int


class ListResult(TypedDict):
    """The result of list_memories (`memory.list`): a page of memories, or (view "topics")
    their counts by group and folder. `total` is left out when a tag filter stopped reading
    early; `next_cursor` is there when more memories follow."""

    memories: NotRequired[list[ListedMemory]]
    total: NotRequired[int]
    remaining: NotRequired[int]
    next_cursor: NotRequired[str]
    base: NotRequired[str]
    groups: NotRequired[list[NameGroup]]
    ungrouped: NotRequired[int]
    folders: NotRequired[list[FolderCount]]


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
    warnings: NotRequired[list[str]]  # "merge-conflict": it holds unresolved conflict markers
    # Search by meaning on ([search.meaning]): its cosine similarity to the query, when it
    # is among the nearest in meaning (the score is then the fused rank's).
    similarity: NotRequired[float]


class AgentFileMatch(TypedDict):
    """An agent's file (CLAUDE.md, AGENTS.md, a rule, auto memory...) that answers the
    search, ranked among those files only, and its best line (1-based)."""

    path: str  # relative to the store's root inside it, else absolute
    line: int
    text: str
    agent: str  # "claude", "codex", "cursor", "copilot" or "cline"
    kind: str  # "instructions", "rule", "import", "memory-index", "topic", "memory-bank"


class SearchResult(TypedDict):
    """The result of search_memories: one row per memory, best first."""

    query: str
    mode: Literal["relevance", "all_words"]
    memories: list[SearchMemory]
    total: int  # memories listed in all: those that match, and newer ones that supersede one
    more: int  # of those, how many come after these
    next_cursor: str | None  # pass as `cursor` for the next ones
    ignoredWords: list[str]  # stop words the ranking did not require
    # all_words mode, nothing found: how many memories hold some of the words.
    someWords: NotRequired[int]
    # Nothing matched the query: the closest words of memory names and tags, to search if
    # they are what was meant (`paymnt` -> `payments`); not searched.
    suggestion: NotRequired[str]
    # The first page of a search of the project without tags: the agents' files that
    # match (best first, scores not comparable with the memories'), and how many more do.
    agentFiles: NotRequired[list[AgentFileMatch]]
    moreAgentFiles: NotRequired[int]
    # What the answer says of how it was found: search by meaning still embedding the
    # memories, its model loading, or its provider failing (words only meanwhile).
    notes: NotRequired[list[str]]


class MentionLine(TypedDict):
    """A line of a memory that mentions the target (1-based), and how."""

    line: int
    text: str
    match: Literal["path", "inside", "name", "symbol"]


class MemoryAbout(TypedDict):
    """A memory that mentions the target, with its mentioning lines."""

    name: str
    path: str
    scope: Literal["project", "global"]
    title: str
    match: Literal["path", "inside", "name", "symbol"]
    lines: list[MentionLine]
    moreLines: int
    supersededBy: list[str]  # newer memories that replace it: read those
    warnings: NotRequired[list[str]]  # "merge-conflict": it holds unresolved conflict markers


class AboutResult(TypedDict):
    """The result of find_memories_about (`memory.about`)."""

    target: str
    targetPath: str  # the target as a workspace-relative path
    memories: list[MemoryAbout]
    more: int
