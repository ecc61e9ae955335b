"""A memory's text: YAML frontmatter split, parsed, checked and written back (SPEC 2.5)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import yaml
from frontmatter.default_handlers import YAMLHandler

MANAGED_KEYS = ("tags", "created_at", "updated_at")
# Frontmatter is a few lines; refusing huge blocks keeps YAML bombs and binary junk cheap.
MAX_FRONTMATTER_CHARS = 65536
_FENCE = "---"

# The C loader and dumper are several times faster; python-frontmatter prefers them too.
_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
if TYPE_CHECKING:
    _BaseDumper = yaml.SafeDumper
else:
    _BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BaseDumper):
    """Safe dumper that writes UTC timestamps as `2025-10-08T03:07:11Z`, unquoted."""

    def ignore_aliases(self, data: Any) -> bool:
        """Never write `&id001` anchors: people read and edit these files."""
        return True


def _represent_datetime(dumper: yaml.SafeDumper, value: dt.datetime) -> yaml.Node:
    if value.tzinfo is not None and value.utcoffset() == dt.timedelta(0):
        text = value.strftime("%Y-%m-%dT%H:%M:%SZ")
        return dumper.represent_scalar("tag:yaml.org,2002:timestamp", text)
    return dumper.represent_datetime(value)


_Dumper.add_representer(dt.datetime, _represent_datetime)
_HANDLER = YAMLHandler()


@dataclass(frozen=True)
class FrontmatterProblem:
    """Why the frontmatter is invalid, and the 0-based line where it shows."""

    message: str
    line: int = 0


@dataclass
class Document:
    """A memory file split into frontmatter and body."""

    body: str
    metadata: dict[str, Any] = field(default_factory=dict)
    # The text between the fences, kept so a broken block is written back untouched.
    raw_frontmatter: str | None = None
    problem: FrontmatterProblem | None = None
    body_line: int = 0  # 0-based line of the file where the body starts

    @property
    def has_frontmatter(self) -> bool:
        """Whether the file has a frontmatter block (valid or not)."""
        return self.raw_frontmatter is not None

    @property
    def tags(self) -> list[str]:
        """The memory's tags, empty when missing or malformed."""
        tags = self.metadata.get("tags")
        if isinstance(tags, list) and all(isinstance(t, str) for t in tags):
            return list(tags)
        return []


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """Split `text` into (frontmatter text or None, body, 0-based body line)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith(_FENCE):
        return None, text, 0
    first_end = text.find("\n")
    if first_end == -1 or text[:first_end].rstrip() != _FENCE:
        return None, text, 0
    pos = first_end + 1
    line = 1
    while pos <= len(text):
        end = text.find("\n", pos)
        current = text[pos:] if end == -1 else text[pos:end]
        if current.rstrip() == _FENCE:
            body = "" if end == -1 else text[end + 1 :]
            return text[first_end + 1 : pos], body, line + 1
        if end == -1:
            break
        pos = end + 1
        line += 1
    # An opening fence with no closing one is a horizontal rule, not frontmatter.
    return None, text, 0


def parse_document(text: str) -> Document:
    """Parse a memory's text; broken frontmatter is reported, never raised."""
    raw, body, body_line = split_frontmatter(text)
    if raw is None:
        return Document(body=body)
    doc = Document(body=body, raw_frontmatter=raw, body_line=body_line)
    if len(raw) > MAX_FRONTMATTER_CHARS:
        doc.problem = FrontmatterProblem(
            f"Frontmatter is over {MAX_FRONTMATTER_CHARS} characters; it is not parsed."
        )
        return doc
    try:
        data = _HANDLER.load(raw, Loader=_Loader) if raw.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = 1 + (mark.line if mark is not None else 0)
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        doc.problem = FrontmatterProblem(
            f"Frontmatter is not valid YAML ({reason}); fix it so tags and dates can be read.",
            line,
        )
        return doc
    except (RecursionError, ValueError) as exc:
        doc.problem = FrontmatterProblem(f"Frontmatter could not be read: {exc}.")
        return doc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        doc.problem = FrontmatterProblem(
            f"Frontmatter must be a mapping of keys to values, not a {type(data).__name__}.", 1
        )
        return doc
    doc.metadata = {str(k): v for k, v in data.items()}
    doc.problem = metadata_problem(doc.metadata, raw)
    return doc


