"""What the MCP tools say to the model: descriptions, where a memory went and why, listings."""

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from memory_ls.core.rules.errors import InvalidArguments
from memory_ls.core.rules.names import GLOBAL_PREFIX, caps_prefixes
from memory_ls.core.storage.folders import Folder, StoreConfig
from memory_ls.core.storage.listing import decode_cursor
from memory_ls.core.storage.routing import routing_prefixes, unknown_prefix

# ----- tool descriptions (templates: `{write_memory}` is that tool's name as offered) -------

_NAMES = (
    "Names are segments joined by `/` (letters, digits, `_`, `-`, `.`, space; a leading "
    "`mem:` and a trailing `.md` are dropped); case matters."
)

WRITE_DESCRIPTION = f"""Create or overwrite a memory: a Markdown note kept between sessions.

Where it goes: an existing memory is overwritten in place, wherever it is. A name with an
ALL-CAPS prefix (`FEATURE_auth`, `FEATURE_BUILDER_x`) goes to the additional (shared)
folder named after the longest configured prefix (`feature/`, `feature_builder/`;
`{{list_memories}}` shows the prefixes). A topic path (`auth/login_flow`) goes under the
primary folder; a `global/` name (or scope "global") to the personal global folder, for
notes about you, not this project; anything else to the primary folder.
{_NAMES} The content may start with YAML frontmatter (`tags` are stored there). Link other
memories as `mem:NAME` (in backticks) or [[NAME]].

The answer says where it went and why, its version, and what the check finds in it
(broken links, missing paths, possible duplicates), marking what this write introduced:
fix those. Refused: content over max_chars, text that is not UTF-8, frontmatter that does
not parse, conflict markers, credentials (say where a secret is kept instead), and
replacing a memory you read that someone changed since (pass expected_version to be
explicit). create_only=true refuses to replace an existing memory."""

READ_DESCRIPTION = """Read a memory: its text exactly as stored (frontmatter included);
where it is and its version are in the structured content. Read the memories relevant to a
task before starting it. A memory with an unresolved merge conflict, or superseded by a
newer one, is shown after a warning. An unknown name is answered with the closest names.
Lookup order: primary folder (with its topics), additional folders, global folder; the
first hit wins. `global/NAME` or scope "global" reads the global one."""

# Memories per page of list_memories unless the caller asks (the page's structured content
# is some 300 characters a memory, its text 30 to 100: 50 keep an answer near 20,000).
DEFAULT_LIST_LIMIT = 50
MAX_LIST_LIMIT = 500
# Name groups shown: to narrow a long listing, and in view "topics".
GROUPS_IN_LISTING = 12
GROUPS_IN_TOPICS = 60

LIST_DESCRIPTION = f"""List memories by name, a page at a time.

The first text is Serena's listing, JSON `{{{{"memories": [...], "read_only_memories": [...]}}}}`;
the text after it says how many match in all and how to see more: the answer's next_cursor
as `cursor` (`limit`: page size, default {DEFAULT_LIST_LIMIT}, at most {MAX_LIST_LIMIT}).
Narrow with topic ("auth": names `auth/...`; "global"), prefix (`FEATURE_`), scope
("project", "global", "all") or tags (all must match; they read the files). view "titles":
one row per memory (name, title, tags); view "topics": counts per folder and name group,
no names (start there on a large store). Superseded memories are marked. Empty means
nothing is stored under those filters. To find what is known about a task,
{{search_memories}} is quicker than paging."""

EDIT_DESCRIPTION = """Replace content in an existing memory, in place.

mode "literal" matches `needle` exactly; mode "regex" takes a Python regular expression
(MULTILINE and DOTALL). `repl` is inserted verbatim, except that in regex mode $!1, $!2, ...
insert the needle's groups. No match is an error; several are an error unless
allow_multiple_occurrences is true. expected_version (from a read) makes the edit
conditional. The answer lists what the check finds, marking what this edit introduced.
To replace the whole text use {write_memory}."""

DELETE_DESCRIPTION = """Delete a memory (lookup order: primary, additional folders,
global; `global/NAME` for the global one). Only when the user asked or agreed.
expected_version (from a read) refuses the delete if it changed since. The answer names
the memories whose links to it now break."""

RENAME_DESCRIPTION = """Rename or move a memory ("/" in the name makes topics). The new
name is routed like a new {write_memory}; every `mem:` or [[link]] to the old name is
rewritten. Refused if the new name is taken. The answer names the rewritten memories and
what the check finds under the new name."""

