"""Memory names: normalisation, validation and the ALL-CAPS routing prefix (SPEC 2.1, 2.4)."""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memory_ls.core.rules.errors import InvalidName

# File systems cap a path component at 255 bytes; "<segment>.md" must fit.
MAX_SEGMENT_BYTES = 252
MAX_SEGMENTS = 16
# Paths are capped (4096 bytes on Linux) including the folder and the temp file's suffix.
MAX_NAME_BYTES = 1024
# A file someone else wrote (Serena has no caps of its own) is looked up up to the OS's limit.
MAX_LOOKUP_BYTES = 4096
# Characters Windows refuses in file names (memories are shared via git); `/` separates
# topics and is never part of a segment.
FORBIDDEN_CHARS = frozenset('\\:*?"<>|')
# Device names Windows refuses as file names whatever the extension; memories are shared via git.
WINDOWS_RESERVED = frozenset(
    ["CON", "PRN", "AUX", "NUL"]
    + [f"COM{i}" for i in range(1, 10)]
    + [f"LPT{i}" for i in range(1, 10)]
)
GLOBAL_PREFIX = "global/"
GLOBAL_TOPIC = "global"
MEM_PREFIX = "mem:"
_CAPS_SEGMENT = re.compile(r"[A-Z]+")
# Nearly every name is plain ASCII: one regular expression decides those (the listing of
# 100,000 files checks every name), and anything else takes the character-by-character
# path, which also says what is wrong.
_PLAIN_SEGMENT = r"[A-Za-z0-9_. -]{1,252}"
_PLAIN_NAME = re.compile(rf"{_PLAIN_SEGMENT}(?:/{_PLAIN_SEGMENT}){{0,{MAX_SEGMENTS - 1}}}")
# Spaces around a device name do not make it another name on Windows.
_RESERVED_SEGMENT = re.compile(
    r"(?:^|/) *(?:CON|PRN|AUX|NUL|COM[1-9]|LPT[1-9]) *(?:[./]|$)", re.IGNORECASE
)
# The same for a name of one segment, tried at its start only (much cheaper than search).
_RESERVED_NAME = re.compile(r" *(?:CON|PRN|AUX|NUL|COM[1-9]|LPT[1-9]) *(?:\.|$)", re.IGNORECASE)
_RELATIVE_STEP = re.compile(r"(?:^|/)\.{1,2}(?:/|$)")


@dataclass(frozen=True)
class ParsedName:
    """A validated name and whether it asked for the global scope with `global/`."""

    name: str
    is_global: bool

    @property
    def qualified(self) -> str:
        """The name as Serena writes it (`global/NAME` for a global memory)."""
        return GLOBAL_PREFIX + self.name if self.is_global else self.name


def segment_problem(segment: str) -> str | None:
    """Say what is wrong with one name segment, or None when it is valid.

    Serena accepts any file name; refused are only names that are unsafe (relative steps,
    control and invisible characters) or cannot exist on Windows (SPEC 2.1).
    """
    if segment in ("", ".", ".."):
        return f"segment {segment!r} is empty or a relative path step"
    # surrogatepass: a lone surrogate (valid in JSON) must be refused below, not crash here.
    if len(segment.encode("utf-8", "surrogatepass")) > MAX_SEGMENT_BYTES:
        return f"segment is over {MAX_SEGMENT_BYTES} bytes in UTF-8"
    for ch in segment:
        if ch in FORBIDDEN_CHARS:
            return f"character {ch!r} is not allowed (Windows refuses it in file names)"
        category = unicodedata.category(ch)
        # Cc control, Cf format (bidi overrides, zero-width), Cs lone surrogates, Co/Cn.
        if category[0] == "C" or category in ("Zl", "Zp"):
            return f"character {ch!r} is not allowed (control or invisible character)"
    if segment.split(".")[0].strip().upper() in WINDOWS_RESERVED:
        return f"segment {segment!r} is a reserved device name on Windows"
    return None


def name_problem(name: str) -> str | None:
    """Say what is wrong with a bare name (after normalisation), or None when valid."""
    if (
        len(name) <= MAX_NAME_BYTES
        and _PLAIN_NAME.fullmatch(name)
        and not _RELATIVE_STEP.search(name)
        and not (_RESERVED_SEGMENT.search(name) if "/" in name else _RESERVED_NAME.match(name))
    ):
        return None
    return explain_name(name)


