"""Routing of saves (SPEC 2.4), folders, layouts and scopes (2.2) and lookup order (2.3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_helpers import Workspace, changed_paths

from memory_ls.core import Store
from memory_ls.core.storage.gate import version_of

PRIMARY = "primary"

# (name, additional folders, folder written to, routedBy): SPEC 2.4's reference table,
# with its "any" rows spelled out, and the details of step 5 (longest prefix wins
# whatever the configured order; first configured among same-named folders; directory
# names compared case-insensitively; only A-Z segments form a prefix).
ROUTING_TABLE = [
    pytest.param("FEATURE_auth", ["team/feature"], "team/feature", "prefix", id="FEATURE_auth"),
    pytest.param("FEATURE_auth", [], PRIMARY, "default", id="FEATURE_auth-no-folders"),
    pytest.param(
        "FEATURE_BUILDER_x",
        ["team/feature_builder", "team/feature"],
        "team/feature_builder",
        "prefix",
        id="FEATURE_BUILDER_x-longest",
    ),
    pytest.param(
        "FEATURE_BUILDER_x", ["team/feature"], "team/feature", "prefix", id="FEATURE_BUILDER_x"
    ),
    pytest.param("SPEC_new_doc", ["docs/spec"], "docs/spec", "prefix", id="SPEC_new_doc"),
    pytest.param("Feature_auth", ["team/feature"], PRIMARY, "default", id="Feature_auth"),
    pytest.param("regular_name", [], PRIMARY, "default", id="regular_name-none"),
    pytest.param(
        "regular_name", ["team/feature", "docs/spec"], PRIMARY, "default", id="regular_name-some"
    ),
    pytest.param("regular_name", ["x/regular"], PRIMARY, "default", id="regular_name-lowercase"),
    # Details of step 5.
    pytest.param(
        "FEATURE_BUILDER_x",
        ["team/feature", "team/feature_builder"],
        "team/feature_builder",
        "prefix",
        id="longest-prefix-whatever-the-order",
    ),
    pytest.param(
        "FEATURE_auth",
        ["a/feature", "b/feature"],
        "a/feature",
        "prefix",
        id="first-configured-of-same-name",
    ),
    pytest.param("FEATURE_auth", ["team/Feature"], "team/Feature", "prefix", id="dir-name-case"),
    pytest.param("FEATURE_x_SPEC", ["docs/spec"], PRIMARY, "default", id="prefix-is-leading-run"),
    pytest.param("FEATURE2_x", ["x/feature2"], PRIMARY, "default", id="digits-are-not-caps"),
    pytest.param("SPEC", ["docs/spec"], "docs/spec", "prefix", id="whole-name-caps"),
    pytest.param("FEATURE_auth", ["team/feature_x"], PRIMARY, "default", id="no-partial-match"),
]


def _folder(ws: Workspace, spec: str) -> Path:
    return ws.primary if spec == PRIMARY else ws.root / spec


@pytest.mark.parametrize(("name", "additional", "expected", "routed_by"), ROUTING_TABLE)
def test_routing_table(
    ws: Workspace, name: str, additional: list[str], expected: str, routed_by: str
) -> None:
    store = ws.store(additional)
    folder = _folder(ws, expected)
    target = folder / f"{name}.md"
    before = ws.snapshot()

    planned = store.route(name)
    assert planned == {
        "name": name,
        "path": str(target),
        "folder": str(folder),
        "routedBy": routed_by,
        "exists": False,
        "readOnly": False,
        # Rows whose ALL-CAPS prefix matches none of the configured folders.
        "unknownPrefix": (
            "FEATURE"
            if routed_by == "default" and name.startswith("FEATURE_") and additional
            else None
        ),
    }
    assert ws.snapshot() == before, "route() is a dry run"

    result = store.save(name, "body\n")
    assert result.pop("version") == version_of(b"body\n")
    assert result.pop("bytesAfter") == 5
    assert result.pop("previousVersion") is result.pop("bytesBefore") is None
    assert result == {
        "name": name,
        "path": str(target),
        "scope": "project",
        "folder": str(folder),
        "created": True,
        "routedBy": routed_by,
    }
    assert target.read_bytes() == b"body\n"
    after = ws.snapshot()
    files = {p for p in changed_paths(before, after) if after.get(p, ("gone",))[0] != "dir"}
    assert files == {str(target.relative_to(ws.tmp))}, "exactly one file is written"
    assert store.route(name)["routedBy"] == "existing"


@pytest.mark.parametrize(
    ("where", "name"),
    [
        ("primary", "FEATURE_auth"),  # stays in primary although feature/ would take it now
        ("team/feature", "regular_name"),  # stays in feature/ although it has no prefix
        ("docs/spec", "FEATURE_auth"),  # stays in spec/ although feature/ matches the prefix
        ("global", "FEATURE_auth"),  # global/FEATURE_auth is overwritten in place
    ],
)
def test_existing_memory_is_overwritten_in_place(ws: Workspace, where: str, name: str) -> None:
    store = ws.store(["team/feature", "docs/spec"])
    folder = {"primary": ws.primary, "global": ws.global_dir}.get(where, ws.root / where)
    existing = ws.write(folder / f"{name}.md", "old\n")
    before = ws.snapshot()
    name = f"global/{name}" if where == "global" else name

    assert store.route(name) == {
        "name": name,
        "path": str(existing),
        "folder": str(folder),
        "routedBy": "existing",
        "exists": True,
        "readOnly": False,
        "unknownPrefix": None,
    }
    result = store.save(name, "new\n")

    assert result["routedBy"] == "existing"
    assert result["created"] is False
    assert result["path"] == str(existing)
    assert result["scope"] == ("global" if where == "global" else "project")
    assert existing.read_bytes() == b"new\n"
    assert changed_paths(before, ws.snapshot()) == {str(existing.relative_to(ws.tmp))}


def test_a_bare_save_never_overwrites_a_global_memory(ws: Workspace) -> None:
    store = ws.store(["team/feature"])
    ws.write(ws.global_dir / "FEATURE_auth.md", "global\n")
    ws.write(ws.global_dir / "plain.md", "global\n")
    assert store.route("plain")["routedBy"] == "default"
    assert store.route("FEATURE_auth")["routedBy"] == "prefix"
    created = store.save("plain", "project\n")
    assert created["created"] is True and created["name"] == "plain"
    assert created["path"] == str(ws.primary / "plain.md")
    routed = store.save("FEATURE_auth", "project\n")
    assert routed["path"] == str(ws.root / "team" / "feature" / "FEATURE_auth.md")
    assert (ws.global_dir / "plain.md").read_text() == "global\n"
    assert (ws.global_dir / "FEATURE_auth.md").read_text() == "global\n"
    names = [m["name"] for m in store.list_memories()["memories"]]
    assert names == ["FEATURE_auth", "global/FEATURE_auth", "global/plain", "plain"]


def test_a_bare_read_falls_back_to_the_global_memory(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.global_dir / "tips.md", "global tips\n")
    read = store.read("tips")
    assert (read["name"], read["scope"], read["content"]) == (
        "global/tips",
        "global",
        "global tips\n",
    )
    assert read["path"] == str(ws.global_dir / "tips.md")
    # Only where no project memory has the name, and never with an explicit project scope.
    with ws.refuses("not-found"):
        store.read("tips", scope="project")
    ws.write(ws.primary / "tips.md", "project tips\n")
    assert store.read("tips")["name"] == "tips"
    assert store.read("tips")["content"] == "project tips\n"
    assert store.read("global/tips")["content"] == "global tips\n"
    # Edits, deletes and moves of the bare name reach the project memory only.
    store.edit("tips", content="edited\n")
    store.delete("tips")
    assert (ws.global_dir / "tips.md").read_text() == "global tips\n"
    with ws.refuses("not-found"):
        store.delete("tips")
    with ws.refuses("not-found"):
        store.edit("tips", content="x")


def test_route_is_a_dry_run_for_every_kind_of_target(ws: Workspace) -> None:
    store = ws.store(["team/feature"])
    before = ws.snapshot()
    assert not ws.primary.exists()
    results = [
        store.route(name)
        for name in ("FEATURE_a", "plain", "topic/deep/name", "global/mine", "regular")
    ]
    assert [r["routedBy"] for r in results] == ["prefix", "default", "topic", "global", "default"]
    assert all(r["exists"] is False for r in results)
    assert ws.snapshot() == before
    assert not ws.primary.exists() and not ws.global_dir.exists()


def test_topics_go_under_the_primary_folder(ws: Workspace) -> None:
    store = ws.store(["team/feature"])
    result = store.save("auth/login_flow", "flow")
    assert result["routedBy"] == "topic"
    assert result["path"] == str(ws.primary / "auth" / "login_flow.md")
    assert (ws.primary / "auth" / "login_flow.md").read_text() == "flow"

    # A topic path wins over an ALL-CAPS prefix: topics never route to additional folders.
    deep = store.save("FEATURE_area/sub topic/v1.2", "deep")
    assert deep["routedBy"] == "topic"
    assert deep["path"] == str(ws.primary / "FEATURE_area" / "sub topic" / "v1.2.md")

    read = store.read("auth/login_flow")
    assert read["name"] == "auth/login_flow"
    assert read["content"] == "flow"
    names = [m["name"] for m in store.list_memories()["memories"]]
    assert names == ["FEATURE_area/sub topic/v1.2", "auth/login_flow"]


def test_global_names_and_scopes(ws: Workspace) -> None:
    store = ws.store(["team/feature"])
    assert not ws.global_dir.exists()

    by_name = store.save("global/personal", "mine")
    assert by_name["name"] == "global/personal"
    assert by_name["scope"] == "global"
    assert by_name["routedBy"] == "global"
    assert by_name["folder"] == str(ws.global_dir)
    assert (ws.global_dir / "personal.md").read_text() == "mine"  # created on first save

    # scope=global beats a routing prefix.
    by_scope = store.save("FEATURE_notes", "g", scope="global")
    assert by_scope["path"] == str(ws.global_dir / "FEATURE_notes.md")
    assert by_scope["routedBy"] == "global"
    assert not (ws.root / "team" / "feature" / "FEATURE_notes.md").exists()

    # scope=project never touches the global memory: a new project memory is made.
    project = store.save("personal", "project copy", scope="project")
    assert project["path"] == str(ws.primary / "personal.md")
    assert project["created"] is True
    assert (ws.global_dir / "personal.md").read_text() == "mine"

    assert store.read("personal")["content"] == "project copy"  # project comes first
    assert store.read("global/personal")["content"] == "mine"
    assert store.read("personal", scope="global")["content"] == "mine"
    assert store.read("personal", scope="global")["name"] == "global/personal"
    assert store.read("mem:global/personal.md")["scope"] == "global"
    with ws.refuses("not-found"):
        store.read("FEATURE_notes", scope="project")
    with ws.refuses("invalid-arguments"):
        store.save("global/personal", "x", scope="project")


def test_global_disabled_makes_a_global_save_outside_the_store(ws: Workspace) -> None:
    store = ws.store(global_enabled=False)
    assert store.config.global_folder is None
    with ws.refuses("outside-store"):
        store.save("global/x", "x")
    with ws.refuses("outside-store"):
        store.save("x", "x", scope="global")
    with ws.refuses("outside-store"):
        store.route("global/x")
    assert store.list_memories(scope="global")["memories"] == []
    # Project saves still work.
    assert store.save("x", "x")["scope"] == "project"


def test_read_only_folder_refuses_routed_saves(ws: Workspace) -> None:
    store = ws.store(["team/feature", ("vendor/spec", True)])
    with ws.refuses("read-only"):
        store.save("SPEC_new", "x")
    assert not (ws.root / "vendor" / "spec" / "SPEC_new.md").exists()
    assert not ws.primary.exists(), "nothing at all was written, not even the primary folder"
    # The dry run says where it would go.
    assert store.route("SPEC_new")["folder"] == str(ws.root / "vendor" / "spec")


def test_existing_memory_in_read_only_folder_cannot_change(ws: Workspace) -> None:
    store = ws.store([("vendor/spec", True)])
    ws.write(ws.root / "vendor" / "spec" / "SPEC_api.md", "---\ntags: [api]\n---\nthe api\n")
    ws.write(ws.primary / "other.md", "other")

    read = store.read("SPEC_api")
    assert read["readOnly"] is True
    assert read["content"] == "the api\n"
    listed = {m["name"]: m["readOnly"] for m in store.list_memories()["memories"]}
    assert listed == {"SPEC_api": True, "other": False}

    with ws.refuses("read-only"):
        store.save("SPEC_api", "overwritten")
    with ws.refuses("read-only"):
        store.edit("SPEC_api", content="edited")
    with ws.refuses("read-only"):
        store.edit("SPEC_api", needle="api", replacement="API", allow_multiple=True)
    with ws.refuses("read-only"):
        store.delete("SPEC_api")
    with ws.refuses("read-only"):
        store.move("SPEC_api", "api_notes")
    with ws.refuses("read-only"):
        store.move("other", "SPEC_other")  # the new name routes into the read-only folder


def test_additional_folder_nested_in_primary(ws: Workspace) -> None:
    store = ws.store([".serena/memories/feature"])
    nested = ws.primary / "feature"
    ws.write(nested / "FEATURE_old.md", "old")
    ws.write(nested / "notes.md", "nested notes")
    ws.write(ws.primary / "auth" / "login.md", "topic")

    memories = store.list_memories()["memories"]
    assert [(m["name"], m["folder"]) for m in memories] == [
        ("FEATURE_old", str(nested)),
        ("auth/login", str(ws.primary)),
        ("notes", str(nested)),
    ]
    assert store.read("notes")["path"] == str(nested / "notes.md")
    with ws.refuses("not-found"):
        store.read("feature/notes")

    saved = store.save("FEATURE_new", "x")
    assert saved["path"] == str(nested / "FEATURE_new.md")
    assert saved["folder"] == str(nested)
    assert saved["name"] == "FEATURE_new"
    # A topic path that would write into the nested folder is refused, not aliased.
    with ws.refuses("invalid-name"):
        store.save("feature/FEATURE_sneaky", "x")
    names = [m["name"] for m in store.list_memories()["memories"]]
    assert names.count("FEATURE_new") == 1
    assert not any(n.startswith("feature/") for n in names)
    assert [m["name"] for m in store.list_memories(prefix="FEATURE_")["memories"]] == [
        "FEATURE_new",
        "FEATURE_old",
    ]


def test_missing_additional_folders_are_skipped_and_reported(ws: Workspace) -> None:
    store = ws.store(["team/feature", "gone/spec", ("gone/ro", True)], create=False)
    assert store.config.additional == ()
    assert store.config.missing_additional == (
        str(ws.root / "team" / "feature"),
        str(ws.root / "gone" / "spec"),
        str(ws.root / "gone" / "ro"),
    )
    result = store.save("FEATURE_auth", "x")
    assert result["path"] == str(ws.primary / "FEATURE_auth.md")
    assert result["routedBy"] == "default"
    assert not (ws.root / "team").exists(), "routing never creates an additional folder"

    (ws.root / "docs" / "spec").mkdir(parents=True)
    store = ws.store(["team/feature", "docs/spec"], create=False)
    assert [f.path for f in store.config.additional] == [str(ws.root / "docs" / "spec")]
    assert store.config.missing_additional == (str(ws.root / "team" / "feature"),)


def test_additional_folder_paths_absolute_and_home(ws: Workspace) -> None:
    elsewhere = ws.tmp / "elsewhere" / "spec"
    store = ws.store([str(elsewhere), "~/team/feature"])
    assert [f.path for f in store.config.additional] == [
        str(elsewhere),
        str(ws.home / "team" / "feature"),
    ]
    assert store.save("FEATURE_a", "a")["path"] == str(
        ws.home / "team" / "feature" / "FEATURE_a.md"
    )
    assert store.save("SPEC_a", "a")["path"] == str(elsewhere / "SPEC_a.md")


# ----- layouts -------------------------------------------------------------------------


def test_serena_layout_is_the_default(ws: Workspace) -> None:
    store = ws.store()
    assert store.config.layout == "serena"
    assert store.config.primary.path == str(ws.primary)
    assert store.config.global_folder is not None
    assert store.config.global_folder.path == str(ws.global_dir)
    assert store.save("a", "a")["path"] == str(ws.primary / "a.md")
    assert store.save("global/g", "g")["path"] == str(ws.global_dir / "g.md")


def test_aicoder_layout_is_detected_when_only_its_folder_exists(ws: Workspace) -> None:
    aicoder = ws.root / ".aicoder" / "memory"
    ws.write(aicoder / "existing.md", "from aicoder")
    store = ws.store()
    assert store.config.layout == "aicoder"
    assert store.config.primary.path == str(aicoder)
    aicoder_global = ws.home / ".config" / "aicoder" / "memory"
    assert store.config.global_folder is not None
    assert store.config.global_folder.path == str(aicoder_global)
    assert store.read("existing")["content"] == "from aicoder"
    assert store.save("new", "n")["path"] == str(aicoder / "new.md")
    assert store.save("global/g", "g")["path"] == str(aicoder_global / "g.md")
    assert not ws.primary.exists() and not ws.global_dir.exists()


def test_serena_wins_when_both_layouts_exist(ws: Workspace) -> None:
    (ws.root / ".aicoder" / "memory").mkdir(parents=True)
    ws.primary.mkdir(parents=True)
    assert ws.store().config.layout == "serena"


def test_explicit_layout_and_folders_override_detection(ws: Workspace) -> None:
    (ws.root / ".aicoder" / "memory").mkdir(parents=True)
    assert ws.store(layout="serena").config.primary.path == str(ws.primary)

    (ws.root / ".aicoder").rename(ws.root / ".moved")
    explicit = ws.store(layout="aicoder")
    assert explicit.config.layout == "aicoder"
    assert explicit.config.primary.path == str(ws.root / ".aicoder" / "memory")

    custom = ws.store(layout="aicoder", primary_folder="notes/mem", global_folder="~/my-global")
    assert custom.config.primary.path == str(ws.root / "notes" / "mem")
    assert custom.config.global_folder is not None
    assert custom.config.global_folder.path == str(ws.home / "my-global")
    assert custom.save("x", "x")["path"] == str(ws.root / "notes" / "mem" / "x.md")


def test_serena_home_is_honoured_for_the_global_folder(ws: Workspace) -> None:
    serena_home = ws.tmp / "serena-home"
    store = ws.store(environ={"SERENA_HOME": str(serena_home)})
    expected = serena_home / "memories" / "global"
    assert store.config.global_folder is not None
    assert store.config.global_folder.path == str(expected)
    assert store.save("global/g", "g")["path"] == str(expected / "g.md")
    assert (expected / "g.md").read_text() == "g"
    assert not ws.global_dir.exists()

    # SERENA_HOME is Serena's: the aicoder layout ignores it; an explicit folder beats it.
    aicoder = ws.store(layout="aicoder", environ={"SERENA_HOME": str(serena_home)})
    assert aicoder.config.global_folder is not None
    assert aicoder.config.global_folder.path == str(ws.home / ".config" / "aicoder" / "memory")
    explicit = ws.store(global_folder=str(ws.tmp / "g2"), environ={"SERENA_HOME": str(serena_home)})
    assert explicit.config.global_folder is not None
    assert explicit.config.global_folder.path == str(ws.tmp / "g2")


# ----- lookup order and shadowing -------------------------------------------------------


def _shadow_setup(ws: Workspace) -> tuple[Store, list[Path]]:
    store = ws.store(["team/b", "team/a"])  # configured order: b before a
    files = [
        ws.write(ws.primary / "dup.md", "primary"),
        ws.write(ws.root / "team" / "b" / "dup.md", "b"),
        ws.write(ws.root / "team" / "a" / "dup.md", "a"),
        ws.write(ws.global_dir / "dup.md", "global"),
    ]
    return store, files


def test_lookup_order_and_shadows(ws: Workspace) -> None:
    store, files = _shadow_setup(ws)
    memories = store.list_memories()["memories"]
    # dup and global/dup are two memories; shadowing is within the project scope only.
    assert [(m["name"], m["path"], m["shadows"]) for m in memories] == [
        ("dup", str(files[0]), [str(files[1]), str(files[2])]),
        ("global/dup", str(files[3]), []),
    ]
    assert store.read("dup")["content"] == "primary"

    project = store.list_memories(scope="project")["memories"]
    assert [m["shadows"] for m in project] == [[str(files[1]), str(files[2])]]
    global_only = store.list_memories(scope="global")["memories"]
    assert [(m["path"], m["shadows"]) for m in global_only] == [(str(files[3]), [])]
    assert store.read("dup", scope="global")["content"] == "global"

    # Delete removes the first hit only; the next one in order shows through.
    assert store.delete("dup")["path"] == str(files[0])
    assert store.read("dup")["content"] == "b"
    store.delete("dup")
    assert store.read("dup")["content"] == "a"
    assert store.delete("dup", scope="project")["path"] == str(files[2])
    # No project dup is left: a read falls back to global/dup, a delete does not.
    assert store.read("dup")["content"] == "global"
    assert store.read("dup")["name"] == "global/dup"
    with ws.refuses("not-found"):
        store.delete("dup")
    assert [(m["name"], m["shadows"]) for m in store.list_memories()["memories"]] == [
        ("global/dup", [])
    ]


def test_edit_and_save_hit_the_first_in_lookup_order(ws: Workspace) -> None:
    store, files = _shadow_setup(ws)
    store.edit("dup", needle="primary", replacement="edited")
    store.save("dup", "saved", scope="global")
    assert [f.read_text() for f in files] == ["edited", "b", "a", "saved"]


def test_route_says_read_only_and_unknown_prefix_before_any_write(ws: Workspace) -> None:
    ws.write(ws.root / ".serena" / "project.yml", "read_only_memory_patterns: ['decisions/.*']\n")
    store = ws.store(["team/feature", ("shared/vendor", True)])
    vendor = store.route("VENDOR_x")
    assert (vendor["folder"], vendor["readOnly"], vendor["unknownPrefix"]) == (
        str(ws.root / "shared" / "vendor"),
        True,
        None,
    )
    assert store.route("decisions/adr")["readOnly"] is True
    bugfix = store.route("BUGFIX_crash")
    assert (bugfix["routedBy"], bugfix["readOnly"], bugfix["unknownPrefix"]) == (
        "default",
        False,
        "BUGFIX",
    )
    assert store.route("FEATURE_x")["unknownPrefix"] is None
    assert store.route("global/BUGFIX_x")["unknownPrefix"] is None  # global names never route
