"""Crash safety, bad files and secrets: the store never loses or corrupts a memory."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_ls.config import Settings
from memory_ls.core.operations.check import check_store
from memory_ls.core.rules.errors import InvalidEncoding
from memory_ls.core.rules.secrets import _PATTERNS, _PLACEHOLDER, SecretHit, find_secrets
from memory_ls.core.services.diagnostics import SecretMemo
from memory_ls.core.storage.folders import resolve_store_config
from memory_ls.core.storage.fsio import is_temp_file
from memory_ls.core.store import Store


def make_store(root: Path, **overrides: object) -> Store:
    """A store in `root` with the global folder inside it too."""
    settings = Settings(global_folder=str(root / "global"), **overrides)  # type: ignore[arg-type]
    return Store(resolve_store_config(settings, str(root), environ={}))


SAVER = textwrap.dedent(
    """
    import sys
    from memory_ls.config import Settings
    from memory_ls.core.storage.folders import resolve_store_config
    from memory_ls.core.store import Store

    root = sys.argv[1]
    store = Store(resolve_store_config(Settings(global_folder=root + "/global"), root, environ={}))
    print("ready", flush=True)
    i = 0
    while True:
        letter = "AB"[i % 2]
        store.save("big_note", letter * 400_000)
        i += 1
    """
)


def test_sigkill_during_large_saves_leaves_old_or_new_content(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.save("big_note", "A" * 400_000)
    path = tmp_path / ".serena" / "memories" / "big_note.md"
    valid = {"A" * 400_000, "B" * 400_000}
    rng = random.Random(1234)
    saw_leftover = False
    for _round in range(25):
        proc = subprocess.Popen(
            [sys.executable, "-c", SAVER, str(tmp_path)], stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.05))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert path.read_text() in valid
        leftovers = [p for p in path.parent.iterdir() if is_temp_file(p.name)]
        saw_leftover = saw_leftover or bool(leftovers)
        listed = [m["name"] for m in store.list_memories()["memories"]]
        assert listed == ["big_note"], listed
    # Leftovers, if any were left by a kill, are swept away; the memory stays intact.
    store.clean_leftovers()
    assert [p.name for p in path.parent.iterdir()] == ["big_note.md"]
    assert path.read_text() in valid
    # Not asserted: a kill may or may not land inside the short temp-file window.
    del saw_leftover


def test_interrupted_write_leftover_is_not_a_memory_and_is_cleaned(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    store.save("note", "kept")
    folder = tmp_path / ".serena" / "memories"
    leftover = folder / ".note.md.abc123.memory-ls-tmp"
    leftover.write_text("half a write")
    assert [m["name"] for m in store.list_memories()["memories"]] == ["note"]
    assert store.clean_leftovers() == 1
    assert not leftover.exists()
    assert (folder / "note.md").read_text() == "kept"


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"caf\xe9 au lait\n", "invalid UTF-8"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary data"),
    ],
)
def test_undecodable_files_get_invalid_encoding(tmp_path: Path, data: bytes, problem: str) -> None:
    store = make_store(tmp_path)
    folder = tmp_path / ".serena" / "memories"
    folder.mkdir(parents=True)
    (folder / "odd.md").write_bytes(data)
    found = [(d.code, d.message) for d in check_store(store)]
    assert [code for code, _ in found] == ["invalid-encoding"]
    assert problem in found[0][1]
    # Still listed; text is read after a warning, binary data is refused, never garbled.
    if problem == "binary data":
        with pytest.raises(InvalidEncoding, match="a PNG image"):
            store.read("odd")
    else:
        read = store.read("odd")
        assert read["content"] == "café au lait\n"
        assert "not UTF-8" in read["warning"]


def test_huge_file_is_too_large_without_being_read(tmp_path: Path) -> None:
    store = make_store(tmp_path, max_memory_bytes=1000)
    folder = tmp_path / ".serena" / "memories"
    folder.mkdir(parents=True)
    with open(folder / "huge.md", "wb") as handle:
        handle.truncate(50 * 1024 * 1024)  # 50 MB of NULs: binary *and* huge
    started = time.perf_counter()
    codes = [d.code for d in check_store(store)]
    listed = store.list_memories()["memories"]
    elapsed = time.perf_counter() - started
    assert codes == ["too-large"]
    assert [m["name"] for m in listed] == ["huge"]
    assert elapsed < 5, "a huge file must not be read for a listing or a check"


@pytest.mark.parametrize(
    "frontmatter",
    [
        # The billion laughs: nine levels of aliases that would expand to 10^9 strings.
        "a: &a [x,x,x,x,x,x,x,x,x,x]\\n"
        + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 10)}]\\n"
            for i in range(8)
        ),
        "deep: " + "[" * 5000 + "]" * 5000,
        "x: " + "y" * 100_000,
        "tags: [a, b\\nnot closed",
    ],
    ids=["alias-bomb", "deep-nesting", "huge-frontmatter", "broken"],
)
def test_hostile_frontmatter_is_reported_without_hanging(tmp_path: Path, frontmatter: str) -> None:
    store = make_store(tmp_path)
    folder = tmp_path / ".serena" / "memories"
    folder.mkdir(parents=True)
    text = "---\n" + frontmatter.replace("\\n", "\n") + "\n---\nbody [[nothing_here]]\n"
    (folder / "bomb.md").write_text(text)
    started = time.perf_counter()
    diagnostics = check_store(store)
    read = store.read("bomb")
    listed = store.list_memories()
    assert time.perf_counter() - started < 5
    assert read["content"].startswith("body")
    assert [m["name"] for m in listed["memories"]] == ["bomb"]
    codes = {d.code for d in diagnostics}
    assert "broken-link" in codes
    # Aliases and deep nesting are valid YAML: they must only not hang or crash.
    if frontmatter.startswith("tags") or len(frontmatter) > 65536:
        assert "invalid-frontmatter" in codes
    # An edit keeps every line of the author's frontmatter as written (aliases unexpanded).
    store.edit("bomb", needle="body", replacement="new body")
    after = (folder / "bomb.md").read_text()
    assert after.startswith(text[: text.index("\n---\n") + 1])
    assert after.endswith("---\nnew body [[nothing_here]]\n")
    assert len(after) < len(text) + 100


SECRETS = {
    "AWS access key": "aws key AKIAIOSFODNN7EXAMPLE in the env",
    "AWS secret key": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "GitHub token": "token ghp_1234567890abcdefghijklmnopqrstuvwxyzAB",
    "GitLab token": "glpat-abcdefghij1234567890",
    "Slack token": "xoxb-123456789012-abcdefghijkl",
    "Stripe key": "sk_live_abcdefghijklmnopqrstuvwx",
    "private key": "-----BEGIN RSA PRIVATE KEY-----",
    "password or secret assignment": 'DB_PASSWORD = "hunter2-but-longer"',
    "password in a URL": "DATABASE_URL=postgres://shop:Tr0ub4dor3x@db.internal:5432/shop",
}
NOT_SECRETS = [
    "password = <your password here>",
    "api_key: ${API_KEY}",
    "Set the password in the vault; never write it here.",
    "secret: changeme",
    "token: os.environ['TOKEN']",
    "AKIA is the prefix of AWS access key ids.",
    "postgres://user:<password>@host/db",
    "postgres://user:${DB_PASSWORD}@host/db",
    "redis://:****@cache:6379",
    "mysql://root:xxx@localhost/db",
    "amqp://guest:guest@rabbit/",
    "postgres://{user}:{password}@{host}/db",
    "ssh://git@github.com:22/org/repo.git",
    "docker://registry.local:5000@sha256:abc",
]


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_secret_kinds_are_found(kind: str) -> None:
    hits = list(find_secrets("intro\n" + SECRETS[kind]))
    assert [(h.kind, h.line) for h in hits] == [(kind, 1)]


@pytest.mark.parametrize("line", NOT_SECRETS)
def test_placeholders_and_prose_are_not_secrets(line: str) -> None:
    assert list(find_secrets(line)) == []


def _secrets_line_by_line(text: str) -> list[SecretHit]:
    """Every pattern searched on every line: what the finders in find_secrets must equal."""
    hits = []
    for number, line in enumerate(text.split("\n")):
        if len(line) < 8:
            continue
        for kind, pattern, _finders, _anchored in _PATTERNS:
            match = pattern.search(line)
            value = match.groupdict().get("value") if match else None
            if match is None or (value is not None and _PLACEHOLDER.match(value)):
                continue
            hits.append(SecretHit(kind, number, match.start(), match.end()))
            break
    return hits


_SECRET_PIECES = [
    *SECRETS.values(),
    *NOT_SECRETS,
    *[
        "x",
        "_",
        "-",
        " ",
        "=",
        ": ",
        "'",
        "\n",
        "AKIAKIA",
        "sk-ant-",
        "sk-proj-",
        "eyJ",
        ".",
        "xoxa-",
        "rk_live_",
        "gho_",
        "github_pat_",
        "://",
        "@",
        ":",
        "@db",
    ],
    *["ApI_KeY", "pİvate", "ı", "ſecret", "Key", "api-Key", "AUTH_TOKEN", "pwd", "passwd"],
    "abcdefghij0123456789ABCDEFGHIJ0123456789",
    "redis",
    "s3cr3tP4ss",
]


@settings(max_examples=1500, deadline=None)
@given(pieces=st.lists(st.sampled_from(_SECRET_PIECES), max_size=12))
def test_secret_finders_miss_nothing_a_full_search_finds(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert list(find_secrets(text)) == _secrets_line_by_line(text)


@settings(max_examples=300, deadline=None)
@given(
    versions=st.lists(
        st.lists(st.sampled_from([*_SECRET_PIECES[:12], "\n", "\n", "plain line\n"]), max_size=10),
        min_size=1,
        max_size=6,
    )
)
def test_an_open_documents_secret_scan_is_reused_line_by_line(versions: list[list[str]]) -> None:
    memo = SecretMemo()
    for pieces in versions:
        text = "".join(pieces)
        assert memo.find(text) == list(find_secrets(text))


def test_possible_secret_in_project_memories_only_and_configurable(tmp_path: Path) -> None:
    store = make_store(tmp_path, secrets="warn")
    store.save("deploy", "# Deploy\n\n" + SECRETS["GitHub token"] + "\n")
    store.save("global/mine", SECRETS["GitHub token"])
    found = [(d.code, Path(d.path).name, d.line, d.severity) for d in check_store(store)]
    assert found == [("possible-secret", "deploy.md", 2, "warning")]
    quiet = make_store(tmp_path, diagnostics={"possible-secret": "off"})
    assert check_store(quiet) == []


def test_check_cli_reports_secrets(tmp_path: Path) -> None:
    make_store(tmp_path, secrets="warn").save("deploy", SECRETS["private key"] + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", "check", "--json", "--no-global"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(tmp_path / "home")},
    )
    assert result.returncode == 1
    rows = json.loads(result.stdout)["diagnostics"]
    assert [(r["code"], r["line"], r["column"]) for r in rows] == [("possible-secret", 1, 1)]