SEARCH_DESCRIPTION = """Search the memories before starting a task: plain words or a
question (`how long do session tokens last`) or keywords. Ranked by relevance (name and
first heading weigh most; `retries` finds `retry`; "how", "the" not required); memories
holding every word first. One row per memory: name, title, score, words matched, best lines
with line numbers, and newer memories that supersede it (read those instead). `"quoted
phrase"` matches in order, `auth*` a prefix; case and accents are ignored; a word never
matches inside another. all_words=true keeps memories holding every word. Filter by tags
(all must match) and scope. `limit` (default 10); the answer says how many more match and
`cursor` (its next_cursor) pages. No match is said plainly, with close words to try. The
first page also names other agents' files that match (CLAUDE.md, AGENTS.md, Cursor and
Copilot rules, Cline's memory bank, Claude Code's auto memory)."""


def serena_listing(memories: Sequence[Mapping[str, Any]]) -> str:
    """Serena's list_memories text: JSON of the sorted names, writable and read-only."""
    listing: dict[str, list[str]] = {}
    # As Serena's MemoriesList.to_dict: a key with no names is left out.
    for key, read_only in (("memories", False), ("read_only_memories", True)):
        listed = sorted(serena_name(m) for m in memories if m["readOnly"] is read_only)
        if listed:
            listing[key] = listed
    return json.dumps(listing, ensure_ascii=False)


def serena_name(memory: Mapping[str, Any]) -> str:
    """A listed memory's name as Serena spells it: `global/NAME` for a global one (SPEC 2.3)."""
    name: str = memory["name"]
    if memory["scope"] == "global" and not name.startswith(GLOBAL_PREFIX):
        return GLOBAL_PREFIX + name
    return name


def folder_at(config: StoreConfig, path: str) -> Folder | None:
    """The configured folder with this path."""
    return next((f for f in config.folders if f.path == path), None)


def folder_phrase(folder: Folder | None) -> str:
    """How a folder is named to the agent: "the additional folder feature"."""
    if folder is None:
        return "a configured folder"
    if folder.kind == "additional":
        suffix = " (read-only)" if folder.read_only else ""
        return f"the additional folder {folder.label}{suffix}"
    return f"the {folder.kind} folder"


def save_reason(result: Mapping[str, Any], config: StoreConfig) -> str:
    """Why a save went where it went, from its routedBy."""
    folder = folder_at(config, result["folder"])
    routed_by = result["routedBy"]
    if routed_by == "existing":
        return f"it already existed in {folder_phrase(folder)}"
    return placement_reason(result["name"], result["path"], config)


def placement_reason(name: str, path: str, config: StoreConfig) -> str:
    """Why a new memory (a fresh save or a move) landed at `path`."""
    folder = config.owner_of(path)
    if folder is None:
        return "outside the configured folders"
    if folder.kind == "global":
        return "global scope, so the personal global folder"
    if folder.kind == "additional":
        # Routing matched the folder's name to the name's ALL-CAPS prefix, case-insensitively.
        prefix = name[: len(folder.label)]
        return f"routed by prefix {prefix} to {folder_phrase(folder)}"
    if "/" in name:
        return "a topic path, so under the primary folder"
    return "no routing prefix applies, so the primary folder" + missed_prefix_hint(name, config)


def missed_prefix_hint(name: str, config: StoreConfig) -> str:
    """Why an ALL-CAPS prefix did not route: no such folder, or one configured but missing."""
    wanted = {p.lower() for p in caps_prefixes(name)}
    for missing in config.missing_additional:
        if os.path.basename(missing).lower() in wanted:
            return f"; the additional folder {missing} is configured but does not exist"
    prefix = unknown_prefix(name, config.additional)
    if prefix is None:
        return ""
    known = ", ".join(routing_prefixes(config.additional))
    return f"; prefix {prefix} matches no additional folder (routing prefixes: {known})"


class ListRequest(NamedTuple):
    """The arguments of a list_memories call, to say what was listed and how to go on."""

    topic: str
    scope: str | None
    tags: Sequence[str] | None
    prefix: str | None
    view: str
    limit: int | None
    cursor: str | None

    def filters(self) -> dict[str, Any]:
        """The listing's filters: those given, else those its cursor carries."""
        given: dict[str, Any] = {
            "topic": self.topic or None,
            "scope": self.scope if self.scope != "all" else None,
            "tags": sorted(self.tags) if self.tags else None,
            "prefix": self.prefix or None,
        }
        if self.cursor is not None:
            try:
                _, carried = decode_cursor(self.cursor)
            except InvalidArguments:
                carried = {}
            for key, value in carried.items():
                if given.get(key) is None:
                    given[key] = value
        return given


def _count(number: int, word: str = "memory", plural: str = "memories") -> str:
    return f"{number:,} {word if number == 1 else plural}"


