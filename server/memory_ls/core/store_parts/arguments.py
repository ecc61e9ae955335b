"""The checks of the arguments the front ends pass to the store (scopes, strings, tags)."""

from __future__ import annotations

import re

from memory_ls.core.rules.errors import InvalidArguments
from memory_ls.core.storage.gate import VERSION_HEX_DIGITS

SCOPES = ("project", "global", "all")


def check_scope(scope: object, *, allow_all: bool = False) -> str | None:
    """Validate a scope argument."""
    allowed = SCOPES if allow_all else SCOPES[:2]
    if scope is None or (allow_all and scope == "all"):
        return None
    if not isinstance(scope, str) or scope not in allowed:
        raise InvalidArguments(f"scope must be one of {', '.join(allowed)}, not {scope!r}.")
    return scope


def _check_str(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidArguments(f"{what} must be a string, not {type(value).__name__}.")
    _check_unicode(value, what)
    return value


def _check_unicode(value: str, what: str) -> None:
    """Refuse text that cannot be written as UTF-8 (a lone surrogate, which JSON allows)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidArguments(
            f"{what} is not valid Unicode text (a lone surrogate at position {exc.start})."
        ) from exc


# What a read answers as a memory's version (gate.version_of): hex digits, any case.
_VERSION = re.compile(rf"[0-9a-fA-F]{{{VERSION_HEX_DIGITS}}}")


def _check_version_arg(value: object) -> str | None:
    """A version the caller read, or None; anything that is no version at all is refused
    as a wrong argument, not called a conflict (a conflict says someone changed the memory)."""
    if value is None:
        return None
    if not isinstance(value, str) or _VERSION.fullmatch(value.strip()) is None:
        if isinstance(value, str):
            shown = repr(value if len(value) <= 24 else value[:24] + "…")
        else:
            shown = f"a value of type {type(value).__name__}"
        raise InvalidArguments(
            f"The expected version must be a version a read answered: {VERSION_HEX_DIGITS} hex "
            f"digits such as '0123456789abcdef', not {shown}. Read the memory and pass the "
            "version its answer gives (read_memory's version), or leave it out. "
            "Nothing was changed."
        )
    return value.strip().lower()


def _check_flag(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidArguments(f"{what} must be true or false.")
    return value


def _check_tags(tags: object) -> list[str] | None:
    if tags is None:
        return None
    if not isinstance(tags, (list, tuple)) or not all(isinstance(t, str) for t in tags):
        raise InvalidArguments("tags must be a list of strings.")
    for tag in tags:
        _check_unicode(tag, "a tag")
    cleaned = [t.strip() for t in tags]
    if any(not t or "\n" in t for t in cleaned):
        raise InvalidArguments("a tag must be a non-empty single line of text.")
    return list(dict.fromkeys(cleaned))