def explain_name(name: str) -> str | None:
    """`name_problem` character by character, without the fast path for plain names."""
    if not name:
        return "the name is empty"
    size = len(name.encode("utf-8", "surrogatepass"))
    if size > MAX_NAME_BYTES:
        return f"the name is {size} bytes long in UTF-8; at most {MAX_NAME_BYTES} allowed"
    segments = name.split("/")
    if len(segments) > MAX_SEGMENTS:
        return f"the name has more than {MAX_SEGMENTS} topic levels"
    for segment in segments:
        problem = segment_problem(segment)
        if problem:
            return problem
    return None


def is_valid_name(name: str) -> bool:
    """Whether a bare name follows the rules."""
    return name_problem(name) is None


def lookup_problem(name: str) -> str | None:
    """Say why a bare name cannot name a file inside a memory folder, or None when it can.

    Looser than `name_problem`: a file Serena wrote (`what?`, `CON`, a tab) is found under
    its own name; only what could reach outside the folder or exist nowhere is refused.
    """
    if name_problem(name) is None:
        return None
    if not name:
        return "the name is empty"
    if len(name.encode("utf-8", "surrogatepass")) > MAX_LOOKUP_BYTES:
        return f"the name is over {MAX_LOOKUP_BYTES} bytes in UTF-8"
    if "\0" in name:
        return "character '\\x00' is not allowed (no file name holds it)"
    for segment in name.split("/"):
        if segment in ("", ".", ".."):
            return f"segment {segment!r} is empty or a relative path step"
        # Where they separate or qualify paths (`\`, `C:`), they could lead elsewhere.
        if os.name == "nt" and any(ch in FORBIDDEN_CHARS for ch in segment):
            return 'characters \\ : * ? " < > | are not allowed on Windows'
    return None


def serena_spelling(raw: str) -> str:
    """A name as Serena takes it: `mem:` and one `.md` removed, nothing trimmed."""
    name = raw.removeprefix(MEM_PREFIX)
    return name[:-3] if name.endswith(".md") else name


def lookup_names(raw: object) -> list[ParsedName]:
    """The names a lookup of `raw` may mean, preferred first; InvalidName if none can.

    The normalised name (SPEC 2.1), then, where surrounding whitespace was trimmed, the
    name exactly as given (Serena keeps the whitespace, so a file it wrote may have it).
    """
    if not isinstance(raw, str):
        raise InvalidName(f"A memory name must be a string, not {type(raw).__name__}.")
    spellings = [normalize_input(raw)]
    if raw != raw.strip():
        exact = serena_spelling(raw)
        is_global = exact.startswith(GLOBAL_PREFIX)
        spellings.append((exact[len(GLOBAL_PREFIX) :] if is_global else exact, is_global))
    names: list[ParsedName] = []
    first_problem = None
    for name, is_global in spellings:
        problem = lookup_problem(name)
        if not is_global and name == GLOBAL_TOPIC:
            problem = (
                f"a bare {GLOBAL_TOPIC!r} is the global scope itself; name a global memory "
                f"{GLOBAL_PREFIX}<name>"
            )
        if problem is None:
            names.append(ParsedName(name, is_global))
        elif first_problem is None:
            first_problem = problem
    if not names:
        raise InvalidName(f"Invalid memory name {_shown(raw)}: {first_problem}.")
    return names


