"""`memory.links` over `workspace/executeCommand`: one memory's backlinks ("linked from",
each line that links) and outgoing links (each reference, resolved or broken), for an
editor's links view. From the link index and the open documents, as references are.

Other agents' files (the set lsp/agents.py keeps) answer too: a CLAUDE.md's imports and
MEMORY.md's links among the outgoing links (`form` "import" / "index"), the files that
import or index a file among its backlinks (`kind` "import" / "index"), and an agent's
file's `[[references]]` among a memory's backlinks. Their texts: the editor's, else the
disk's (kept while unchanged)."""

from __future__ import annotations

import os
from typing import Any

from pygls.uris import to_fs_path

from memory_ls.core.layouts import AgentFile
from memory_ls.core.layouts.claude import NAME as CLAUDE
from memory_ls.core.operations.agent_files import KnownAgentFiles, Reader
from memory_ls.core.operations.agent_navigation import shown
from memory_ls.core.operations.graph_agents import IMPORTED, AgentTexts
from memory_ls.core.operations.link_view import (
    Backlink,
    FileLink,
    LinkLine,
    OutgoingLink,
    agent_backlinks,
    backlinks,
    file_links_in,
    file_links_to,
    index_resolver,
    outgoing_links,
)
from memory_ls.core.operations.navigation import LargeFileReferences
from memory_ls.core.rules.errors import InvalidArguments, MemoryStoreError, NotFound, OutsideStore
from memory_ls.core.rules.names import did_you_mean, normalize_input
from memory_ls.core.storage.fsio import read_utf8
from memory_ls.core.storage.memory import MemoryFile
from memory_ls.core.store import check_scope
from memory_ls.lsp import agents
from memory_ls.lsp.commands import STRING, Command, check_arguments, refusal
from memory_ls.lsp.server import MemoryServer
from memory_ls.lsp.targets import file_uri, open_markdown, wait_for_names
from memory_ls.lsp.text import client_column

COMMAND = "memory.links"
# Long notes that link to many memories, parsed once while they stay as they are.
_LARGE = LargeFileReferences()
# The agents' files as on disk, read again when they change.
_AGENT_TEXTS = AgentTexts()
# Only the keys are checked here; the call is this module's own (it needs the index).
_ARGUMENTS = Command({}, {"uri": STRING, "name": STRING, "scope": STRING}, lambda s, a: {})


def register(server: MemoryServer) -> None:
    """Register the `memory.links` command."""

    @server.command(COMMAND)
    async def memory_links(ls: MemoryServer, *arguments: object) -> dict[str, Any]:
        try:
            args = check_arguments(COMMAND, _ARGUMENTS, arguments)
            if ("uri" in args) == ("name" in args):
                raise InvalidArguments(
                    f"{COMMAND} takes either uri or name: {{uri?, name?, scope?}}."
                )
            complete = await wait_for_names(ls)
            known = await agents.of(ls).wait()
            documents = open_markdown(ls)
            texts = {path: doc.text for path, doc in documents.items()}
            uri_texts = {path: doc.uri for path, doc in documents.items()}
            read = _reader(ls)
            if "uri" in args:
                uri = args["uri"]
                path, memory = _document(ls, uri, texts, known)
                text = texts.get(path, "")
            else:
                memory = _named(ls, args["name"], check_scope(args.get("scope")))
                path, uri = memory.path, file_uri(memory.path)
                text = texts.get(path, "")
            return await ls.in_store_thread(
                links_answer,
                ls,
                uri,
                path,
                memory,
                text,
                texts,
                uri_texts,
                complete,
                known,
                read,
            )
        except MemoryStoreError as error:
            raise refusal(error) from error


def _reader(ls: MemoryServer) -> Reader:
    """Files as the editor has them open (any file), else as on disk (made on the event loop)."""
    opened: dict[str, str] = {}
    for document in list(ls.workspace.text_documents.values()):
        path = to_fs_path(document.uri)
        if path:
            opened[os.path.normpath(path)] = document.source
    return lambda path: opened[path] if path in opened else _AGENT_TEXTS.read(path)


def _document(
    ls: MemoryServer, uri: str, texts: dict[str, str], agent_files: KnownAgentFiles | None
) -> tuple[str, MemoryFile | None]:
    """The path of an open Markdown document, an indexed memory file or an agent's file
    (or one a CLAUDE.md imports), and the memory it is; OutsideStore for anything else (no
    other file outside the store is read)."""
    raw = to_fs_path(uri) if uri.startswith("file:") else None
    path = os.path.normpath(os.path.abspath(raw)) if raw else None
    if path is not None and path in texts:
        return path, ls.index.memory_for(path)
    known = ls.index.file(path) if path is not None else None
    if path is not None and known is None and agent_files and agent_files.related(path):
        return path, None
    if path is None or known is None:
        raise OutsideStore(
            f"{COMMAND} answers for memory files, agents' files and open Markdown documents;"
            f" {uri!r} is none of them."
        )
    return path, known


