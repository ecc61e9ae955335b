"""The extension's settings schema cannot lag the server: every diagnostic code and
setting the server obeys is in package.json (client-vscode/scripts/settings_schema.py
writes it), and the example workspace's settings agree with its project file."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, get_args

from memory_ls.config import DEFAULT_SEVERITIES, DIAGNOSTIC_CODES, SETTING_KEYS, Severity

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "client-vscode" / "scripts"))
import settings_schema  # noqa: E402


def _properties() -> dict[str, Any]:
    manifest = json.loads((REPO / "package.json").read_text(encoding="utf-8"))
    properties: dict[str, Any] = manifest["contributes"]["configuration"]["properties"]
    return properties


def test_every_diagnostic_code_of_the_server_is_a_setting_with_its_default() -> None:
    diagnostics = _properties()["memoryLs.diagnostics"]
    assert list(diagnostics["properties"]) == list(DIAGNOSTIC_CODES)
    assert diagnostics["additionalProperties"] is False
    for code, schema in diagnostics["properties"].items():
        assert schema["enum"] == list(get_args(Severity)), code
        assert f"default {DEFAULT_SEVERITIES[code]}" in schema["description"], code


def test_every_server_setting_is_in_the_schema_and_sent_by_the_extension() -> None:
    properties = _properties()
    missing = {key for key in SETTING_KEYS if f"memoryLs.{key}" not in properties}
    assert not missing, f"package.json lacks {sorted(missing)}"
    for name, choices in settings_schema.ENUMS.items():
        assert properties[f"memoryLs.{name}"]["enum"] == list(choices), name
    # The extension passes exactly these keys to the server (client-vscode/src/settings.ts).
    source = (REPO / "client-vscode" / "src" / "settings.ts").read_text(encoding="utf-8")
    listed = re.search(r"export const SERVER_KEYS = \[(.*?)\] as const;", source, re.DOTALL)
    assert listed is not None
    assert set(re.findall(r'"(\w+)"', listed.group(1))) == set(SETTING_KEYS)


def test_the_schema_is_what_the_generator_writes() -> None:
    """Fails after a code or a choice is added to the server until the script is run."""
    assert settings_schema.main(["--check"]) == 0


def test_a_new_code_gets_a_description_and_an_entry() -> None:
    old = {"properties": {"broken-link": {"description": "A link (default error)."}}}
    written = settings_schema.diagnostics_schema(old)["properties"]
    assert written["broken-link"]["description"] == "A link (default warning)."
    assert written["stale-path"]["description"].endswith("(default warning).")


def test_the_example_workspace_settings_do_not_contradict_its_project_file() -> None:
    """The editor opens examples/workspace with the store its memory-ls.toml defines:
    any `memoryLs.*` store setting there says the same (no override to explain)."""
    from memory_ls.config import anchor_layer, parse_layer
    from memory_ls.project_file import read_project_file

    workspace = REPO / "examples" / "workspace"
    text = (workspace / ".vscode" / "settings.json").read_text("utf-8")
    settings = json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.MULTILINE))
    editor = {k.removeprefix("memoryLs."): v for k, v in settings.items()}
    layer = anchor_layer(parse_layer(editor, "settings.json"), str(workspace))
    project = read_project_file(str(workspace / "memory-ls.toml"))
    for key, value in layer.values.items():
        assert project.layer.values.get(key) == value, key
    assert project.layer.values["max_memory_bytes"] == 4096
