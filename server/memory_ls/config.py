"""Settings of memory-ls: parsing each source, validating it and merging by precedence.

One module serves the CLI, the language server and the core (SPEC 3.6). Each source
(server CLI flags, initializationOptions, the `memoryLs` section of
workspace/configuration) is parsed into a `Layer` holding only the keys it set;
`merge_layers` applies them key by key over the defaults.

External keys are camelCase; the attrs classes use snake_case and a cattrs hook
factory renames every field, as jedi-language-server does for its options.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal, cast, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError, IterableValidationError
from cattrs.gen import make_dict_structure_fn, override

from memory_ls.search_settings import MeaningSettings as MeaningSettings
from memory_ls.search_settings import did_you_mean, parse_search_table, show_value

Severity = Literal["error", "warning", "information", "hint", "off"]
LayoutName = Literal["serena", "aicoder", "claude"]
# Which files get diagnostics in an editor: every memory, or the open documents only.
DiagnosticsScope = Literal["workspace", "openFiles"]
# What an agent's write holding a possible secret gets: refused (default) or a warning.
SecretsPolicy = Literal["refuse", "warn"]

DIAGNOSTIC_CODES: tuple[str, ...] = (
    "unknown-prefix",
    "misrouted",
    "broken-link",
    "shadowed",
    "invalid-frontmatter",
    "merge-conflict",
    "invalid-name",
    "too-large",
    "invalid-encoding",
    "possible-secret",
    "ignored-link",
    "context-budget",
    "stale-path",
    "near-duplicate",
    "superseded",
    "missing-merge-driver",
    "read-only-changed",
    # Other agents' files (core/services/agent_checks.py).
    "unindexed-memory",
    "broken-import",
    "import-cycle",
    "import-depth",
    "unmatched-glob",
)

DEFAULT_SEVERITIES: Mapping[str, Severity] = MappingProxyType(
    {
        "unknown-prefix": "warning",
        "misrouted": "warning",
        "broken-link": "warning",
        "shadowed": "information",
        "invalid-frontmatter": "error",
        # Markers agents would read as knowledge: `<<<<<<<` ... `>>>>>>>` left by git.
        "merge-conflict": "error",
        "invalid-name": "error",
        "too-large": "warning",
        "invalid-encoding": "error",
        "possible-secret": "warning",
        "ignored-link": "information",
        "context-budget": "warning",
        # Off where the workspace is not a git repository unless configured (folders.py).
        "stale-path": "warning",
        "near-duplicate": "information",
        # A hint on the memory another replaces; a cycle or a missing name is an error.
        "superseded": "hint",
        # `.gitattributes` names merge=memory-ls, this clone's git config lacks the driver.
        "missing-merge-driver": "warning",
        # `changes` and `check --staged`: an edit to a `:ro` folder or a read-only pattern.
        "read-only-changed": "error",
        # A Claude Code topic file MEMORY.md's loaded lines do not name: never read.
        "unindexed-memory": "warning",
        # A CLAUDE.md `@path` import Claude Code skips: missing, circular or too deep.
        "broken-import": "warning",
        "import-cycle": "warning",
        "import-depth": "warning",
        # A rule's `paths` / `globs` / `applyTo` pattern that matches no file.
        "unmatched-glob": "warning",
    }
)

DEFAULT_MAX_MEMORY_BYTES = 524288

CONFIG_SECTION = "memoryLs"
"""The workspace/configuration section that holds the settings."""

CLI_SOURCE = "command-line flags"
INITIALIZATION_OPTIONS_SOURCE = "initializationOptions"
WORKSPACE_CONFIGURATION_SOURCE = f"workspace configuration ({CONFIG_SECTION})"

_READ_ONLY_SUFFIX = ":ro"

# attrs field metadata key: a cattrs structure hook that validates just that field.
_STRUCTURE_HOOK = "memory_ls.structure"

# Flag spellings, so that errors in cli_layer name what the user actually typed.
_CLI_FLAG_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "layout": "--layout",
        "primaryFolder": "--primary-folder",
        "additionalFolders": "--additional-folders",
        "globalFolder": "--global-folder",
        "maxMemoryBytes": "--max-memory-bytes",
        "secrets": "--secrets",
    }
)


class ConfigError(Exception):
    """Invalid settings from one source; the message lists every problem found."""

    def __init__(self, source: str, problems: Sequence[str]) -> None:
        self.source = source
        self.problems = tuple(problems)
        super().__init__(f"Invalid configuration in {source}: " + "; ".join(self.problems))


class _Problem(Exception):
    """One or more invalid values below the path being structured.

    Each item is (relative path, description); the relative path is "" for the value
    itself, "[2]" for a list entry or ".code" for a mapping key.
    """

    def __init__(self, description: str = "", items: Sequence[tuple[str, str]] = ()) -> None:
        self.items = tuple(items) if items else (("", description),)
        super().__init__("; ".join(f"{path}: {text}" for path, text in self.items))


def camel_key(name: str) -> str:
    """Turn a snake_case field name into its camelCase external key."""
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _structure_str(value: object, _: object) -> str:
    if not isinstance(value, str):
        raise _Problem(f"expected a string, got {show_value(value)}")
    return value


def _structure_bool(value: object, _: object) -> bool:
    if not isinstance(value, bool):
        raise _Problem(f"expected true or false, got {show_value(value)}")
    return value


def _structure_int(value: object, _: object) -> int:
    # bool is an int subclass, but `true` as a size is a mistake, not 1.
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Problem(f"expected a whole number, got {show_value(value)}")
    return value


def _structure_path(value: object, _: object) -> str:
    text = _structure_str(value, str)
    if not text.strip():
        raise _Problem("expected a folder path, got an empty string")
    return text


def _structure_positive_int(value: object, _: object) -> int:
    number = _structure_int(value, int)
    if number <= 0:
        raise _Problem(f"expected a positive number of bytes, got {show_value(value)}")
    return number


@attrs.frozen
class FolderSetting:
    """One additional folder: its path as configured, and whether it is read-only."""

    path: str = attrs.field(metadata={_STRUCTURE_HOOK: _structure_path})
    read_only: bool = False


def _complete_severities(given: Mapping[str, Severity]) -> Mapping[str, Severity]:
    """Fill in the default severity of every code the given map leaves out."""
    return MappingProxyType({**DEFAULT_SEVERITIES, **given})


@attrs.frozen
class Settings:
    """The merged, effective settings."""

    layout: LayoutName | None = None
    primary_folder: str | None = None
    additional_folders: tuple[FolderSetting, ...] = ()
    global_folder: str | None = None
    global_enabled: bool = True
    max_memory_bytes: int = DEFAULT_MAX_MEMORY_BYTES
    # Mappings are unhashable; leaving them out of the hash keeps Settings hashable.
    diagnostics: Mapping[str, Severity] = attrs.field(
        default=DEFAULT_SEVERITIES, converter=_complete_severities, hash=False
    )
    diagnostics_scope: DiagnosticsScope = "workspace"
    secrets: SecretsPolicy = "refuse"
    # The codes some source set: a default may depend on the workspace, a choice never.
    configured_diagnostics: frozenset[str] = frozenset()
    # Search by meaning: off (None) unless the project file configures it.
    meaning: MeaningSettings | None = None

    def severity(self, code: str) -> Severity:
        """Return the configured severity of a diagnostic code ("warning" if unknown)."""
        return self.diagnostics.get(code, "warning")


def _freeze(values: Mapping[str, object]) -> Mapping[str, object]:
    """Copy a mapping into a read-only one, so a Layer cannot change after parsing."""
    return MappingProxyType(dict(values))


@attrs.frozen
class Layer:
    """One validated source of settings, holding only the keys it set."""

    source: str
    values: Mapping[str, object] = attrs.field(converter=_freeze, hash=False)
    unknown_keys: tuple[str, ...] = ()

    def describe_unknown_keys(self) -> str | None:
        """Return a message naming the ignored unknown keys, or None when there are none."""
        if not self.unknown_keys:
            return None
        shown = []
        for key in self.unknown_keys:
            hint = camel_key(key)
            # snake_case spellings are a common slip; point at the key that works.
            if hint != key and hint in _OPTION_KEYS:
                shown.append(f"{key} (did you mean {hint}?)")
            else:
                shown.append(key)
        return f"Ignored unknown settings in {self.source}: " + ", ".join(shown)


# --- structuring -----------------------------------------------------------------------


def _is_literal(type_: Any) -> bool:
    return get_origin(type_) is Literal


def _literal_hook(type_: Any) -> Callable[[object, object], object]:
    allowed = get_args(type_)

    def structure(value: object, _: object) -> object:
        # Hashing is not needed, and unhashable input (a list) must not crash the check.
        if not any(type(value) is type(choice) and value == choice for choice in allowed):
            choices = ", ".join(show_value(choice) for choice in allowed)
            raise _Problem(f"expected one of {choices}, got {show_value(value)}")
        return value

    return structure


def _parse_folder_entry(text: str) -> FolderSetting:
    """Parse one string entry: "path" or "path:ro"."""
    text = text.strip()
    read_only = text.endswith(_READ_ONLY_SUFFIX)
    if read_only:
        text = text[: -len(_READ_ONLY_SUFFIX)].rstrip()
    if not text:
        raise _Problem(
            "expected a folder path before ':ro'"
            if read_only
            else "expected a folder path, got an empty string"
        )
    return FolderSetting(path=text, read_only=read_only)


def _parse_folder_list(text: str) -> tuple[FolderSetting, ...]:
    """Parse the comma-separated form; empty entries (a trailing comma) are skipped."""
    entries = [entry for entry in text.split(",") if entry.strip()]
    folders: list[FolderSetting] = []
    problems: list[tuple[str, str]] = []
    for entry in entries:
        try:
            folders.append(_parse_folder_entry(entry))
        except _Problem as exc:
            problems.extend(
                (path, f"{why} in entry {show_value(entry)}") for path, why in exc.items
            )
    if problems:
        raise _Problem(items=problems)
    return tuple(folders)


def _structure_additional_folders(value: object, _: object) -> tuple[FolderSetting, ...]:
    if isinstance(value, str):
        return _parse_folder_list(value)
    if not isinstance(value, (list, tuple)):
        raise _Problem(
            f"expected a list of folders or a comma-separated string, got {show_value(value)}"
        )
    folders: list[FolderSetting] = []
    problems: list[tuple[str, str]] = []
    for index, entry in enumerate(value):
        try:
            if isinstance(entry, str):
                folders.append(_parse_folder_entry(entry))
            elif isinstance(entry, Mapping):
                folders.append(_converter.structure(entry, FolderSetting))
            else:
                raise _Problem(
                    'expected a path string or an object {"path": ..., "readOnly": ...}, '
                    f"got {show_value(entry)}"
                )
        except Exception as exc:
            problems.extend((f"[{index}]{path}", text) for path, text in _explain(exc))
    if problems:
        raise _Problem(items=problems)
    return tuple(folders)


def _structure_diagnostics(value: object, _: object) -> Mapping[str, Severity]:
    if not isinstance(value, Mapping):
        raise _Problem(
            f"expected an object mapping diagnostic codes to severities, got {show_value(value)}"
        )
    severities: dict[str, Severity] = {}
    problems: list[tuple[str, str]] = []
    for code, severity in value.items():
        try:
            severities[code] = _converter.structure(severity, Severity)  # type: ignore[arg-type]
        except Exception as exc:
            problems.extend((f".{code}{path}", text) for path, text in _explain(exc))
    if problems:
        raise _Problem(items=problems)
    return MappingProxyType(severities)


@attrs.frozen
class _Options:
    """The external shape of one source; None means the key was not given."""

    layout: LayoutName | None = None
    primary_folder: str | None = attrs.field(
        default=None, metadata={_STRUCTURE_HOOK: _structure_path}
    )
    additional_folders: tuple[FolderSetting, ...] | None = attrs.field(
        default=None, metadata={_STRUCTURE_HOOK: _structure_additional_folders}
    )
    global_folder: str | None = attrs.field(
        default=None, metadata={_STRUCTURE_HOOK: _structure_path}
    )
    max_memory_bytes: int | None = attrs.field(
        default=None, metadata={_STRUCTURE_HOOK: _structure_positive_int}
    )
    diagnostics: Mapping[str, Severity] | None = attrs.field(
        default=None, metadata={_STRUCTURE_HOOK: _structure_diagnostics}
    )
    diagnostics_scope: DiagnosticsScope | None = None
    secrets: SecretsPolicy | None = None


_OPTION_KEYS: frozenset[str] = frozenset(camel_key(field.name) for field in attrs.fields(_Options))
SETTING_KEYS = _OPTION_KEYS
"""Every setting's key (camelCase), as the editor's settings and initializationOptions give it."""


def _camel_case_structure_hook(cls: type[Any]) -> Callable[[Any, Any], Any]:
    """Structure an attrs class from camelCase keys, with per-field hooks from metadata."""
    overrides = {
        field.name: override(
            rename=camel_key(field.name), struct_hook=field.metadata.get(_STRUCTURE_HOOK)
        )
        for field in attrs.fields(cls)
    }
    return make_dict_structure_fn(cls, _converter, **overrides)  # type: ignore[arg-type]


# Strict: cattrs would otherwise coerce 5 to "5" and "x" to True, hiding mistakes.
_converter = cattrs.Converter(detailed_validation=True, forbid_extra_keys=True)
_converter.register_structure_hook(str, _structure_str)
_converter.register_structure_hook(bool, _structure_bool)
_converter.register_structure_hook(int, _structure_int)
_converter.register_structure_hook_factory(_is_literal, _literal_hook)
_converter.register_structure_hook_factory(attrs.has, _camel_case_structure_hook)


def _explain(exc: BaseException) -> list[tuple[str, str]]:
    """Flatten a structuring error into (relative path, description) pairs."""
    if isinstance(exc, _Problem):
        return list(exc.items)
    if isinstance(exc, ClassValidationError):
        with_notes, without = exc.group_exceptions()
        found = [
            (f".{camel_key(note.name)}{path}", text)
            for sub, note in with_notes
            for path, text in _explain(sub)
        ]
        return found + [pair for sub in without for pair in _explain(sub)]
    if isinstance(exc, IterableValidationError):
        with_notes_i, without_i = exc.group_exceptions()
        found = [
            (f"[{note.index!r}]{path}", text)
            for sub, note in with_notes_i
            for path, text in _explain(sub)
        ]
        return found + [pair for sub in without_i for pair in _explain(sub)]
    if isinstance(exc, ForbiddenExtraKeysError):
        known = ", ".join(show_value(camel_key(field.name)) for field in attrs.fields(exc.cl))
        extra = ", ".join(show_value(key) for key in sorted(exc.extra_fields))
        return [("", f"unknown key {extra} (allowed: {known})")]
    if isinstance(exc, KeyError):
        # cattrs notes the missing field on the error, so the path already names it.
        return [("", "required key missing")]
    return [("", f"invalid value ({exc})")]


def _format_path(path: str, display: Mapping[str, str]) -> str:
    """Turn ".additionalFolders[0].path" into "additionalFolders[0].path", renaming the key."""
    path = path.removeprefix(".")
    end = min((i for i in (path.find("."), path.find("[")) if i >= 0), default=len(path))
    key = path[:end]
    return display.get(key, key) + path[end:]


def _parse(raw: object, source: str, display: Mapping[str, str]) -> Layer:
    if raw is None:
        return Layer(source=source, values={}, unknown_keys=())
    if not isinstance(raw, Mapping):
        raise ConfigError(source, [f"expected an object of settings, got {show_value(raw)}"])

    unknown: list[str] = []
    given: dict[str, object] = {}
    for key, value in raw.items():
        if not isinstance(key, str) or key not in _OPTION_KEYS:
            unknown.append(str(key))
        elif value is not None:
            # null means "left out": the lower source keeps its value (SPEC 3.6).
            given[key] = value

    diagnostics = given.get("diagnostics")
    if isinstance(diagnostics, Mapping):
        known_codes: dict[str, object] = {}
        for code, severity in diagnostics.items():
            if not isinstance(code, str) or code not in DIAGNOSTIC_CODES:
                unknown.append(f"diagnostics.{code}")
            elif severity is not None:
                known_codes[code] = severity
        given["diagnostics"] = known_codes

    try:
        options = _converter.structure(given, _Options)
    except Exception as exc:
        problems = [f"{_format_path(path, display)}: {text}" for path, text in _explain(exc)]
        raise ConfigError(source, problems) from exc

    values: dict[str, object] = {}
    for field in attrs.fields(_Options):
        value = getattr(options, field.name)
        if value is not None:
            values[field.name] = value
    if values.get("diagnostics") == {}:
        del values["diagnostics"]
    if "global_folder" in values:
        values["global_enabled"] = True
    elif "globalFolder" in raw and raw["globalFolder"] is None:
        values["global_enabled"] = False
    return Layer(source=source, values=values, unknown_keys=tuple(unknown))


# --- public API ------------------------------------------------------------------------


def parse_layer(raw: object, source: str) -> Layer:
    """Validate the settings one source sent (camelCase keys) into a Layer."""
    return _parse(raw, source, {})


def parse_additional_folders_arg(text: str) -> tuple[FolderSetting, ...]:
    """Parse the --additional-folders flag: comma-separated paths, ":ro" marks read-only."""
    try:
        return _parse_folder_list(text)
    except _Problem as exc:
        raise ConfigError(
            CLI_SOURCE, [f"--additional-folders: {why}" for _, why in exc.items]
        ) from exc


def cli_layer(
    *,
    layout: str | None = None,
    primary_folder: str | None = None,
    additional_folders: str | None = None,
    global_folder: str | None = None,
    no_global: bool = False,
    max_memory_bytes: int | None = None,
    secrets: str | None = None,
) -> Layer:
    """Build the layer for the server and CLI flags."""
    if no_global and global_folder is not None:
        raise ConfigError(CLI_SOURCE, ["--no-global and --global-folder cannot be used together"])
    raw: dict[str, object] = {
        key: value
        for key, value in (
            ("layout", layout),
            ("primaryFolder", primary_folder),
            ("additionalFolders", additional_folders),
            ("globalFolder", global_folder),
            ("maxMemoryBytes", max_memory_bytes),
            ("secrets", secrets),
        )
        if value is not None
    }
    if no_global:
        raw["globalFolder"] = None
    return _parse(raw, CLI_SOURCE, _CLI_FLAG_NAMES)


def merge_layers(*layers: Layer) -> Settings:
    """Merge layers, lowest precedence first, key by key over the defaults."""
    values: dict[str, object] = {}
    severities: dict[str, Severity] = {}
    for layer in layers:
        for key, value in layer.values.items():
            if key == "diagnostics":
                # Per code: a source that sets one code keeps the others from below.
                severities.update(cast(Mapping[str, Severity], value))
            else:
                values[key] = value
    global_enabled = cast(bool, values.get("global_enabled", True))
    return Settings(
        layout=cast("LayoutName | None", values.get("layout")),
        primary_folder=cast("str | None", values.get("primary_folder")),
        additional_folders=cast("tuple[FolderSetting, ...]", values.get("additional_folders", ())),
        # A disabled global scope has no folder, even if a lower source named one.
        global_folder=cast("str | None", values.get("global_folder")) if global_enabled else None,
        global_enabled=global_enabled,
        max_memory_bytes=cast(int, values.get("max_memory_bytes", DEFAULT_MAX_MEMORY_BYTES)),
        diagnostics=severities,
        diagnostics_scope=cast(DiagnosticsScope, values.get("diagnostics_scope", "workspace")),
        secrets=cast(SecretsPolicy, values.get("secrets", "refuse")),
        configured_diagnostics=frozenset(severities),
        meaning=cast("MeaningSettings | None", values.get("meaning")),
    )


# --- the project file ------------------------------------------------------------------

# The project file's keys (kebab-case, as the flags spell them) and the settings they set.
PROJECT_KEYS: Mapping[str, str] = MappingProxyType(
    {
        "layout": "layout",
        "primary-folder": "primaryFolder",
        "additional-folders": "additionalFolders",
        "global-folder": "globalFolder",
        "global": "global",
        "max-memory-bytes": "maxMemoryBytes",
        "secrets": "secrets",
        "diagnostics-scope": "diagnosticsScope",
        "diagnostics": "diagnostics",
        # Project file only (no editor setting): `[search.meaning]` (search_settings.py).
        "search": "search",
    }
)
_PROJECT_DISPLAY: Mapping[str, str] = MappingProxyType(
    {camel: kebab for kebab, camel in PROJECT_KEYS.items()}
)
_FOLDER_TABLE_KEYS: Mapping[str, str] = MappingProxyType({"path": "path", "read-only": "readOnly"})


def _relative_to(path: str, base_dir: str) -> str:
    """A folder of the project file, relative to the file's directory (`~` kept as it is)."""
    if path.startswith("~") or os.path.isabs(path):
        return path
    return os.path.normpath(os.path.join(base_dir, path))


