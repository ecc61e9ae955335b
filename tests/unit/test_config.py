"""Tests of settings parsing, validation and merging (SPEC 3.6)."""

from __future__ import annotations

import pytest

from memory_ls.config import (
    CLI_SOURCE,
    DEFAULT_MAX_MEMORY_BYTES,
    DEFAULT_SEVERITIES,
    DIAGNOSTIC_CODES,
    ConfigError,
    FolderSetting,
    Layer,
    Settings,
    cli_layer,
    merge_layers,
    parse_additional_folders_arg,
    parse_layer,
)

INIT = "initializationOptions"
WORKSPACE = "workspace configuration (memoryLs)"


def _config_error(raw: object, source: str = INIT) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse_layer(raw, source)
    return info.value


# --- defaults ----------------------------------------------------------------------------


def test_defaults_follow_the_spec() -> None:
    settings = merge_layers()
    assert settings == Settings()
    assert settings.layout is None
    assert settings.primary_folder is None
    assert settings.additional_folders == ()
    assert settings.global_folder is None
    assert settings.global_enabled is True
    assert settings.max_memory_bytes == DEFAULT_MAX_MEMORY_BYTES == 524288
    assert dict(settings.diagnostics) == {
        "unknown-prefix": "warning",
        "misrouted": "warning",
        "broken-link": "warning",
        "shadowed": "information",
        "invalid-frontmatter": "error",
        "invalid-name": "error",
        "too-large": "warning",
        "invalid-encoding": "error",
        "possible-secret": "warning",
        "ignored-link": "information",
        "context-budget": "warning",
        "stale-path": "warning",  # turned off outside git by resolve_store_config
        "near-duplicate": "information",
        "superseded": "hint",
        "merge-conflict": "error",
        "missing-merge-driver": "warning",
        "read-only-changed": "error",
        "unindexed-memory": "warning",
        "broken-import": "warning",
        "import-cycle": "warning",
        "import-depth": "warning",
        "unmatched-glob": "warning",
    }
    assert set(DEFAULT_SEVERITIES) == set(DIAGNOSTIC_CODES)


def test_settings_fills_in_default_severities_for_codes_not_given() -> None:
    settings = Settings(diagnostics={"shadowed": "off"})
    assert settings.diagnostics["shadowed"] == "off"
    assert settings.diagnostics["invalid-name"] == "error"
    assert set(settings.diagnostics) == set(DIAGNOSTIC_CODES)


def test_settings_are_hashable_and_compare_by_value() -> None:
    assert hash(merge_layers()) == hash(Settings())
    assert merge_layers(parse_layer({"maxMemoryBytes": 5}, INIT)) != Settings()


# --- each key ----------------------------------------------------------------------------


def test_every_key_is_parsed_from_its_camel_case_name() -> None:
    layer = parse_layer(
        {
            "layout": "aicoder",
            "primaryFolder": "notes/mem",
            "additionalFolders": ["feature"],
            "globalFolder": "~/global-notes",
            "maxMemoryBytes": 1000,
            "diagnostics": {"broken-link": "error"},
        },
        INIT,
    )
    assert layer.source == INIT
    assert layer.unknown_keys == ()
    assert dict(layer.values) == {
        "layout": "aicoder",
        "primary_folder": "notes/mem",
        "additional_folders": (FolderSetting("feature"),),
        "global_folder": "~/global-notes",
        "global_enabled": True,
        "max_memory_bytes": 1000,
        "diagnostics": {"broken-link": "error"},
    }
    settings = merge_layers(layer)
    assert settings.layout == "aicoder"
    assert settings.primary_folder == "notes/mem"
    assert settings.additional_folders == (FolderSetting("feature", read_only=False),)
    assert settings.global_folder == "~/global-notes"
    assert settings.global_enabled is True
    assert settings.max_memory_bytes == 1000
    assert settings.severity("broken-link") == "error"
    assert settings.severity("misrouted") == "warning"


@pytest.mark.parametrize("layout", ["serena", "aicoder"])
def test_both_layouts_are_accepted(layout: str) -> None:
    assert parse_layer({"layout": layout}, INIT).values == {"layout": layout}