def filter_phrase(request: ListRequest) -> str:
    """What a listing was filtered by: ' under topic "auth" with tags a, b'."""
    filters = request.filters()
    parts = []
    if filters["topic"]:
        parts.append(f'under topic "{filters["topic"]}"')
    if filters["prefix"]:
        parts.append(f'named "{filters["prefix"]}..."')
    if filters["tags"]:
        parts.append("tagged " + ", ".join(filters["tags"]))
    if filters["scope"]:
        parts.append(f"in the {filters['scope']} scope")
    return "".join(" " + part for part in parts)


def _call(names: Mapping[str, str], **arguments: object) -> str:
    """A list_memories call as the agent would write it."""
    shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
    return f"{names['list_memories']}({shown})"


def _continuation(
    result: Mapping[str, Any],
    request: ListRequest,
    names: Mapping[str, str],
    groups: Mapping[str, Any] | None,
) -> list[str]:
    """How many memories this page shows, and how to see the others."""
    memories = result["memories"]
    total, remaining = result.get("total"), result.get("remaining")
    where = filter_phrase(request)
    lines = []
    if total is not None and remaining is not None:
        first = total - remaining - len(memories) + 1
        if memories and (first > 1 or remaining):
            last = first + len(memories) - 1
            lines.append(f"Memories {first:,}-{last:,} of {total:,}{where} (sorted by name).")
        else:
            shown = "listed" if request.view == "titles" else "all listed above"
            lines.append(f"{_count(total)}{where}, {shown}.")
    elif "next_cursor" in result:
        lines.append(f"{_count(len(memories))}{where}; more follow.")
    else:
        lines.append(f"{_count(len(memories))}{where}, the last of this listing.")
    cursor = result.get("next_cursor")
    if cursor is None:
        return lines
    more = f"{remaining:,} more" if remaining is not None else "More"
    lines.append(f"{more}: the next page is {_call(names, cursor=cursor)}.")
    if groups and groups["groups"]:
        shown = groups["groups"][:GROUPS_IN_LISTING]
        listed = ", ".join(f"{g['prefix']} ({g['count']:,})" for g in shown)
        hint = _call(names, prefix=shown[0]["prefix"])
        lines.append(
            f"Or narrow it by the start of the name, e.g. {hint}; largest groups: {listed}"
            + ("; and more" if len(groups["groups"]) > len(shown) else "")
            + '. view="topics" counts every group and folder.'
        )
    lines.append(
        f"To find what is known about a task, {names['search_memories']} with its words is "
        "quicker than paging."
    )
    return lines


def _empty(request: ListRequest, names: Mapping[str, str], every: int | None) -> str:
    """What an empty listing means."""
    where = filter_phrase(request)
    if where and every:
        return (
            f"No memories{where}; the store holds {_count(every)} in all "
            f"({_call(names, view='topics')} counts them by name group and folder)."
        )
    return (
        f"No memories{where}: nothing is stored{' there' if where else ' yet'}, so there is "
        f"nothing to read before a task. Save what is worth keeping with {names['write_memory']}."
    )


def listing_text(
    result: Mapping[str, Any],
    request: ListRequest,
    config: StoreConfig,
    names: Mapping[str, str],
    groups: Mapping[str, Any] | None = None,
    every: int | None = None,
) -> str:
    """The text after Serena's JSON: how many memories, how to see more, where new ones go.

    It names no memory: the JSON above holds the page's names.
    """
    if not result["memories"] and "next_cursor" not in result:
        lines = [_empty(request, names, every)]
    else:
        lines = _continuation(result, request, names, groups)
        read_only = sum(1 for m in result["memories"] if m["readOnly"])
        if read_only:
            lines.append(f"{_count(read_only)} of this page can be read but not written.")
        superseded = [m for m in result["memories"] if m.get("supersededBy")]
        if superseded:
            # Serena's JSON above cannot say it: an outdated memory is named here.
            listed = "; ".join(f"{m['name']} by {', '.join(m['supersededBy'])}" for m in superseded)
            lines.append(f"Superseded (read the newer memory instead): {listed}.")
        if result.get("next_cursor") is None:
            lines.append('view="titles" gives each one\'s title and tags.')
    lines.append(routing_summary(config))
    return "\n".join(lines)


def titles_text(
    result: Mapping[str, Any],
    request: ListRequest,
    config: StoreConfig,
    names: Mapping[str, str],
    groups: Mapping[str, Any] | None = None,
    every: int | None = None,
) -> str:
    """view "titles": one row per memory (name, title, tags), then how to see more."""
    memories = result["memories"]
    if not memories and "next_cursor" not in result:
        return _empty(request, names, every) + "\n" + routing_summary(config)
    rows = [_title_row(memory) for memory in memories]
    tail = _continuation(result, request, names, groups)
    return "\n".join([tail[0], *rows, *tail[1:], routing_summary(config)])


