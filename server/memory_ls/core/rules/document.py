"""A memory's text: YAML frontmatter split, parsed, checked and written back (SPEC 2.5)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import yaml
from frontmatter.default_handlers import YAMLHandler
from yaml.constructor import SafeConstructor

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
        """No `&id001` anchors for plain values (one timestamp used twice reads badly).

        Shared lists and mappings keep their anchors: expanding them would turn a YAML
        alias bomb into gigabytes.
        """
        return isinstance(data, (str, bytes, bool, int, float, dt.date)) or data is None


def _represent_datetime(dumper: yaml.SafeDumper, value: dt.datetime) -> yaml.Node:
    if value.tzinfo is not None and value.utcoffset() == dt.timedelta(0):
        text = value.strftime("%Y-%m-%dT%H:%M:%SZ")
        return dumper.represent_scalar("tag:yaml.org,2002:timestamp", text)
    return dumper.represent_datetime(value)


_Dumper.add_representer(dt.datetime, _represent_datetime)
_HANDLER = YAMLHandler()

# Most frontmatter is a few `key: value` lines and a `tags` list. Those are read here,
# scalars resolved and built by PyYAML's own resolvers and constructors, so the result is
# the one the YAML parser gives (about 20 times faster); anything else goes to the parser.
_PLAIN_FIRST = r"(?:[A-Za-z0-9_.~/+(]|[^\x00-\x7f])"
_PLAIN_FLOW = r"(?:[A-Za-z0-9_.~/+=() -]|[^\x00-\x7f])"
_PLAIN_BLOCK = rf"(?:{_PLAIN_FLOW}|:(?=[^ ]))"
_QUOTED = r"'[^']*'|\"[^\"\\]*\""
_BLOCK_SCALAR = re.compile(rf"{_QUOTED}|{_PLAIN_FIRST}{_PLAIN_BLOCK}*")
_FLOW_SCALAR = re.compile(rf"{_QUOTED}|{_PLAIN_FIRST}{_PLAIN_FLOW}*")
_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*))?")
_ITEM_LINE = re.compile(r"( *)- +(.*)")
_UTC_STAMP = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z")
_STR_TAG = "tag:yaml.org,2002:str"
_CONSTRUCTOR = SafeConstructor()
_SIMPLE_TAGS = frozenset(
    f"tag:yaml.org,2002:{kind}" for kind in ("str", "int", "float", "bool", "null", "timestamp")
)


class _NotSimple(Exception):
    """The frontmatter needs the YAML parser."""


def _scalar(text: str, pattern: re.Pattern[str]) -> Any:
    """One scalar as PyYAML reads it (quoted: the text; plain: resolved by PyYAML's rules)."""
    text = text.rstrip(" ")
    if not pattern.fullmatch(text):
        raise _NotSimple
    if text[0] in "'\"":
        return text[1:-1]
    stamp = _UTC_STAMP.fullmatch(text)
    if stamp is not None:  # what PyYAML makes of `2025-10-08T03:07:11Z`, built directly
        year, month, day, hour, minute, second = map(int, stamp.groups())
        return dt.datetime(year, month, day, hour, minute, second, tzinfo=dt.timezone.utc)
    resolvers = _Loader.yaml_implicit_resolvers
    tag = _STR_TAG
    for candidate, regexp in [*resolvers.get(text[0], ()), *resolvers.get(None, ())]:
        if regexp.match(text):
            tag = candidate
            break
    if tag == _STR_TAG:
        return text
    if tag not in _SIMPLE_TAGS:
        raise _NotSimple
    return _Loader.yaml_constructors[tag](_CONSTRUCTOR, yaml.ScalarNode(tag, text))


@functools.lru_cache(maxsize=1024)
def _is_string_key(text: str) -> bool:
    """Whether PyYAML reads a key as this very string (not `yes`, `null`, ...)."""
    try:
        return bool(_scalar(text, _BLOCK_SCALAR) == text)
    except _NotSimple:
        return False


def quick_load(raw: str) -> dict[str, Any] | None:
    """The mapping a simple frontmatter block holds; None when it needs the YAML parser."""
    if "#" in raw or "\t" in raw or "\r" in raw or not raw.replace("\n", "").isprintable():
        return None
    data: dict[str, Any] = {}
    open_key: str | None = None  # a key with no value yet: block list items may follow
    items: list[Any] = []
    indent: int | None = None
    try:
        for line in raw.split("\n"):
            if not line.strip(" "):
                continue
            item = _ITEM_LINE.fullmatch(line) if open_key is not None else None
            if item is not None:
                if indent is not None and len(item.group(1)) != indent:
                    return None
                indent = len(item.group(1))
                items.append(_scalar(item.group(2), _BLOCK_SCALAR))
                continue
            if open_key is not None:
                data[open_key] = items if indent is not None else None
                open_key, items, indent = None, [], None
            entry = _KEY_LINE.fullmatch(line)
            if entry is None:
                return None
            key, value = entry.group(1), (entry.group(2) or "").rstrip(" ")
            if not _is_string_key(key):
                return None
            if not value:
                open_key = key
            elif value[0] == "[" and value[-1] == "]":
                inner = value[1:-1].strip(" ")
                parts = inner.split(",") if inner else []
                if parts and not parts[-1].strip(" "):
                    parts.pop()  # `[a, b,]`: YAML allows the trailing comma
                data[key] = [_scalar(part.strip(" "), _FLOW_SCALAR) for part in parts]
            else:
                data[key] = _scalar(value, _BLOCK_SCALAR)
        if open_key is not None:
            data[open_key] = items if indent is not None else None
    except _NotSimple:
        return None
    return data or None  # blank lines only: YAML reads null, which the caller handles


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
    # The bytes around the block, kept so a write that leaves the keys alone leaves them too.
    bom: str = ""  # "\ufeff" when the file starts with a byte order mark
    opening: str = f"{_FENCE}\n"  # the opening fence line as written (`---  \r\n`)
    closing: str = f"{_FENCE}\n"  # the closing fence line, without a line break at the end
    newline: str = "\n"  # "\r\n" when every line break of the file is CRLF

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


def decode_memory(data: bytes) -> tuple[str, str | None]:
    """Text of a memory file, and what is wrong with its encoding (None when it is UTF-8 text)."""
    if b"\x00" in data[:8192]:
        return data.decode("utf-8", errors="replace"), "binary data (NUL bytes)"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return data.decode("utf-8", errors="replace"), f"invalid UTF-8 at byte {exc.start}"


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """Split `text` into (frontmatter text or None, body, 0-based body line)."""
    parts = _split(text)
    return parts.raw, parts.body, parts.body_line


@dataclass(frozen=True)
class _Parts:
    """A file's text cut where its frontmatter block starts and ends."""

    bom: str
    raw: str | None
    body: str
    body_line: int = 0
    opening: str = f"{_FENCE}\n"
    closing: str = f"{_FENCE}\n"


def _split(text: str) -> _Parts:
    """The text's BOM, fences, frontmatter and body, so that joined they give `text` again."""
    bom = ""
    if text.startswith("\ufeff"):
        bom, text = "\ufeff", text[1:]
    if not text.startswith(_FENCE):
        return _Parts(bom, None, text)
    first_end = text.find("\n")
    if first_end == -1 or text[:first_end].rstrip() != _FENCE:
        return _Parts(bom, None, text)
    pos = first_end + 1
    line = 1
    while pos <= len(text):
        end = text.find("\n", pos)
        current = text[pos:] if end == -1 else text[pos:end]
        if current.rstrip() == _FENCE:
            closing_end = len(text) if end == -1 else end + 1
            return _Parts(
                bom,
                text[first_end + 1 : pos],
                text[closing_end:],
                line + 1,
                opening=text[: first_end + 1],
                closing=text[pos:closing_end],
            )
        if end == -1:
            break
        pos = end + 1
        line += 1
    # An opening fence with no closing one is a horizontal rule, not frontmatter.
    return _Parts(bom, None, text)


def line_break(text: str) -> str:
    """The text's line break: "\r\n" when it has line breaks and all of them are CRLF."""
    pairs = text.count("\r\n")
    return "\r\n" if pairs and pairs == text.count("\n") == text.count("\r") else "\n"


def parse_document(text: str) -> Document:
    """Parse a memory's text; broken frontmatter is reported, never raised."""
    parts = _split(text)
    raw = parts.raw
    newline = line_break(text)
    if raw is None:
        return Document(body=parts.body, bom=parts.bom, newline=newline)
    doc = Document(
        body=parts.body,
        raw_frontmatter=raw,
        body_line=parts.body_line,
        bom=parts.bom,
        opening=parts.opening,
        closing=parts.closing,
        newline=newline,
    )
    if len(raw) > MAX_FRONTMATTER_CHARS:
        doc.problem = FrontmatterProblem(
            f"Frontmatter is over {MAX_FRONTMATTER_CHARS} characters; it is not parsed."
        )
        return doc
    try:
        data = quick_load(raw) if raw.strip() else {}
        if data is None:
            data = _HANDLER.load(raw, Loader=_Loader)
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
    """Write a document back to text; its BOM and frontmatter block are written as they stand."""
    if doc.raw_frontmatter is None:
        return doc.bom + doc.body
    closing = doc.closing
    if doc.body and not closing.endswith("\n"):
        closing += doc.newline  # the file ended at the fence; now a body follows
    return f"{doc.bom}{doc.opening}{doc.raw_frontmatter}{closing}{doc.body}"


def dump_key(key: str, value: Any, *, block: bool = False) -> str:
    """One top-level key as YAML lines (`tags: [a, b]`, or a block list when `block`)."""
    if isinstance(value, list) and not block and all(isinstance(v, str) for v in value):
        items = yaml.dump(value, Dumper=_Dumper, default_flow_style=True).strip() if value else "[]"
        # "key: null" has the key quoted where YAML needs it; the value is swapped in.
        head = _HANDLER.export({key: None}, Dumper=_Dumper)
        return head[: -len("null")] + items + "\n"
    return _HANDLER.export({key: value}, Dumper=_Dumper, sort_keys=False) + "\n"


def key_span(lines: list[str], key: str) -> tuple[int, int] | None:
    """Lines [start, end) holding a top-level key and its indented or `- ` continuation."""
    for start, line in enumerate(lines):
        if line.startswith(f"{key}:"):
            end = start + 1
            while end < len(lines) and lines[end].strip() and lines[end][0] in " \t-":
                end += 1
            return start, end
    return None


def set_keys(
    raw: str,
    changes: Mapping[str, Any],
    remove: Sequence[str] = (),
    *,
    newline: str | None = None,
    order: Sequence[str] = (),
) -> str:
    """Frontmatter text with some top-level keys set or removed, every other line as written.

    Re-dumping the whole block would reformat the author's keys, drop comments and
    expand YAML aliases, so only the lines of the changed keys are touched; a timestamp
    on a line of its own keeps that line's quoting and comment. New lines end like the
    block's lines (`newline` for an empty block). A new key goes after the key that
    precedes it in `order` (the order the memory had), else at the end.
    """
    eol = newline or ("\r\n" if "\r\n" in raw else "\n")
    lines = raw.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += eol
    for key in remove:
        span = key_span(lines, key)
        if span is not None:
            del lines[span[0] : span[1]]
    for key, value in changes.items():
        span = key_span(lines, key)
        if span is None:
            at = _insertion_line(lines, key, order)
            lines[at:at] = [dump_key(key, value).replace("\n", eol)]
            continue
        start, end = span
        restamped = _restamp(lines[start], value) if end == start + 1 else None
        if restamped is not None:
            lines[start] = restamped
            continue
        was_block = end > start + 1 and lines[start].rstrip().endswith(":")
        lines[start:end] = [dump_key(key, value, block=was_block).replace("\n", eol)]
    return "".join(lines)


def carry_keys(raw: str, source: str, keys: Sequence[str], order: Sequence[str]) -> str | None:
    """`raw` with the lines of `keys` copied as written from the block `source`, each where
    `order` puts it; None when a key's lines cannot be told apart there."""
    eol = "\r\n" if "\r\n" in raw or (not raw and "\r\n" in source) else "\n"
    lines = raw.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += eol
    old_lines = source.splitlines(keepends=True)
    for key in keys:
        span = key_span(old_lines, key)
        if span is None or key_span(lines, key) is not None:
            return None
        at = _insertion_line(lines, key, order)
        lines[at:at] = [line.rstrip("\r\n") + eol for line in old_lines[span[0] : span[1]]]
    return "".join(lines)


def _insertion_line(lines: list[str], key: str, order: Sequence[str]) -> int:
    """Where a new key's lines go: after the nearest key before it in `order` that the block
    has, else before the nearest one after it, else at the end (git merges a block whose
    keys keep their places)."""
    if key in order:
        position = order.index(key)
        for previous in reversed(order[:position]):
            span = key_span(lines, previous)
            if span is not None:
                return span[1]
        for following in order[position + 1 :]:
            span = key_span(lines, following)
            if span is not None:
                return span[0]
    return len(lines)


_SCALAR_LINE = re.compile(
    r"(?P<head>[^:#]+:[ \t]+)(?P<value>'[^']*'|\"[^\"\\]*\"|[^'\"\s#&*!|>{\[][^#\r\n]*?)"
    r"(?P<tail>(?:[ \t]+#[^\r\n]*)?[ \t]*(?:\r?\n)?)"
)


def _restamp(line: str, value: Any) -> str | None:
    """A `key: <timestamp>` line with the new time, its quotes and comment kept; None if not one."""
    if not isinstance(value, dt.datetime):
        return None
    match = _SCALAR_LINE.fullmatch(line)
    text = iso(value)
    if match is None or text is None:
        return None
    quote = match["value"][0] if match["value"][0] in "'\"" else ""
    return f"{match['head']}{quote}{text}{quote}{match['tail']}"


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
    order: Sequence[str] = (),
) -> Document:
    """The document after a write: body replaced, other keys kept, timestamps kept current.

    A new or plain memory stays plain unless tags or extra keys are given (agents read
    these files raw). `extra` keys from written content merge over the existing ones;
    keys the block lacks go where `order` (the memory's key order before) puts them.
    Only keys whose value changes are rewritten; every other byte of the block, the BOM
    and CRLF line breaks are kept (the new body gets the file's line breaks).
    """
    stamp = now or utc_now()
    if doc is None:
        doc = Document(body="")
    # The body is written as given (as Serena writes it), except under a CRLF block that
    # stays: one file, one kind of line break.
    if doc.has_frontmatter and doc.newline == "\r\n":
        body = body.replace("\r\n", "\n").replace("\n", "\r\n")
    if doc.problem is not None and doc.raw_frontmatter is not None:
        # Never rewrite frontmatter we cannot read: the user would lose it.
        return dataclasses.replace(doc, body=body)
    changes: dict[str, Any] = dict(extra or {})
    if tags is not None:
        changes["tags"] = list(tags)
    if not doc.has_frontmatter:
        if not changes:
            return dataclasses.replace(doc, body=body)
        changes.setdefault("created_at", stamp)
        changes["updated_at"] = stamp
        ordered = {key: changes[key] for key in MANAGED_KEYS if key in changes}
        ordered.update(changes)
        raw = "".join(dump_key(key, value) for key, value in ordered.items())
        # A new block follows the body's line breaks: one file, one kind.
        newline = "\r\n" if "\r\n" in body else "\n"
        fence = f"{_FENCE}{newline}"
        return dataclasses.replace(
            doc,
            body=body,
            metadata=ordered,
            raw_frontmatter=raw.replace("\n", newline),
            opening=fence,
            closing=fence,
            newline=newline,
        )
    # A key given with the value it already has is not rewritten (its bytes are kept).
    changes = {k: v for k, v in changes.items() if k not in doc.metadata or doc.metadata[k] != v}
    # created_at is left as it is, even absent (SPEC 2.5): only a new block gets one.
    if doc.metadata.get("updated_at") != stamp:
        changes["updated_at"] = stamp
    raw = set_keys(doc.raw_frontmatter or "", changes, newline=doc.newline, order=order)
    return dataclasses.replace(
        doc, body=body, metadata={**doc.metadata, **changes}, raw_frontmatter=raw
    )


def with_keys(doc: Document, changes: Mapping[str, Any], remove: Sequence[str] = ()) -> Document:
    """The document with top-level keys set or removed; plain again when nothing is left."""
    if doc.problem is not None:
        return doc
    metadata = {k: v for k, v in doc.metadata.items() if k not in remove}
    metadata.update(changes)
    if not metadata and not (doc.raw_frontmatter or "").strip(" \r\n-"):
        return dataclasses.replace(doc, metadata={}, raw_frontmatter=None, body_line=0)
    raw = set_keys(doc.raw_frontmatter or "", changes, remove, newline=doc.newline)
    if doc.raw_frontmatter:
        return dataclasses.replace(doc, metadata=metadata, raw_frontmatter=raw)
    fence = f"{_FENCE}{doc.newline}"  # a new block
    return dataclasses.replace(
        doc, metadata=metadata, raw_frontmatter=raw, opening=fence, closing=fence
    )