def test_only_keys_that_were_given_are_in_the_layer() -> None:
    assert dict(parse_layer({"maxMemoryBytes": 7}, INIT).values) == {"max_memory_bytes": 7}
    assert dict(parse_layer({}, INIT).values) == {}


def test_snake_case_spellings_are_unknown_keys() -> None:
    layer = parse_layer({"primary_folder": "x", "max_memory_bytes": 3}, INIT)
    assert dict(layer.values) == {}
    assert layer.unknown_keys == ("primary_folder", "max_memory_bytes")
    message = layer.describe_unknown_keys()
    assert message is not None
    assert INIT in message
    assert "primary_folder (did you mean primaryFolder?)" in message


# --- additional folders ------------------------------------------------------------------


def test_additional_folders_object_form_with_read_only() -> None:
    layer = parse_layer(
        {
            "additionalFolders": [
                {"path": "feature", "readOnly": True},
                {"path": "spec", "readOnly": False},
                {"path": "shared"},
            ]
        },
        INIT,
    )
    assert layer.values["additional_folders"] == (
        FolderSetting("feature", read_only=True),
        FolderSetting("spec", read_only=False),
        FolderSetting("shared", read_only=False),
    )


def test_additional_folders_string_form_with_ro_suffix() -> None:
    layer = parse_layer({"additionalFolders": ["feature", "/team/shared:ro"]}, INIT)
    assert layer.values["additional_folders"] == (
        FolderSetting("feature", read_only=False),
        FolderSetting("/team/shared", read_only=True),
    )


def test_mixed_string_and_object_entries_keep_their_order() -> None:
    layer = parse_layer({"additionalFolders": ["a:ro", {"path": "b", "readOnly": True}, "c"]}, INIT)
    assert layer.values["additional_folders"] == (
        FolderSetting("a", True),
        FolderSetting("b", True),
        FolderSetting("c", False),
    )


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("C:\\notes", FolderSetting("C:\\notes", read_only=False)),
        ("C:\\notes:ro", FolderSetting("C:\\notes", read_only=True)),
        ("D:", FolderSetting("D:", read_only=False)),
        ("notes:RO", FolderSetting("notes:RO", read_only=False)),
        ("notes:rw", FolderSetting("notes:rw", read_only=False)),
        ("notes/ro", FolderSetting("notes/ro", read_only=False)),
    ],
)
def test_only_the_exact_ro_suffix_marks_read_only(entry: str, expected: FolderSetting) -> None:
    assert parse_layer({"additionalFolders": [entry]}, INIT).values["additional_folders"] == (
        expected,
    )


def test_additional_folders_as_one_comma_separated_string() -> None:
    layer = parse_layer({"additionalFolders": "feature, spec:ro,,"}, INIT)
    assert layer.values["additional_folders"] == (
        FolderSetting("feature", False),
        FolderSetting("spec", True),
    )


def test_parse_additional_folders_arg() -> None:
    assert parse_additional_folders_arg("a,b:ro") == (
        FolderSetting("a", False),
        FolderSetting("b", True),
    )
    assert parse_additional_folders_arg(" a , ,b ,") == (
        FolderSetting("a", False),
        FolderSetting("b", False),
    )
    assert parse_additional_folders_arg("") == ()


def test_parse_additional_folders_arg_refuses_a_bare_ro() -> None:
    with pytest.raises(ConfigError) as info:
        parse_additional_folders_arg("a,:ro")
    assert "--additional-folders" in str(info.value)
    assert info.value.source == CLI_SOURCE


def test_an_empty_list_of_additional_folders_overrides_a_lower_layer() -> None:
    low = parse_layer({"additionalFolders": ["feature"]}, INIT)
    high = parse_layer({"additionalFolders": []}, WORKSPACE)
    assert merge_layers(low, high).additional_folders == ()


# --- null ----------------------------------------------------------------------------------


