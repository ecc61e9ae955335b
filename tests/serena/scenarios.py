"""The scenarios: sequences generated from fixed seeds, and named cases from issue 12."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from differential import Scenario
from tree_snapshot import Snapshot, file_entry

SEEDS = range(16)
OPS_PER_SEED = 40
NFC_CAFE = "caf\u00e9"
NFD_CAFE = "cafe\u0301"

# Names as an agent would pass them, weighted: mostly memories that exist, some spellings
# Serena tidies (mem:, .md), names Serena accepts that are unusual, and invalid ones.
COMMON_NAMES = (
    "prefs",
    "notes",
    "todo",
    "auth/login",
    "auth/x",
    "global/prefs",
    "global/tips",
    "global/team/a",
)
SPELLED_NAMES = ("mem:notes", "notes.md", "mem:global/prefs.md", "mem:auth/x", "notes.md.md")
UNUSUAL_NAMES = (
    ".hidden",
    "-dash",
    "emoji_🚀",
    NFC_CAFE,
    NFD_CAFE,
    "trail.",
    "UPPER_case",
    "a b",
    "l" * 120,
    "global/.hidden2",
    "secret_keys",
    "ro/doc",
)
INVALID_NAMES = (
    "../x",
    "a//b",
    "global",
    "global/",
    "",
    "/abs",
    "a/./b",
    "wi:n",
    "con",
    "bell\x07",
    " padded ",
    "auth/",
)
NAME_WEIGHTS = ((COMMON_NAMES, 6), (SPELLED_NAMES, 2), (UNUSUAL_NAMES, 2), (INVALID_NAMES, 1))
# Names referred to as `mem:NAME` in contents (notes_old: a longer name a rename must skip).
REFERENCED = ("prefs", "notes", "notes_old", "auth/login", "auth/x", "global/prefs", "global/tips")
TOOL_WEIGHTS = {
    "write_memory": 20,
    "read_memory": 20,
    "list_memories": 10,
    "edit_memory": 25,
    "rename_memory": 15,
    "delete_memory": 10,
}
TOPICS = ("", "", "auth", "auth/", "global", "global/team", "nope")
LITERAL_NEEDLES = (
    "See",
    "mem:",
    "here",
    "line",
    "end",
    "\n",
    "code",
    "x",
    "`",
    "tags",
    "# keep",
    "Title",
    "---",
    "no-such-text",
    "",
)
REGEX_NEEDLES = (
    r"See (\S+)",
    r"(mem:)(\S+)",
    r"^#.*$",
    r"line.*end",
    r"l(i)ne",
    r"(\w+) end",
    r"\d+",
    r"(unclosed",
    r"x|(y)",
    r"$",
    r"\r\n",
    r"`mem:([^`]+)`",
    r"line \d+ end\n",
)
REPLACEMENTS = ("X", "$!1", "[$!1]", "$!2", "a\\nb", "two\nlines", "\\1", "", "$$", "\\g<0>")
FRONTMATTER = "---\ntags: [a, b]\n# keep this comment\nowner: me\n---\n"
PROJECT_YML = (
    "# project settings\n"
    "project_name: demo\n"
    "read_only_memory_patterns:\n"
    "  - ro/.*  # team docs\n"
    "ignored_memory_patterns: ['secret.*']\n"
)
SERENA_CONFIG_RO_GLOBAL = "edit_global_memories: false\n"


def tree(
    project: Mapping[str, str | bytes] | None = None,
    global_: Mapping[str, str | bytes] | None = None,
    raw: Mapping[str, str | bytes] | None = None,
    links: Mapping[str, str] | None = None,
) -> Snapshot:
    """A start: project and global memories by name, other files by path, and links."""
    snapshot: Snapshot = {}

    def put(key: str, content: str | bytes) -> None:
        data = content.encode("utf-8") if isinstance(content, str) else content
        snapshot[key] = file_entry(data)

    for name, content in (project or {}).items():
        put(f"project/.serena/memories/{name}.md", content)
    for name, content in (global_ or {}).items():
        put(f"home/memories/global/{name}.md", content)
    for path, content in (raw or {}).items():
        put(path, content)
    for path, target in (links or {}).items():
        snapshot[path] = {"kind": "link", "target": target}
    return snapshot


# ----- generated sequences ------------------------------------------------------------


class Generator:
    """Random but reproducible tool calls over a small pool of names."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        pools, weights = zip(*NAME_WEIGHTS, strict=True)
        self.pools: Sequence[Sequence[str]] = pools
        self.weights: Sequence[int] = weights

    def name(self) -> str:
        pool = self.rng.choices(self.pools, self.weights)[0]
        return self.rng.choice(pool)

    def content(self) -> str:
        rng = self.rng
        lines = []
        for number in range(rng.randint(1, 5)):
            ref = rng.choice(REFERENCED)
            lines.append(
                rng.choice(
                    (
                        f"# Title {number}",
                        f"See `mem:{ref}` for details.",
                        f"bare mem:{ref} here.",
                        f"```\nmem:{ref} in code\n```",
                        f"Link [[{ref}]] here.",
                        f"line {number} end",
                        f"x = {number}",
                    )
                )
            )
        body = "\n".join(lines) + rng.choice(("\n", "\n", ""))
        if rng.random() < 0.2:
            body = FRONTMATTER + body
        if rng.random() < 0.15:
            body = body.replace("\n", "\r\n")
        if rng.random() < 0.05:
            body = "\ufeff" + body
        return body

    def start(self) -> Snapshot:
        rng = self.rng
        project: dict[str, str] = {}
        global_: dict[str, str] = {}
        valid = [n for n in COMMON_NAMES + UNUSUAL_NAMES if n != "l" * 120]
        for name in rng.sample(valid, rng.randint(4, 8)):
            if name.startswith("global/"):
                global_[name.removeprefix("global/")] = self.content()
            else:
                project[name] = self.content()
        raw: dict[str, str] = {}
        if rng.random() < 0.4:
            raw["project/.serena/project.yml"] = PROJECT_YML
        if rng.random() < 0.2:
            raw["home/serena_config.yml"] = SERENA_CONFIG_RO_GLOBAL
        return tree(project, global_, raw)

    def op(self) -> dict[str, Any]:
        rng = self.rng
        tool = rng.choices(
            list(TOOL_WEIGHTS),
            list(TOOL_WEIGHTS.values()),
        )[0]
        if tool == "write_memory":
            return {"tool": tool, "memory_name": self.name(), "content": self.content()}
        if tool in ("read_memory", "delete_memory"):
            return {"tool": tool, "memory_name": self.name()}
        if tool == "list_memories":
            return {"tool": tool, "topic": rng.choice(TOPICS)}
        if tool == "rename_memory":
            return {"tool": tool, "old_name": self.name(), "new_name": self.name()}
        regex = rng.random() < 0.5
        return {
            "tool": tool,
            "memory_name": self.name(),
            "needle": rng.choice(REGEX_NEEDLES if regex else LITERAL_NEEDLES),
            "repl": rng.choice(REPLACEMENTS),
            "mode": "regex" if regex else "literal",
            "allow_multiple_occurrences": rng.random() < 0.3,
        }


