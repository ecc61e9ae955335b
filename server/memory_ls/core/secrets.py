"""Spotting credentials in memories: they are committed to git and agents copy things in."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

# (kind, pattern): specific token formats first, the generic assignment last.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("AWS access key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}\b")),
    (
        "AWS secret key",
        re.compile(r"(?i)aws_?secret_?access_?key\s*[:=]\s*[\"']?[A-Za-z0-9/+=]{40}\b"),
    ),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}")),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("Stripe key", re.compile(r"\b[rs]k_live_[A-Za-z0-9]{20,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    ("Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}")),
    ("OpenAI API key", re.compile(r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,}")),
    ("npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    (
        "JSON web token",
        re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
    ),
    (
        "password or secret assignment",
        re.compile(
            r"(?i)(?<![a-z0-9])(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token"
            r"|auth[_-]?token|client[_-]?secret|private[_-]?key)(?![a-z0-9])[\"']?\s*[:=]\s*[\"']?(?P<value>[^\s\"'`,;]{6,})"
        ),
    ),
)
# Values that document a setting rather than leak one.
_PLACEHOLDER = re.compile(
    r"(?i)^(?:<.*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_]+%|\{\{.*\}\}|[x*.\-_]+|"
    r"(?:your|my|some|the|example|dummy|fake|placeholder|changeme|redacted|none|null|"
    r"true|false|required|optional|env|os\.environ|process\.env|getenv)\b.*)$"
)


@dataclass(frozen=True)
class SecretHit:
    """Where something that looks like a credential is (0-based line, code-point columns)."""

    kind: str
    line: int
    start: int
    end: int


def find_secrets(text: str, first_line: int = 0) -> Iterator[SecretHit]:
    """Lines of `text` that look like they hold a credential, one hit per line at most."""
    for number, line in enumerate(text.split("\n"), start=first_line):
        if len(line) < 8:
            continue
        for kind, pattern in _PATTERNS:
            match = pattern.search(line)
            if match is None:
                continue
            value = match.groupdict().get("value")
            if value is not None and _PLACEHOLDER.match(value):
                continue
            yield SecretHit(kind, number, match.start(), match.end())
            break