def test_a_null_section_is_an_empty_layer() -> None:
    layer = parse_layer(None, WORKSPACE)
    assert layer == Layer(source=WORKSPACE, values={}, unknown_keys=())
    low = parse_layer({"layout": "aicoder", "maxMemoryBytes": 9}, INIT)
    settings = merge_layers(low, layer)
    assert settings.layout == "aicoder"
    assert settings.max_memory_bytes == 9


@pytest.mark.parametrize(
    ("key", "value", "attribute"),
    [
        ("layout", "aicoder", "layout"),
        ("primaryFolder", "mine", "primary_folder"),
        ("additionalFolders", ["feature"], "additional_folders"),
        ("maxMemoryBytes", 42, "max_memory_bytes"),
    ],
)
def test_a_null_key_keeps_the_lower_layers_value(key: str, value: object, attribute: str) -> None:
    low = parse_layer({key: value}, INIT)
    high = parse_layer({key: None}, WORKSPACE)
    assert attribute not in high.values
    assert getattr(merge_layers(low, high), attribute) == getattr(merge_layers(low), attribute)
    assert getattr(merge_layers(low, high), attribute) != getattr(Settings(), attribute)


def test_a_null_diagnostics_map_or_code_keeps_the_lower_severity() -> None:
    low = parse_layer({"diagnostics": {"shadowed": "off", "misrouted": "error"}}, INIT)
    high = parse_layer({"diagnostics": {"shadowed": None}}, WORKSPACE)
    assert "diagnostics" not in high.values
    assert merge_layers(low, high).severity("shadowed") == "off"
    null_map = parse_layer({"diagnostics": None}, WORKSPACE)
    assert merge_layers(low, null_map).severity("misrouted") == "error"


def test_global_folder_null_disables_the_global_scope() -> None:
    layer = parse_layer({"globalFolder": None}, INIT)
    assert dict(layer.values) == {"global_enabled": False}
    settings = merge_layers(parse_layer({"globalFolder": "/g"}, CLI_SOURCE), layer)
    assert settings.global_enabled is False
    assert settings.global_folder is None


def test_a_higher_global_folder_string_re_enables_the_global_scope() -> None:
    disabled = parse_layer({"globalFolder": None}, INIT)
    enabled = parse_layer({"globalFolder": "/home/me/notes"}, WORKSPACE)
    settings = merge_layers(disabled, enabled)
    assert settings.global_enabled is True
    assert settings.global_folder == "/home/me/notes"


def test_leaving_global_folder_out_keeps_it_disabled() -> None:
    disabled = parse_layer({"globalFolder": None}, INIT)
    other = parse_layer({"layout": "serena"}, WORKSPACE)
    assert merge_layers(disabled, other).global_enabled is False


# --- precedence ------------------------------------------------------------------------


def test_three_layers_merge_key_by_key() -> None:
    cli = cli_layer(
        layout="aicoder",
        primary_folder="cli-primary",
        additional_folders="cli-extra",
        global_folder="/cli-global",
        max_memory_bytes=100,
    )
    init = parse_layer({"primaryFolder": "init-primary", "maxMemoryBytes": 200}, INIT)
    workspace = parse_layer({"maxMemoryBytes": 300, "additionalFolders": ["ws:ro"]}, WORKSPACE)
    settings = merge_layers(cli, init, workspace)
    assert settings.layout == "aicoder"  # only the flags set it
    assert settings.global_folder == "/cli-global"  # only the flags set it
    assert settings.primary_folder == "init-primary"  # init over flags
    assert settings.max_memory_bytes == 300  # workspace over both
    assert settings.additional_folders == (FolderSetting("ws", True),)  # workspace over flags


def test_the_order_of_layers_decides() -> None:
    a = parse_layer({"layout": "serena"}, "a")
    b = parse_layer({"layout": "aicoder"}, "b")
    assert merge_layers(a, b).layout == "aicoder"
    assert merge_layers(b, a).layout == "serena"


def test_diagnostics_merge_per_code() -> None:
    low = parse_layer({"diagnostics": {"shadowed": "off", "broken-link": "error"}}, INIT)
    high = parse_layer({"diagnostics": {"broken-link": "hint"}}, WORKSPACE)
    settings = merge_layers(low, high)
    assert settings.severity("shadowed") == "off"  # kept from the lower layer
    assert settings.severity("broken-link") == "hint"  # overridden
    assert settings.severity("invalid-name") == "error"  # default
    assert set(settings.diagnostics) == set(DIAGNOSTIC_CODES)