def generated(seed: int, ops: int = OPS_PER_SEED) -> Scenario:
    """The sequence of one seed."""
    generator = Generator(seed)
    start = generator.start()
    return Scenario(f"seed-{seed:02d}", start, [generator.op() for _ in range(ops)])


# ----- named cases from the issue ---------------------------------------------------------


def _write(name: str, content: str, **extra: Any) -> dict[str, Any]:
    return {"tool": "write_memory", "memory_name": name, "content": content, **extra}


def _read(name: str) -> dict[str, Any]:
    return {"tool": "read_memory", "memory_name": name}


def _list(topic: str = "") -> dict[str, Any]:
    return {"tool": "list_memories", "topic": topic}


def _delete(name: str) -> dict[str, Any]:
    return {"tool": "delete_memory", "memory_name": name}


def _rename(old: str, new: str) -> dict[str, Any]:
    return {"tool": "rename_memory", "old_name": old, "new_name": new}


def _edit(name: str, needle: str, repl: str, mode: str = "literal", multi: bool = False) -> Any:
    return {
        "tool": "edit_memory",
        "memory_name": name,
        "needle": needle,
        "repl": repl,
        "mode": mode,
        "allow_multiple_occurrences": multi,
    }


def _case(
    case_id: str,
    start: Snapshot,
    steps: Sequence[tuple[dict[str, Any], str | None]],
    home_padding: str = "",
    home_relative: bool = False,
) -> Scenario:
    """A named case: each op with the Serena outcome kind it is about (None: any)."""
    return Scenario(
        case_id,
        start,
        [op for op, _ in steps],
        home_padding=home_padding,
        home_relative=home_relative,
        expect={i: kind for i, (_, kind) in enumerate(steps) if kind is not None},
    )