def _title_row(memory: Mapping[str, Any]) -> str:
    name: str = memory["name"]
    row = f"- {name}"
    title = memory.get("title")
    # A title that only repeats the name says nothing.
    if title and _plain(title) != _plain(name.rsplit("/", 1)[-1]):
        row += f": {title}"
    extra = []
    if memory["tags"]:
        extra.append("tags " + ", ".join(memory["tags"]))
    if memory["readOnly"]:
        extra.append("read-only")
    if memory["shadows"]:
        extra.append(f"shadows {len(memory['shadows'])} other file(s)")
    if memory.get("supersededBy"):
        extra.append(f"SUPERSEDED by {', '.join(memory['supersededBy'])}: read that instead")
    return row + (f" [{'; '.join(extra)}]" if extra else "")


def _plain(text: str) -> str:
    return " ".join(text.replace("_", " ").replace("-", " ").lower().split())


def topics_text(
    result: Mapping[str, Any],
    request: ListRequest,
    config: StoreConfig,
    names: Mapping[str, str],
) -> str:
    """view "topics": counts by folder and by name group, and how to list one."""
    total = result["total"]
    where = filter_phrase(request)
    if not total:
        return _empty(request, names, None) + "\n" + routing_summary(config)
    folders = "; ".join(
        f"{folder_phrase(folder_at(config, f['folder'])).removeprefix('the ')} {f['count']:,}"
        for f in result["folders"]
    )
    lines = [f"{_count(total)}{where}. By folder: {folders}."]
    groups = result["groups"]
    base = result["base"]
    if groups:
        under = f' after "{base}"' if base else ""
        lines.append(
            f"By the start of the name (up to the next / or _{under}), largest first; "
            f"list a group with {_call(names, prefix=groups[0]['prefix'])}:"
        )
        shown = groups[:GROUPS_IN_TOPICS]
        lines += [f"- {g['prefix']} {g['count']:,}" for g in shown]
        rest = groups[len(shown) :]
        if rest:
            lines.append(
                f"- ... {_count(len(rest), 'group', 'groups')} more, with "
                f"{_count(sum(g['count'] for g in rest))}"
            )
    if result["ungrouped"]:
        after = f' after "{base}"' if base else ""
        lines.append(f"{_count(result['ungrouped'])} with no / or _{after}, in no group.")
    given = {k: v for k, v in request.filters().items() if v}
    if base and not groups:
        given["prefix"] = base
    lines.append(
        f"Names: {_call(names, **given)}; with titles: {_call(names, **given, view='titles')}."
    )
    lines.append(routing_summary(config))
    return "\n".join(lines)


def routing_summary(config: StoreConfig) -> str:
    """Where new memories go, for the agent choosing a name."""
    routes = [f"{p}... -> {f.path}" for p, f in prefix_routes(config.additional)]
    text = "New memories: " + ("; ".join(routes) + "; " if routes else "")
    text += f"other names -> {config.primary.path}"
    if config.global_folder is not None:
        text += f"; global/... -> {config.global_folder.path}"
    return text + "."


def prefix_routes(additional: Sequence[Folder]) -> list[tuple[str, Folder]]:
    """(prefix, folder) for each additional folder a prefix routes to, first configured wins."""
    routes: dict[str, Folder] = {}
    for prefix in routing_prefixes(additional):
        folder = next(f for f in additional if f.label.upper() + "_" == prefix)
        routes.setdefault(prefix, folder)
    return list(routes.items())


def instructions(config: StoreConfig, names: Mapping[str, str]) -> str:
    """The server instructions: what this store is, when to look in it, where memories go."""
    search, read, listing = names["search_memories"], names["read_memory"], names["list_memories"]
    return (
        "memory-ls keeps project memories (Markdown notes kept between sessions) for the "
        f"workspace {config.root}. Before a task, {search} with the task's words and "
        f"{read} the memories that look relevant; before changing a file, "
        f"{names['find_memories_about']} with its path. {listing} shows what exists, a page at a "
        'time (view="topics" counts memories by name group on a large store; pass the '
        "answer's next_cursor as cursor for the next page). An empty search or listing means "
        "nothing is stored on it: carry on without. Save what a later session should know with "
        f"{names['write_memory']}; its answer lists what the store's check finds in the memory "
        "(broken links, paths that no longer exist, near-duplicates): fix what it marks new. "
        # A write without a version is checked against the one read (mcp/session.py).
        "A memory you read or wrote and someone else changed since is not overwritten "
        "([version-conflict]): read it again, then retry. " + routing_summary(config)
    )