def test_the_ignored_link_severity_can_be_configured() -> None:
    layer = parse_layer({"diagnostics": {"ignored-link": "off"}}, INIT)
    assert layer.unknown_keys == ()
    assert merge_layers(layer).severity("ignored-link") == "off"


@pytest.mark.parametrize("severity", ["error", "warning", "information", "hint", "off"])
def test_every_severity_is_accepted(severity: str) -> None:
    settings = merge_layers(parse_layer({"diagnostics": {"too-large": severity}}, INIT))
    assert settings.severity("too-large") == severity


# --- invalid values --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ({"layout": "vscode"}, "layout"),
        ({"layout": 1}, "layout"),
        ({"primaryFolder": 5}, "primaryFolder"),
        ({"primaryFolder": ""}, "primaryFolder"),
        ({"primaryFolder": ["a"]}, "primaryFolder"),
        ({"additionalFolders": 3}, "additionalFolders"),
        ({"additionalFolders": {"path": "a"}}, "additionalFolders"),
        ({"additionalFolders": [3]}, "additionalFolders[0]"),
        ({"additionalFolders": ["ok", ""]}, "additionalFolders[1]"),
        ({"additionalFolders": [":ro"]}, "additionalFolders[0]"),
        ({"additionalFolders": "a,:ro"}, "additionalFolders"),
        ({"additionalFolders": [{"readOnly": True}]}, "additionalFolders[0].path"),
        ({"additionalFolders": [{"path": 1}]}, "additionalFolders[0].path"),
        (
            {"additionalFolders": [{"path": "a", "readOnly": "yes"}]},
            "additionalFolders[0].readOnly",
        ),
        ({"additionalFolders": [{"path": "a", "readonly": True}]}, "additionalFolders[0]"),
        ({"globalFolder": 0}, "globalFolder"),
        ({"globalFolder": "  "}, "globalFolder"),
        ({"maxMemoryBytes": 0}, "maxMemoryBytes"),
        ({"maxMemoryBytes": -1}, "maxMemoryBytes"),
        ({"maxMemoryBytes": True}, "maxMemoryBytes"),
        ({"maxMemoryBytes": 1.5}, "maxMemoryBytes"),
        ({"maxMemoryBytes": "1000"}, "maxMemoryBytes"),
        ({"diagnostics": "off"}, "diagnostics"),
        ({"diagnostics": ["shadowed"]}, "diagnostics"),
        ({"diagnostics": {"shadowed": "warn"}}, "diagnostics.shadowed"),
        ({"diagnostics": {"shadowed": 1}}, "diagnostics.shadowed"),
        ({"diagnostics": {"shadowed": ["off"]}}, "diagnostics.shadowed"),
    ],
)
def test_an_invalid_value_names_the_key_and_the_source(raw: dict[str, object], key: str) -> None:
    error = _config_error(raw, WORKSPACE)
    assert error.source == WORKSPACE
    assert len(error.problems) == 1
    assert error.problems[0].startswith(f"{key}: ")
    message = str(error)
    assert WORKSPACE in message
    assert f"{key}: " in message


def test_the_message_says_what_was_expected_and_what_came() -> None:
    message = str(_config_error({"layout": "vscode"}))
    assert '"serena"' in message
    assert '"aicoder"' in message
    assert '"vscode"' in message


def test_every_problem_is_reported_together() -> None:
    error = _config_error(
        {
            "layout": "x",
            "primaryFolder": 1,
            "additionalFolders": [{"path": "a", "readOnly": 1}, 2],
            "maxMemoryBytes": -5,
            "diagnostics": {"shadowed": "loud", "misrouted": "nope"},
            "bogus": True,
        }
    )
    keys = [problem.split(": ", 1)[0] for problem in error.problems]
    assert keys == [
        "layout",
        "primaryFolder",
        "additionalFolders[0].readOnly",
        "additionalFolders[1]",
        "maxMemoryBytes",
        "diagnostics.shadowed",
        "diagnostics.misrouted",
    ]
    for key in keys:
        assert key in str(error)


