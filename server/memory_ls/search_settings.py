"""Search by meaning's settings: the project file's `[search.meaning]` table (issue 35).

Project file only, not an editor setting: which model reads the memories, and whether
anything is sent to an endpoint, is the repository's choice. Parsed by
`config.parse_project_table`; its problems are said as the file's other keys' are.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Literal, cast, get_args

import attrs

# Where search by meaning gets its embeddings: an OpenAI-compatible endpoint, or in process.
MeaningProvider = Literal["openai", "local"]


@attrs.frozen
class MeaningSettings:
    """Search by meaning (`[search.meaning]` of the project file): where embeddings come from."""

    provider: MeaningProvider
    model: str
    # The OpenAI-compatible API's base (…/v1): `/embeddings` is posted to under it.
    url: str | None = None
    # The name of the environment variable holding the API key (the key is never stored).
    api_key_env: str | None = None


# The keys of `[search.meaning]`, as the project file spells them.
MEANING_KEYS: tuple[str, ...] = ("provider", "model", "url", "api-key-env")


def show_value(value: object) -> str:
    """A received value as the user wrote it (JSON), kept short (the settings' messages)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """ " (did you mean X?)" for the closest choice to a typo, else ""."""
    found = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {found[0]!r}?)" if found else ""


def parse_search_table(table: object, problems: list[str]) -> MeaningSettings | None:
    """The project file's `[search]` table (`[search.meaning]`), its problems added to
    `problems`; None when meaning search is not configured."""
    if table is None:
        return None
    if not isinstance(table, Mapping):
        problems.append(f"search: expected a table ([search.meaning]), got {show_value(table)}")
        return None
    for key in table:
        if key != "meaning":
            problems.append(
                f"search.{key}: unknown key{did_you_mean(key, ['meaning'])} (allowed: meaning)"
            )
    meaning = table.get("meaning")
    if meaning is None:
        return None
    if not isinstance(meaning, Mapping):
        problems.append(f"search.meaning: expected a table, got {show_value(meaning)}")
        return None
    found = len(problems)
    for key in meaning:
        if key not in MEANING_KEYS:
            allowed = ", ".join(MEANING_KEYS)
            problems.append(
                f"search.meaning.{key}: unknown key{did_you_mean(key, list(MEANING_KEYS))} "
                f"(allowed: {allowed})"
            )
    provider = meaning.get("provider")
    choices = get_args(MeaningProvider)
    if provider not in choices:
        problems.append(
            f"search.meaning.provider: expected one of {', '.join(map(show_value, choices))}, "
            f"got {show_value(provider)}"
        )
    model = meaning.get("model")
    if not isinstance(model, str) or not model.strip():
        problems.append(f"search.meaning.model: expected a model name, got {show_value(model)}")
    url, key_env = meaning.get("url"), meaning.get("api-key-env")
    if provider == "openai":
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            problems.append(
                "search.meaning.url: expected the API's http:// or https:// address (…/v1), "
                f"got {show_value(url)}"
            )
    elif url is not None:
        problems.append('search.meaning.url: only with provider = "openai"')
    if key_env is not None and (not isinstance(key_env, str) or not key_env.strip()):
        problems.append(
            "search.meaning.api-key-env: expected the name of an environment variable, "
            f"got {show_value(key_env)}"
        )
    elif key_env is not None and provider != "openai":
        problems.append('search.meaning.api-key-env: only with provider = "openai"')
    if len(problems) > found:
        return None
    return MeaningSettings(
        provider=cast(MeaningProvider, provider),
        model=cast(str, model),
        url=cast("str | None", url),
        api_key_env=cast("str | None", key_env),
    )