REFERRING = (
    "See `mem:notes`.\n"
    "bare mem:notes here\n"
    "```\nmem:notes in code\n```\n"
    "mem:notes_old stays\n"
    "[[notes]] wiki\n"
)


# Files Serena 2.1.0 writes for names memory-ls would not create (SPEC 2.1): each is
# listed, read, edited, saved in place, renamed and deleted as Serena does.
SERENA_WROTE = (
    "what?",
    "CON",
    "nul.txt",
    "tab\tname",
    "name:colon",
    "a|b",
    'say "hi"',
    "<tag>",
    "star*",
    "back\\slash",
    "bell\x07",
    "bidi\u202etxt",
    "zero\u200bwidth",
    "topic/AUX",
    "con/inner",
)
# Names with surrounding whitespace, as Serena writes them (it does not trim).
PADDED = (" lead", "trail ", " both ", "topic/ x ")


def serena_wrote_cases() -> list[Scenario]:
    """Issue 20: memories Serena wrote under names memory-ls refuses to create."""
    odd = {name: f"{name} body\nsee `mem:notes`\n" for name in SERENA_WROTE}
    start = tree(
        project={**odd, "notes": "n\n", "refs": "see `mem:what?` and `mem:CON`\n"},
        global_={"what?": "global what\n", "PRN": "global device\n"},
    )
    renamed = ("what?", "CON", "tab\tname", "bidi\u202etxt", "topic/AUX")
    return [
        _case(
            "names-serena-wrote",
            start,
            [
                (_list(), "ok"),
                (_list("topic"), "ok"),
                *[(_read(name), "ok") for name in SERENA_WROTE],
                (_read("global/what?"), "ok"),
                (_read("mem:global/PRN.md"), "ok"),
                *[(_edit(name, "body", "BODY"), "ok") for name in SERENA_WROTE],
                *[(_write(name, f"saved {name}\n"), "ok") for name in SERENA_WROTE[:6]],
                (_write("global/PRN", "saved\n"), "ok"),
                (_rename("notes", "notes2"), "ok"),  # rewrites `mem:notes` in them all
                *[(_rename(name, f"valid_{i}"), "ok") for i, name in enumerate(renamed)],
                (_rename("global/what?", "global/what_q"), "ok"),
                (_read("refs"), "ok"),
                *[(_delete(name), "ok") for name in SERENA_WROTE if name not in renamed],
                (_delete("global/PRN"), "ok"),
                (_list(), "ok"),
                # Gone now: a save would create such a name (refused), a read finds nothing.
                (_read("what?"), "not-found"),
                (_edit("CON", "x", "y"), "not-found"),
                (_delete("name:colon"), "not-found"),
                (_write("what?", "new\n"), "ok"),
                (_rename("valid_0", "CON"), "ok"),
                (_list(), "ok"),
            ],
        ),
        _case(
            "names-padded-on-disk",
            tree(project={**{name: f"[{name}]\n" for name in PADDED}, "notes": "n\n"}),
            [
                (_list(), "ok"),
                *[(_read(name), "ok") for name in PADDED],
                (_edit(" lead", "lead", "LEAD"), "ok"),
                (_write("trail ", "saved\n"), "ok"),
                (_rename(" both ", "both"), "ok"),
                (_rename("topic/ x ", "topic/x"), "ok"),
                (_delete("trail "), "ok"),
                (_read(" lead"), "ok"),
                (_list(), "ok"),
            ],
        ),
        _case(
            # Where the trimmed name exists too, memory-ls means it (names-trimmed).
            "names-padded-and-trimmed",
            tree(project={" notes": "exact\n", "notes": "trimmed\n"}),
            [
                (_read(" notes"), "ok"),
                (_read("notes"), "ok"),
                (_list(), "ok"),
            ],
        ),
        _case(
            "serena-home-relative",
            tree(global_={"prefs": "global prefs\n"}),
            [
                (_list(), "ok"),
                (_read("global/prefs"), "ok"),
                (_write("global/new", "x\n"), "ok"),
                (_rename("global/prefs", "global/prefs2"), "ok"),
                (_list("global"), "ok"),
            ],
            home_padding=" ",
            home_relative=True,
        ),
    ]


