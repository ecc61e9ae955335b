"""What the MCP tools say to the model: descriptions, where a memory went and why, listings."""

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from memory_ls.core.folders import Folder, StoreConfig
from memory_ls.core.names import GLOBAL_PREFIX, caps_prefixes
from memory_ls.core.routing import routing_prefixes, unknown_prefix

# ----- tool descriptions (templates: `{write_memory}` is that tool's name as offered) -------

_NAMES = (
    "Names are one or more segments joined by `/` (letters, digits, `_`, `-`, `.`, space; "
    "a leading `mem:` and a trailing `.md` are dropped); case matters."
)

WRITE_DESCRIPTION = f"""Create or overwrite a memory: a Markdown note kept between sessions.

Where it goes:
- A memory that already exists is overwritten in place, wherever it is.
- A name with an ALL-CAPS prefix, such as `FEATURE_auth` or `FEATURE_BUILDER_x`, goes to the
  additional (shared) folder named after the prefix (`feature/`, `feature_builder/`; the
  longest prefix wins) when that folder is configured. `{{list_memories}}` shows the prefixes.
- A topic path such as `auth/login_flow` goes under the primary folder.
- A `global/` name (or scope "global") goes to the personal global folder, outside the
  repository: use it for notes that are about you, not this project.
- Anything else goes to the primary folder.
{_NAMES} The content may start with YAML frontmatter; `tags` are stored there. Refer to
other memories in the text as `mem:NAME` (in backticks) or [[NAME]]. Content longer than
max_chars characters is refused.

The answer says where the memory went and why, its new version, and what the store's
check finds in it (broken links with the closest names, paths that do not exist, possible
duplicates, ...), marking what this write introduced: fix those. Content that is not UTF-8
text, frontmatter that does not parse, and credentials (keys, tokens, passwords) are refused;
say where a secret is kept instead of writing it. To replace a memory you read, pass the
version you read as expected_version: if someone changed it since, nothing is written.
create_only=true refuses to replace an existing memory."""

READ_DESCRIPTION = f"""Read a memory: the answer is the file's text exactly as stored
(frontmatter included), with where it is stored and its version as structured content
(include_version=true adds the version to the text). Read the memories likely relevant to
the current task before starting it. A file that is not UTF-8 text is refused or shown
after a warning. An unknown name is answered with the closest existing names.

Lookup order: the primary folder (with its topics), then the additional folders, then the
global folder; the first hit wins. `global/NAME` or scope "global" reads the global one.
{_NAMES}"""

LIST_DESCRIPTION = """List memories, optionally filtered by topic.

The first text is Serena's listing, JSON `{{"memories": [...], "read_only_memories": [...]}}`
(sorted names; a key with no names is left out). topic "auth" lists the memories named
`auth/...` (at any depth); "global" lists the global memories, "global/x" those named
`global/x/...`. memory-ls also filters by scope ("project", "global", "all"), by tags (all
must match) and by a name prefix (`FEATURE_`); the second text gives each memory's folder,
scope and tags, and the routing prefixes that send new memories to additional folders."""

EDIT_DESCRIPTION = f"""Replace content in an existing memory, in place (it is never moved).

mode "literal" matches `needle` exactly; mode "regex" takes a Python regular expression
with the MULTILINE and DOTALL flags (`.` matches newlines). `repl` is inserted verbatim,
except that in regex mode $!1, $!2, ... insert the groups the needle matched. Zero matches
is an error; more than one is an error unless allow_multiple_occurrences is true. To
replace the whole text use {{write_memory}}. expected_version (from a read) makes the edit
conditional on nobody having changed the memory since. The answer lists what the store's
check finds in the edited memory, marking what this edit introduced. {_NAMES}"""

DELETE_DESCRIPTION = f"""Delete a memory from wherever it is found (lookup order: primary,
additional folders, global; `global/NAME` deletes the global one). Only call it if
instructed explicitly or permission was granted by the user. expected_version (from a read)
refuses the delete if the memory changed since. {_NAMES}"""

RENAME_DESCRIPTION = f"""Rename or move a memory; use "/" in the name to organize it into
topics. The new name is routed like a new {{write_memory}} (an ALL-CAPS prefix moves it to
the matching additional folder, `global/` to the global folder), and every `mem:reference`
or [[reference]] to the old name in other memories is rewritten. Refused if the new name
is taken. The answer lists what the store's check finds in the memory under its new name.
{_NAMES}"""

SEARCH_DESCRIPTION = """Search the memories before starting a task: describe the task or
ask a question in plain words (`how long do session tokens last`), or give keywords. Memories
holding some of the words come back ranked by relevance (name and first heading weigh most;
`retries` also finds `retry`; words like "how" or "the" are not required); those holding
every word come first. One row per memory: name, title, score, the words it matched, its
best lines with line numbers, and the newer memories that supersede it (read those instead).
`"quoted phrase"` must match in order, `auth*` matches words starting with auth, case and
accents are ignored, and a word never matches inside another (login does not find relogin).
`all_words=true` keeps only memories holding every word as written. Filter by tags (all
must match) and scope ("project", "global", or "all", the default). `limit` caps the
memories (default 10; the answer is kept to a few thousand tokens); the answer says how
many more match, and `cursor` (its `next_cursor`) gives the next ones."""


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


def listing_text(memories: Sequence[Mapping[str, Any]], config: StoreConfig) -> str:
    """The list_memories text: one memory a line, then where new names would go."""
    lines = [f"{len(memories)} memor{'y' if len(memories) == 1 else 'ies'}:"]
    for memory in memories:
        where = folder_phrase(folder_at(config, memory["folder"])).removeprefix("the ")
        extra = [f"{memory['scope']}, {where}"]
        if memory["tags"]:
            extra.append("tags: " + ", ".join(memory["tags"]))
        if memory["readOnly"]:
            extra.append("read-only")
        if memory["shadows"]:
            extra.append(f"shadows {len(memory['shadows'])} other file(s)")
        lines.append(f"- {memory['name']} ({'; '.join(extra)})")
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
    """The server instructions: what this store is and where memories go (as at start)."""
    return (
        "memory-ls keeps project memories (Markdown notes) for the workspace "
        f"{config.root}. Write them with {names['write_memory']}; read with "
        f"{names['read_memory']}, {names['list_memories']} and {names['search_memories']}. "
        + routing_summary(config)
    )