def test_a_section_that_is_not_an_object_is_an_error() -> None:
    for raw in (["layout"], "serena", 3, True):
        error = _config_error(raw)
        assert error.source == INIT
        assert INIT in str(error)


def test_a_valid_layer_is_untouched_by_another_sources_error() -> None:
    good = parse_layer({"maxMemoryBytes": 10}, INIT)
    with pytest.raises(ConfigError):
        parse_layer({"maxMemoryBytes": 0}, WORKSPACE)
    assert merge_layers(good).max_memory_bytes == 10


# --- unknown keys ----------------------------------------------------------------------


def test_unknown_keys_are_reported_not_fatal() -> None:
    layer = parse_layer(
        {
            "layout": "serena",
            "colour": "blue",
            "diagnostics": {"shadowed": "off", "made-up": "error", "other": "bad-severity"},
        },
        INIT,
    )
    assert layer.values["layout"] == "serena"
    assert dict(layer.values["diagnostics"]) == {"shadowed": "off"}  # type: ignore[call-overload]
    assert layer.unknown_keys == ("colour", "diagnostics.made-up", "diagnostics.other")
    message = layer.describe_unknown_keys()
    assert message is not None
    assert "colour" in message
    assert "diagnostics.made-up" in message


def test_no_unknown_keys_gives_no_message() -> None:
    assert parse_layer({"layout": "serena"}, INIT).describe_unknown_keys() is None


# --- severity() ------------------------------------------------------------------------


def test_severity_of_configured_default_and_unknown_codes() -> None:
    settings = merge_layers(parse_layer({"diagnostics": {"invalid-name": "off"}}, INIT))
    assert settings.severity("invalid-name") == "off"
    assert settings.severity("invalid-frontmatter") == "error"
    assert settings.severity("shadowed") == "information"
    assert settings.severity("no-such-code") == "warning"


# --- cli_layer -------------------------------------------------------------------------


def test_cli_layer_with_no_flags_is_empty() -> None:
    layer = cli_layer()
    assert layer.source == CLI_SOURCE == "command-line flags"
    assert dict(layer.values) == {}


def test_cli_layer_builds_typed_values() -> None:
    layer = cli_layer(
        layout="serena",
        primary_folder="p",
        additional_folders="feature,spec:ro",
        global_folder="/g",
        max_memory_bytes=2048,
    )
    assert dict(layer.values) == {
        "layout": "serena",
        "primary_folder": "p",
        "additional_folders": (FolderSetting("feature", False), FolderSetting("spec", True)),
        "global_folder": "/g",
        "global_enabled": True,
        "max_memory_bytes": 2048,
    }


def test_cli_no_global_disables_the_global_scope() -> None:
    layer = cli_layer(no_global=True)
    assert dict(layer.values) == {"global_enabled": False}
    assert merge_layers(layer).global_enabled is False
    # A higher source naming a folder turns it back on.
    assert merge_layers(layer, parse_layer({"globalFolder": "/g"}, INIT)).global_enabled


def test_cli_no_global_with_a_global_folder_is_an_error() -> None:
    with pytest.raises(ConfigError) as info:
        cli_layer(no_global=True, global_folder="/g")
    assert "--no-global" in str(info.value)
    assert "--global-folder" in str(info.value)


def test_cli_errors_name_the_flags() -> None:
    with pytest.raises(ConfigError) as info:
        cli_layer(layout="vscode", max_memory_bytes=0, additional_folders=":ro")
    error = info.value
    assert error.source == CLI_SOURCE
    keys = [problem.split(": ", 1)[0] for problem in error.problems]
    assert keys == ["--layout", "--additional-folders", "--max-memory-bytes"]
    assert CLI_SOURCE in str(error)


def test_cli_empty_additional_folders_sets_none() -> None:
    low = parse_layer({"additionalFolders": ["a"]}, "low")
    assert merge_layers(low, cli_layer(additional_folders="")).additional_folders == ()