def parse_project_table(table: Mapping[str, object], source: str, base_dir: str) -> Layer:
    """Validate the project file's table (kebab-case keys) into a Layer.

    Unlike an editor's settings, whose unknown keys are only warned about (the editor
    may be newer or older than the server), an unknown key in the file is an error: the
    file is the repository's, and a typo there would silently change every surface.
    Folders are taken relative to `base_dir`, the file's directory.
    """
    problems: list[str] = []
    raw: dict[str, object] = {}
    for key, value in table.items():
        if key not in PROJECT_KEYS:
            allowed = ", ".join(PROJECT_KEYS)
            problems.append(
                f"{key}: unknown key{did_you_mean(key, list(PROJECT_KEYS))} (allowed: {allowed})"
            )
            continue
        raw[PROJECT_KEYS[key]] = value
    diagnostics = raw.get("diagnostics")
    if isinstance(diagnostics, Mapping):
        for code in diagnostics:
            if code not in DIAGNOSTIC_CODES:
                closest = did_you_mean(str(code), DIAGNOSTIC_CODES)
                problems.append(
                    f"diagnostics.{code}: unknown diagnostic code{closest} "
                    f"(codes: {', '.join(DIAGNOSTIC_CODES)})"
                )
    folders = raw.get("additionalFolders")
    if folders is not None:
        if isinstance(folders, str) or not isinstance(folders, list):
            problems.append(
                "additional-folders: expected an array of folders "
                '(["path", "path:ro", {path = "path", read-only = true}]), '
                f"got {show_value(folders)}"
            )
            del raw["additionalFolders"]  # said once, not again by the editor's wording
        else:
            entries: list[object] = []
            for index, entry in enumerate(folders):
                if isinstance(entry, Mapping):
                    renamed: dict[str, object] = {}
                    for entry_key, entry_value in entry.items():
                        if entry_key not in _FOLDER_TABLE_KEYS:
                            problems.append(
                                f"additional-folders[{index}].{entry_key}: unknown key"
                                f"{did_you_mean(entry_key, list(_FOLDER_TABLE_KEYS))} "
                                "(allowed: path, read-only)"
                            )
                        else:
                            renamed[_FOLDER_TABLE_KEYS[entry_key]] = entry_value
                    entries.append(renamed)
                else:
                    entries.append(entry)
            raw["additionalFolders"] = entries
    meaning = parse_search_table(raw.pop("search", None), problems)
    enabled = raw.pop("global", None)
    if enabled is not None and not isinstance(enabled, bool):
        problems.append(f"global: expected true or false, got {show_value(enabled)}")
    elif enabled is False:
        if raw.get("globalFolder") is not None:
            problems.append("global: false and global-folder cannot be used together")
        raw["globalFolder"] = None
    try:
        layer = _parse(raw, source, _PROJECT_DISPLAY)
    except ConfigError as exc:
        # The file's spelling of a folder table's key, not the editor settings' one.
        problems += [problem.replace(".readOnly", ".read-only") for problem in exc.problems]
    if problems:
        raise ConfigError(source, problems)
    if meaning is not None:
        layer = attrs.evolve(layer, values={**layer.values, "meaning": meaning})
    return anchor_layer(layer, base_dir)