def metadata_problem(metadata: Mapping[str, Any], raw: str = "") -> FrontmatterProblem | None:
    """Check the types of the keys the product manages."""
    tags = metadata.get("tags")
    if "tags" in metadata and not (
        isinstance(tags, list) and all(isinstance(t, str) for t in tags)
    ):
        return FrontmatterProblem(
            "`tags` must be a list of strings, e.g. `tags: [auth, api]`.", _key_line(raw, "tags")
        )
    for key in ("created_at", "updated_at"):
        if key in metadata and not isinstance(metadata[key], (str, dt.date)):
            return FrontmatterProblem(
                f"`{key}` must be an ISO 8601 timestamp such as 2025-10-08T03:07:11Z.",
                _key_line(raw, key),
            )
    return None


def _key_line(raw: str, key: str) -> int:
    """The 0-based file line of a top-level frontmatter key (line 1 follows the `---`)."""
    for index, line in enumerate(raw.splitlines()):
        if line.startswith(f"{key}:"):
            return index + 1
    return 1


def render(doc: Document) -> str:
    """Write a document back to text; a broken frontmatter block is kept as it was."""
    if doc.problem is not None and doc.raw_frontmatter is not None:
        return f"{_FENCE}\n{doc.raw_frontmatter}{_FENCE}\n{doc.body}"
    if doc.raw_frontmatter is None and not doc.metadata:
        return doc.body
    dumped = _HANDLER.export(doc.metadata, Dumper=_Dumper, sort_keys=False) if doc.metadata else ""
    block = f"{dumped}\n" if dumped else ""
    return f"{_FENCE}\n{block}{_FENCE}\n{doc.body}"


def utc_now() -> dt.datetime:
    """The current time in UTC, to the second (the SPEC timestamp precision)."""
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


def parse_timestamp(value: object) -> dt.datetime | None:
    """Read a timestamp given as ISO text or a date; None when it is not one."""
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
    if isinstance(value, str):
        try:
            return parse_timestamp(dt.datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            return None
    return None


def iso(value: object) -> str | None:
    """A timestamp as SPEC text (`2025-10-08T03:07:11Z`), None when missing or unreadable."""
    stamp = parse_timestamp(value)
    if stamp is None:
        return None
    return stamp.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def jsonable(value: Any) -> Any:
    """Frontmatter values made JSON-safe (dates as ISO text)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dt.datetime):
        return iso(value) if value.tzinfo else value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def update_document(
    doc: Document | None,
    body: str,
    *,
    tags: list[str] | None = None,
    now: dt.datetime | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Document:
    """The document after a write: body replaced, other keys kept, timestamps kept current.

    A new or plain memory stays plain unless tags or extra keys are given (agents read
    these files raw). `extra` keys from written content merge over the existing ones.
    """
    stamp = now or utc_now()
    if doc is not None and doc.problem is not None and doc.raw_frontmatter is not None:
        # Never rewrite frontmatter we cannot read: the user would lose it.
        return Document(
            body=body,
            raw_frontmatter=doc.raw_frontmatter,
            problem=doc.problem,
            body_line=doc.body_line,
        )
    had_frontmatter = doc is not None and doc.has_frontmatter
    metadata: dict[str, Any] = dict(doc.metadata) if doc is not None else {}
    if extra:
        metadata.update(extra)
    if tags is not None:
        metadata["tags"] = list(tags)
    if not had_frontmatter and not metadata:
        return Document(body=body)
    if doc is None or "created_at" not in metadata:
        metadata.setdefault("created_at", stamp)
    metadata["updated_at"] = stamp
    ordered = {key: metadata[key] for key in MANAGED_KEYS if key in metadata}
    ordered.update({k: v for k, v in metadata.items() if k not in ordered})
    if had_frontmatter and doc is not None:
        # Keep the author's key order where the keys already existed.
        ordered = {k: metadata[k] for k in doc.metadata if k in metadata}
        ordered.update({k: v for k, v in metadata.items() if k not in ordered})
    return Document(body=body, metadata=ordered, raw_frontmatter="")