def named_cases() -> list[Scenario]:
    """The cases issue 12 names explicitly."""
    only_global = tree(global_={"prefs": "global prefs\n"})
    patterns = tree(
        project={
            "notes": "notes\n",
            "ro/doc": "read-only doc, see `mem:notes`\n",
            "secret_keys": "hidden\n",
            "links": "see `mem:notes`\n",
        },
        global_={"shared": "shared, see `mem:notes`\n", "private_x": "private\n"},
        raw={
            "project/.serena/project.yml": (
                "# comment\nproject_name: demo\n"
                "read_only_memory_patterns: ['ro/.*']\n"
                "ignored_memory_patterns: ['secret.*']\n"
            ),
            "project/.serena/project.local.yml": (
                "read_only_memory_patterns: ['ro/.*', 'global/shared']\n"
            ),
            "home/serena_config.yml": "ignored_memory_patterns: ['global/private.*']\n",
        },
    )
    unusual = {
        ".hidden": "hidden\n",
        "-dash": "dash\n",
        "emoji_🚀": "rocket\n",
        NFD_CAFE: "decomposed\n",
        NFC_CAFE: "composed\n",
        "trail.": "trailing dot\n",
        "a b": "space\n",
    }
    frontmatter_bom = (
        "\ufeff---\n# why: kept\ntags: [a]  # inline comment\nowner: me\n---\n"
        "Body with `mem:notes`.\n"
    )
    return [
        _case(
            "delete-bare-only-global",
            only_global,
            [(_delete("prefs"), "not-found"), (_list(), "ok"), (_read("global/prefs"), "ok")],
        ),
        _case(
            "bare-name-only-global",
            only_global,
            [
                (_edit("prefs", "global", "GLOBAL"), "not-found"),
                (_rename("prefs", "moved"), "not-found"),
                (_read("prefs"), "not-found"),
                (_write("prefs", "project prefs\n"), "ok"),
                (_list(), "ok"),
                (_read("prefs"), "ok"),
                (_read("global/prefs"), "ok"),
                (_edit("prefs", "project", "PROJECT"), "ok"),
                (_rename("prefs", "moved"), "ok"),
                (_list(), "ok"),
            ],
        ),
        _case(
            "project-yml-patterns",
            patterns,
            [
                (_list(), "ok"),
                (_list("global"), "ok"),
                (_read("secret_keys"), "ignored"),
                (_write("secret_keys", "x\n"), "ignored"),
                (_write("secret_new", "x\n"), "ignored"),
                (_read("global/private_x"), "ignored"),
                (_read("ro/doc"), "ok"),
                (_write("ro/doc", "x\n"), "read-only"),
                (_edit("ro/doc", "doc", "DOC"), "read-only"),
                (_delete("ro/doc"), "read-only"),
                (_rename("ro/doc", "free"), "read-only"),
                (_rename("notes", "ro/new"), "read-only"),
                (_rename("notes", "secret_notes"), "ignored"),
                (_write("global/shared", "x\n"), "read-only"),
                (_rename("notes", "notes2"), "ok"),
                (_list(), "ok"),
            ],
        ),
        _case(
            "serena-config-edit-global-false",
            tree(
                project={"draft_a": "draft\n", "notes": "n\n"},
                global_={"tips": "tips\n"},
                raw={
                    "home/serena_config.yml": (
                        "# my config\nedit_global_memories: false\n"
                        "ignored_memory_patterns: ['draft_.*']\n"
                    )
                },
            ),
            [
                (_list(), "ok"),
                (_write("global/new", "x\n"), "read-only"),
                (_edit("global/tips", "tips", "TIPS"), "read-only"),
                (_read("global/tips"), "ok"),
                (_read("draft_a"), "ignored"),
                (_rename("notes", "global/notes"), "read-only"),
            ],
        ),
        _case(
            "regex-backrefs-and-newlines",
            tree(project={"people": "name: Alice\nname: Bob\n"}),
            [
                (_edit("people", r"name: (\w+)", "who=$!1", "regex", True), "ok"),
                (_read("people"), "ok"),
                (_edit("people", r"who=(A)lice", "a\nb $!1", "regex"), "ok"),
                (_edit("people", r"who=(B)ob", "a\\nb", "regex"), "ok"),
                (_edit("people", r"(a)\n", "$!2", "regex"), "invalid-arguments"),
                (_edit("people", r"(a)\n", "\\1 \\g<1>", "regex"), "ok"),
                (_edit("people", "b A", "$!1", "literal"), "ok"),
                (_read("people"), "ok"),
            ],
        ),
        _case(
            "regex-ambiguity",
            tree(project={"tags": "<a>1</a>\n<a>2</a>\nstart x\nstart y end\n"}),
            [
                (_edit("tags", r"<a>.*</a>", "A", "regex"), "ambiguous-match"),
                (_edit("tags", r"<a>.*?</a>", "A", "regex"), "ambiguous-match"),
                (_edit("tags", r"start.*?end", "S", "regex"), "ambiguous-match"),
                (_edit("tags", r"<b>", "B", "regex"), "no-match"),
                (_edit("tags", "no such", "B"), "no-match"),
                (_edit("tags", r"<a>(\d)</a>", "[$!1]", "regex", True), "ok"),
                (_edit("tags", r"^", "> ", "regex", True), "ok"),
                (_read("tags"), "ok"),
            ],
        ),
        _case(
            "edit-empty-needle",
            tree(project={"short": "ab\n"}),
            [
                (_edit("short", "", "-"), "ambiguous-match"),
                (_edit("short", "", "-", multi=True), "ok"),
            ],
        ),
        _case(
            "rename-rewrites-references",
            tree(project={"notes": "the notes\n", "refs": REFERRING}),
            [(_rename("notes", "notes2"), "ok"), (_read("refs"), "ok")],
        ),
        _case(
            "rename-between-scopes",
            tree(
                project={"notes": "n\n", "refs": REFERRING + "and `mem:global/tips`\n"},
                global_={"tips": "t\n", "grefs": "global refers to `mem:notes`\n"},
            ),
            [
                (_rename("notes", "global/notes"), "ok"),
                (_read("refs"), "ok"),
                (_rename("global/tips", "tips"), "ok"),
                (_read("refs"), "ok"),
                (_list(), "ok"),
            ],
        ),
        _case(
            "same-name-in-both-scopes",
            tree(project={"prefs": "project\n"}, global_={"prefs": "global\n"}),
            [
                (_list(), "ok"),
                (_read("prefs"), "ok"),
                (_read("global/prefs"), "ok"),
                (_delete("prefs"), "ok"),
                (_list(), "ok"),
                (_delete("prefs"), "not-found"),
            ],
        ),
        _case(
            "unusual-names",
            tree(project=unusual),
            [
                (_list(), "ok"),
                *[(_read(name), "ok") for name in unusual],
                *[(_write(name, f"new {name}\n"), "ok") for name in unusual],
                (_write("brand.new.", "x\n"), "ok"),
                (_rename("-dash", ".dot"), "ok"),
                (_list(), "ok"),
            ],
        ),
        _case(
            "name-spellings",
            tree(project={"notes": "n\n"}, global_={"prefs": "g\n"}),
            [
                (_read("mem:notes"), "ok"),
                (_read("notes.md"), "ok"),
                (_read("mem:global/prefs.md"), "ok"),
                (_write("notes.md.md", "x\n"), "ok"),
                (_read("global"), "invalid-name"),
                (_write("global", "x\n"), "invalid-name"),
                (_write("global/", "x\n"), "invalid-name"),
                (_write("a//b", "x\n"), "invalid-name"),
                (_write("../x", "x\n"), "invalid-name"),
                (_write("/abs", "x\n"), "invalid-name"),
                (_write("", "x\n"), "invalid-name"),
                (_write("a/./b", "x\n"), "ok"),
                (_write("l" * 120, "x\n"), "ok"),
                (_list(), "ok"),
            ],
        ),
        _case(
            "symlinked-folder",
            tree(
                project={"auth/login": "login\n"},
                raw={"project/shared/x.md": "shared x\n", "project/shared/deep/y.md": "y\n"},
                links={
                    "project/.serena/memories/shared": "../../shared",
                    "project/.serena/memories/alias": "auth",
                },
            ),
            [
                (_list(), "ok"),
                (_list("shared"), "ok"),
                (_read("shared/x"), "ok"),
                (_read("shared/deep/y"), "ok"),
                (_read("alias/login"), "ok"),
                (_write("shared/x", "changed\n"), "ok"),
                (_write("alias/new", "via alias\n"), "ok"),
            ],
        ),
        _case(
            "serena-home-whitespace",
            tree(global_={"prefs": "global prefs\n"}),
            [
                (_list(), "ok"),
                (_read("global/prefs"), "ok"),
                (_write("global/new", "x\n"), "ok"),
                (_list("global"), "ok"),
            ],
            home_padding="  ",
        ),
        _case(
            "frontmatter-comments-and-bom-kept",
            tree(
                project={
                    "notes": "n\n",
                    "fm": frontmatter_bom,
                    "plain_fm": "---\n# top comment\nkey: value  # why\n---\nsee mem:notes\n",
                }
            ),
            [
                (_read("fm"), "ok"),
                (_edit("fm", "Body", "BODY"), "ok"),
                (_rename("notes", "notes2"), "ok"),
                (_edit("plain_fm", "value", "VALUE"), "ok"),
                (_read("plain_fm"), "ok"),
            ],
        ),
        _case(
            "crlf-files",
            tree(project={"notes": "n\n", "win": "line one\r\nsee `mem:notes`\r\n"}),
            [
                (_read("win"), "ok"),
                (_edit("win", "one", "ONE"), "ok"),
                (_rename("notes", "notes2"), "ok"),
                (_write("win2", "a\r\nb\r\n"), "ok"),
                (_read("win2"), "ok"),
            ],
        ),
        _case(
            "content-size-limits",
            tree(project={"notes": "n\n"}),
            [
                (_write("small", "x" * 20, max_chars=10), "too-large"),
                (_write("big", "x" * 200_000), "too-large"),
                (_write("huge", "x" * 600_000), "too-large"),
            ],
        ),
        _case(
            "list-topics",
            tree(
                project={"auth/login": "l\n", "auth/deep/y": "y\n", "authx": "no\n"},
                global_={"team/a": "a\n", "tips": "t\n"},
            ),
            [
                (_list(topic), "ok")
                for topic in ("", "auth", "auth/", "auth/deep", "global", "global/team", "nope")
            ],
        ),
        _case(
            "edit-needle-in-frontmatter",
            tree(project={"fm": "---\nowner: me\n---\nbody\n"}),
            [(_edit("fm", "owner: me", "owner: you"), "ok"), (_read("fm"), "ok")],
        ),
    ]


def all_scenarios() -> list[Scenario]:
    """Every scenario of the tier: the named cases, then the seeds."""
    return [*named_cases(), *serena_wrote_cases(), *(generated(seed) for seed in SEEDS)]