def _named(ls: MemoryServer, raw: str, scope: str | None) -> MemoryFile:
    """The memory a name resolves to; NotFound with the closest names."""
    name, is_global = normalize_input(raw)
    target = ("global/" if is_global else "") + name
    entry = ls.index.lookup(target, scope)
    if entry is None:
        close = did_you_mean(target, ls.index.names(scope))
        raise NotFound(f"No memory named {target!r}.", close)
    return entry.memory


def links_answer(
    ls: MemoryServer,
    uri: str,
    path: str,
    memory: MemoryFile | None,
    text: str,
    texts: dict[str, str],
    uris: dict[str, str],
    complete: bool,
    known: KnownAgentFiles | None = None,
    read: Reader | None = None,
) -> dict[str, Any]:
    """The answer of `memory.links` (blocking: reads the files that link to the memory)."""
    read = read or _AGENT_TEXTS.read
    agent_file = known.by_path.get(path) if known is not None else None
    related = known is not None and known.related(path)
    if path not in texts:  # an indexed memory file or an agent's file, not open
        if memory is None and related:
            text = read(path) or ""
        else:
            try:
                text = read_utf8(path) or ""
            except OSError:  # gone since it was indexed
                text = ""
    index = ls.index
    incoming: list[Backlink] = []
    if memory is not None and memory.valid:
        unsettled = index.memory_paths_at(sorted(ls.unsettled_paths()))
        incoming = backlinks(index, memory, texts, unsettled, _LARGE)
        if known is not None:
            found = {link.path for link in incoming}
            incoming += agent_backlinks(index, known, memory, read, found)
    files_out: list[FileLink] = []
    if known is not None:
        incoming += file_links_to(known, path, read)
        files_out = file_links_in(known, path, text, read)
    outgoing = outgoing_links(text, index_resolver(index))
    links_to = [(link.where.line, link.where.start, _outgoing(ls, link)) for link in outgoing] + [
        (link.where.line, link.where.start, _file_link(ls, known, link)) for link in files_out
    ]
    if files_out:
        links_to.sort(key=lambda row: (row[0], row[1]))
    return {
        "uri": uri,
        "path": path,
        "name": memory.qualified if memory is not None else None,
        "scope": memory.scope if memory is not None else None,
        "agent": _agent(known, path, agent_file) if related and known is not None else None,
        "complete": complete,
        "linkedFrom": [_incoming(ls, link, uris) for link in incoming],
        "linksTo": [row[2] for row in links_to],
    }


def _agent(known: KnownAgentFiles, path: str, agent_file: AgentFile | None) -> dict[str, Any]:
    """What an agent's file is: its layout, its kind ("imported": no agent lists it but a
    CLAUDE.md imports it) and its path for people."""
    repository = known.repository
    return {
        "layout": agent_file.layout if agent_file is not None else CLAUDE,
        "kind": agent_file.kind if agent_file is not None else IMPORTED,
        "scope": agent_file.scope if agent_file is not None else None,
        "shown": shown(path, repository.root, repository.home),
    }


def _range(ls: MemoryServer, where: LinkLine) -> dict[str, Any]:
    """The referenced name's range, in the client's units."""
    return {
        "start": {"line": where.line, "character": client_column(ls, where.text, where.start)},
        "end": {"line": where.line, "character": client_column(ls, where.text, where.end)},
    }


def _incoming(ls: MemoryServer, link: Backlink, uris: dict[str, str]) -> dict[str, Any]:
    memory = link.memory
    return {
        "kind": link.kind,
        "uri": uris.get(link.path) or file_uri(link.path),
        "path": link.path,
        "name": memory.qualified if memory is not None else None,
        "scope": memory.scope if memory is not None else None,
        "links": [
            {"line": where.line, "range": _range(ls, where), "text": where.text}
            for where in link.lines
        ],
    }


def _outgoing(ls: MemoryServer, link: OutgoingLink) -> dict[str, Any]:
    ref, target = link.reference, link.memory
    return {
        "target": ref.target,
        "label": ref.label,
        "form": ref.form,
        "line": link.where.line,
        "range": _range(ls, link.where),
        "text": link.where.text,
        "broken": target is None,
        "name": target.qualified if target is not None else None,
        "uri": file_uri(target.path) if target is not None else None,
        "path": target.path if target is not None else None,
    }


def _file_link(ls: MemoryServer, known: KnownAgentFiles | None, link: FileLink) -> dict[str, Any]:
    """An import or MEMORY.md link as an outgoing link (`name`: the file's path for people)."""
    pointer = link.pointer
    exists = os.path.isfile(pointer.target)
    repository = known.repository if known is not None else None
    name = (
        shown(pointer.target, repository.root, repository.home)
        if repository is not None
        else pointer.target
    )
    return {
        "target": pointer.span.written,
        "label": None,
        "form": pointer.kind,
        "line": link.where.line,
        "range": _range(ls, link.where),
        "text": link.where.text,
        "broken": not exists,
        "name": name,
        "uri": file_uri(pointer.target) if exists else None,
        "path": pointer.target,
    }