def anchor_layer(layer: Layer, base_dir: str) -> Layer:
    """The layer with every relative folder taken relative to `base_dir` (made absolute):
    the project file's folders are relative to its directory, flags' to where they were
    given."""
    anchored = dict(layer.values)
    for key in ("primary_folder", "global_folder"):
        if key in anchored:
            anchored[key] = _relative_to(cast(str, anchored[key]), base_dir)
    if "additional_folders" in anchored:
        anchored["additional_folders"] = tuple(
            attrs.evolve(folder, path=_relative_to(folder.path, base_dir))
            for folder in cast("tuple[FolderSetting, ...]", anchored["additional_folders"])
        )
    return attrs.evolve(layer, values=anchored)


def plain_value(value: object) -> object:
    """A setting's value as JSON holds it (folders as {path, readOnly}, mappings as dicts)."""
    if isinstance(value, tuple):
        return [
            {"path": item.path, "readOnly": item.read_only}
            if isinstance(item, FolderSetting)
            else item
            for item in value
        ]
    if isinstance(value, Mapping):
        return dict(value)
    return value


@attrs.frozen
class Resolved:
    """One setting's effective value and the source it came from ("default" if none)."""

    key: str
    value: object
    source: str


def explain_layers(*layers: Layer) -> list[Resolved]:
    """Each setting (the project file's key names) with its value and where it came from,
    lowest precedence first in `layers`, as `merge_layers` merges them."""
    settings = merge_layers(*layers)
    origin: dict[str, str] = {}
    for layer in layers:
        for key, value in layer.values.items():
            if key == "diagnostics":
                for code in cast(Mapping[str, Severity], value):
                    origin[f"diagnostics.{code}"] = layer.source
            else:
                origin[key] = layer.source
    rows = [
        Resolved("layout", settings.layout, origin.get("layout", "default")),
        Resolved(
            "primary-folder", settings.primary_folder, origin.get("primary_folder", "default")
        ),
        Resolved(
            "additional-folders",
            settings.additional_folders,
            origin.get("additional_folders", "default"),
        ),
        Resolved(
            "global-folder",
            settings.global_folder,
            origin.get("global_folder", origin.get("global_enabled", "default")),
        ),
        Resolved("global", settings.global_enabled, origin.get("global_enabled", "default")),
        Resolved(
            "max-memory-bytes", settings.max_memory_bytes, origin.get("max_memory_bytes", "default")
        ),
        Resolved("secrets", settings.secrets, origin.get("secrets", "default")),
        Resolved(
            "diagnostics-scope",
            settings.diagnostics_scope,
            origin.get("diagnostics_scope", "default"),
        ),
    ]
    meaning = settings.meaning
    where = origin.get("meaning", "default")
    rows.append(Resolved("search.meaning", "on" if meaning else "off", where))
    if meaning is not None:
        rows += [
            Resolved("search.meaning.provider", meaning.provider, where),
            Resolved("search.meaning.model", meaning.model, where),
            Resolved("search.meaning.url", meaning.url, where),
            Resolved("search.meaning.api-key-env", meaning.api_key_env, where),
        ]
    rows += [
        Resolved(
            f"diagnostics.{code}",
            settings.diagnostics[code],
            origin.get(f"diagnostics.{code}", "default"),
        )
        for code in DIAGNOSTIC_CODES
    ]
    return rows