def did_you_mean(word: str, candidates: Sequence[str], limit: int = 3) -> list[str]:
    """The closest candidates to a mistyped word: small edit distance first, then similarity."""
    if not word or not candidates:
        return []
    # Imported on first use: most processes never mistype a name, and the import is slow.
    from rapidfuzz import fuzz, process
    from rapidfuzz.distance import OSA

    # Allow about one typo per four characters, at least one; swapping two neighbouring
    # letters (SPCE for SPEC) is one typo, not two.
    budget = max(1, len(word) // 4)
    close = [
        (OSA.distance(word, c, score_cutoff=budget), c)
        for c in candidates
        if c != word and abs(len(c) - len(word)) <= budget
    ]
    ranked = sorted((d, c) for d, c in close if d <= budget)
    picks = [c for _d, c in ranked[:limit]]
    if len(picks) < limit:
        for candidate, score, _i in process.extract(
            word, list(candidates), scorer=fuzz.ratio, limit=limit * 2
        ):
            if score >= 80 and candidate != word and candidate not in picks:
                picks.append(candidate)
            if len(picks) == limit:
                break
    return picks


_WORD = re.compile(r"[^\W_]+")


def words_of(text: str) -> list[str]:
    """The words of a name or tag, lower-cased (`SPEC_payments_api` -> spec, payments, api)."""
    return [word.casefold() for word in _WORD.findall(text)]


def closest_query(query: str, vocabulary: Iterable[str]) -> str | None:
    """The query with each word the vocabulary lacks replaced by its closest word
    (`paymnt` -> `payments`), or None when no word has a close one."""
    known = set(vocabulary)
    candidates = sorted(known)
    changed = False
    corrected: list[str] = []
    for word in query.split():
        folded = word.casefold()
        # Only plain words: a quoted phrase or an operator is meant as typed.
        plain = _WORD.fullmatch(folded) is not None
        picks = [] if folded in known or not plain else did_you_mean(folded, candidates, limit=1)
        if picks:
            changed = True
            corrected.append(picks[0])
        else:
            corrected.append(word)
    return " ".join(corrected) if changed else None


def normalize_input(raw: str) -> tuple[str, bool]:
    """Apply SPEC 2.1 input normalisation without validating: (name, asked for global)."""
    text = raw.strip()
    if text.startswith(MEM_PREFIX):
        text = text[len(MEM_PREFIX) :]
    if text.endswith(".md"):
        text = text[:-3]
    is_global = text.startswith(GLOBAL_PREFIX)
    if is_global:
        text = text[len(GLOBAL_PREFIX) :]
    return text, is_global


def parse_name(raw: object) -> ParsedName:
    """Normalise and validate a name from a user or agent; InvalidName if it breaks the rules."""
    if not isinstance(raw, str):
        raise InvalidName(f"A memory name must be a string, not {type(raw).__name__}.")
    name, is_global = normalize_input(raw)
    if not is_global and name == GLOBAL_TOPIC:
        raise InvalidName(
            f"Invalid memory name {_shown(raw)}: a bare {GLOBAL_TOPIC!r} is the global scope "
            f"itself; name a global memory {GLOBAL_PREFIX}<name>."
        )
    problem = name_problem(name)
    if problem:
        raise InvalidName(f"Invalid memory name {_shown(raw)}: {problem}.")
    return ParsedName(name, is_global)


def qualify(name: str, is_global: bool) -> str:
    """A memory's name as Serena writes it: `global/NAME` for a global memory."""
    return GLOBAL_PREFIX + name if is_global else name


def split_qualified(name: str) -> tuple[str, bool]:
    """(name within its scope, is global) of a qualified name."""
    if name.startswith(GLOBAL_PREFIX):
        return name[len(GLOBAL_PREFIX) :], True
    return name, False


def _shown(raw: str) -> str:
    """Quote a possibly hostile name for an error message, cut to a readable length."""
    text = repr(raw)
    return text if len(text) <= 80 else text[:77] + "...'"


def has_topic(name: str) -> bool:
    """Whether the name has a topic path (`auth/login_flow`)."""
    return "/" in name


def caps_prefixes(name: str) -> list[str]:
    """Candidate routing prefixes of a name, longest first (SPEC 2.4 step 5).

    `FEATURE_BUILDER_x` gives ["FEATURE_BUILDER", "FEATURE"]; topic names give none.
    """
    if has_topic(name):
        return []
    segments = name.split("_")
    run = 0
    for segment in segments:
        if not _CAPS_SEGMENT.fullmatch(segment):
            break
        run += 1
    return ["_".join(segments[:i]) for i in range(run, 0, -1)]


def prefix_run(name: str) -> str | None:
    """The ALL-CAPS prefix run of a name when something follows it (`BUGFIX` in `BUGFIX_x`).

    A name that is all capitals (`README`, `TODO`) has no prefix: nothing follows it.
    """
    prefixes = caps_prefixes(name)
    if not prefixes:
        return None
    longest = prefixes[0]
    return longest if len(longest) < len(name) else (prefixes[1] if len(prefixes) > 1 else None)


def valid_name_for(name: str) -> str:
    """A valid name close to an invalid one: refused characters become `_`, invisible ones go,
    device names and over-long segments are mended (for the invalid-name quick fix)."""
    segments = []
    for segment in name.split("/"):
        kept = []
        for ch in segment:
            category = unicodedata.category(ch)
            if category == "Cf":  # zero-width and bidi characters: not seen, not wanted
                continue
            kept.append("_" if ch in FORBIDDEN_CHARS or category[0] == "C" else ch)
        fixed = "".join(kept)
        while len(fixed.encode("utf-8", "surrogatepass")) > MAX_SEGMENT_BYTES:
            fixed = fixed[:-1]
        if fixed in ("", ".", ".."):
            fixed = "_" if not fixed else fixed.replace(".", "_")
        if fixed.split(".")[0].strip().upper() in WINDOWS_RESERVED:
            fixed = "_" + fixed
        segments.append(fixed)
    return "/".join(segments)
