"""Search by meaning (issue 35), without a model: reciprocal rank fusion, the vectors kept
beside the full-text index (by file row, content hash and model), the search that fuses
them, the project file's `[search.meaning]`, and nothing loaded while it is off."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import attrs
import pytest

from memory_ls.config import ConfigError, MeaningSettings, explain_layers, merge_layers
from memory_ls.core import Store, resolve_store_config
from memory_ls.core.services.meaning import vectors
from memory_ls.core.services.meaning.engine import Meaning
from memory_ls.core.services.meaning.fusion import RRF_K, reciprocal_rank_fusion
from memory_ls.core.services.meaning.providers import EmbeddingError, EndpointEmbedder
from memory_ls.core.services.search import SearchIndex
from memory_ls.core.storage.folders import StoreConfig
from memory_ls.project_file import read_project_file, render_project_file

DIMENSIONS = 64


class WordsEmbedder:
    """A stand-in model: each word (and each word it names as a synonym) adds to one
    dimension, so texts sharing words or synonyms are near; it counts what it embeds."""

    def __init__(self, synonyms: dict[str, str] | None = None) -> None:
        self.synonyms = synonyms or {}
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str], *, query: bool = False) -> list[list[float]]:
        if not query:
            self.texts += texts
        vectors = []
        for text in texts:
            vector = [0.0] * DIMENSIONS
            for word in re.findall(r"[a-z]+", text.lower()):
                word = self.synonyms.get(word, word)
                digest = hashlib.blake2b(word.encode(), digest_size=2).digest()
                vector[int.from_bytes(digest, "big") % DIMENSIONS] += 1.0
            vectors.append(vector)
        return vectors


# ----- fusion --------------------------------------------------------------------------


def test_fusion_sums_reciprocal_ranks_with_k_60() -> None:
    fused = dict(reciprocal_rank_fusion([["a", "b", "c"], ["c", "a"]]))
    assert RRF_K == 60
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert fused["b"] == pytest.approx(1 / 62)


def test_fusion_puts_what_both_rank_above_what_one_ranks_first() -> None:
    order = [key for key, _s in reciprocal_rank_fusion([["x", "both"], ["y", "both"]])]
    assert order[0] == "both"
    # Ties keep the order in which keys first appear.
    assert order[1:] == ["x", "y"]


def test_fusion_of_one_ranking_keeps_it_and_of_none_is_empty() -> None:
    assert [k for k, _s in reciprocal_rank_fusion([[3, 1, 2]])] == [3, 1, 2]
    assert reciprocal_rank_fusion([]) == []
    assert reciprocal_rank_fusion([[], []]) == []


# ----- the project file ----------------------------------------------------------------


def _project(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "memory-ls.toml"
    path.write_text(text, encoding="utf-8")
    return read_project_file(str(path))


def test_search_by_meaning_is_off_unless_the_project_file_sets_it(tmp_path: Path) -> None:
    assert merge_layers().meaning is None
    assert merge_layers(_project(tmp_path, 'secrets = "warn"\n').layer).meaning is None
    rows = {row.key: row.value for row in explain_layers()}
    assert rows["search.meaning"] == "off"


def test_an_endpoint_and_a_local_model_are_read_from_the_project_file(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        '[search.meaning]\nprovider = "openai"\nurl = "http://127.0.0.1:11434/v1"\n'
        'model = "nomic-embed-text"\napi-key-env = "EMBEDDINGS_KEY"\n',
    )
    meaning = merge_layers(project.layer).meaning
    assert meaning == MeaningSettings(
        "openai", "nomic-embed-text", "http://127.0.0.1:11434/v1", "EMBEDDINGS_KEY"
    )
    rows = {row.key: (row.value, row.source) for row in explain_layers(project.layer)}
    assert rows["search.meaning.url"] == ("http://127.0.0.1:11434/v1", project.source)
    # Written back as it was read (`init`, `config --write`).
    again = _project(tmp_path, render_project_file(project.layer.values, str(tmp_path)))
    assert merge_layers(again.layer).meaning == meaning
    local = _project(tmp_path, '[search.meaning]\nprovider = "local"\nmodel = "all-MiniLM-L6-v2"\n')
    assert merge_layers(local.layer).meaning == MeaningSettings("local", "all-MiniLM-L6-v2")


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ('provider = "openai"\nmodel = "m"\n', "search.meaning.url"),
        ('provider = "openai"\nmodel = "m"\nurl = "127.0.0.1:8080"\n', "search.meaning.url"),
        ('provider = "cloud"\nmodel = "m"\n', "search.meaning.provider"),
        ('provider = "local"\n', "search.meaning.model"),
        ('provider = "local"\nmodel = "m"\nurl = "http://x/v1"\n', 'only with provider = "openai"'),
        ('provider = "local"\nmodel = "m"\napi-key = "sk-1"\n', "search.meaning.api-key: unknown"),
    ],
)
def test_an_invalid_meaning_table_is_an_error_naming_the_key(
    tmp_path: Path, table: str, said: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        _project(tmp_path, "[search.meaning]\n" + table)
    assert said in str(raised.value)


def test_an_unknown_search_table_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"search\.meanings: unknown key"):
        _project(tmp_path, '[search.meanings]\nprovider = "local"\nmodel = "m"\n')


# ----- the vectors beside the full-text index --------------------------------------------


def _store(root: Path, provider: str = "local", model: str = "words") -> tuple[Store, StoreConfig]:
    settings = attrs.evolve(merge_layers(), meaning=MeaningSettings(provider, model))  # type: ignore[arg-type]
    config = resolve_store_config(settings, str(root))
    return Store(config, SearchIndex(config, live=False)), config


@pytest.fixture
def memories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store of three memories, the cache in tmp_path."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    folder = tmp_path / "repo" / ".serena" / "memories"
    folder.mkdir(parents=True)
    (folder / "payments_team.md").write_text("# Payments team\n\nLed by Alice Martin.\n")
    (folder / "deploying.md").write_text("# Deploying\n\nRun make deploy after CI passes.\n")
    (folder / "fruit.md").write_text("# Fruit\n\nBananas are yellow.\n")
    return tmp_path / "repo"


@pytest.fixture
def engines() -> Iterator[list[Meaning]]:
    made: list[Meaning] = []
    yield made
    for engine in made:
        engine.close()


def _engine(store: Store, embedder: WordsEmbedder, made: list[Meaning]) -> Meaning:
    assert store.search_index is not None and store.config.meaning is not None
    store.search_index.sync()
    engine = Meaning(store.config.meaning, store.config, store.search_index.database.path, embedder)
    made.append(engine)
    return engine


def _rows(engine: Meaning) -> list[tuple[int, str, bytes]]:
    rows = engine.database.connect().execute("SELECT id, model, hash FROM embedded").fetchall()
    return sorted(rows)


def test_vectors_are_kept_by_file_row_content_hash_and_model(
    memories: Path, engines: list[Meaning]
) -> None:
    store, _config = _store(memories, provider="openai")
    embedder = WordsEmbedder()
    engine = _engine(store, embedder, engines)
    assert engine.state().embedded == 0
    assert engine.embed_pending() == 3
    # A memory's summary (its name and title) and its one passage (its name and body).
    assert len(embedder.texts) == 6
    assert "fruit\nFruit" in embedder.texts
    assert engine.state().embedded == engine.state().indexed == 3
    assert {model for _i, model, _h in _rows(engine)} == {"openai:words#2"}
    vector = engine.database.connect().execute("SELECT data FROM vectors LIMIT 1").fetchone()[0]
    assert len(vector) == 4 + 2 * 4 * DIMENSIONS  # a count, then two vectors of float32
    # Nothing more to embed; an unchanged file indexed again is not embedded again.
    assert engine.embed_pending() == 0
    fruit = memories / ".serena" / "memories" / "fruit.md"
    os.utime(fruit, ns=(1, 1))
    assert store.search_index is not None
    store.search_index.sync()
    assert engine.state().embedded == 2  # its row was dropped, its vector kept
    assert engine.embed_pending() == 1
    assert len(embedder.texts) == 6
    # A changed file is embedded anew; a deleted one loses its vector's row.
    fruit.write_text("# Fruit\n\nApples are red.\n")
    (memories / ".serena" / "memories" / "deploying.md").unlink()
    store.search_index.sync()
    assert engine.embed_pending() == 1
    assert embedder.texts[-1].endswith("Apples are red.\n")
    assert engine.state().indexed == engine.state().embedded == 2


def test_another_model_embeds_everything_again(memories: Path, engines: list[Meaning]) -> None:
    store, _config = _store(memories)
    first = _engine(store, WordsEmbedder(), engines)
    first.embed_pending()
    other_store, _c = _store(memories, model="other")
    other = _engine(other_store, WordsEmbedder(), engines)
    assert other.state().embedded == 0
    assert other.embed_pending() == 3
    assert {model for _i, model, _h in _rows(other)} == {"local:other#2"}


class WindowEmbedder(WordsEmbedder):
    """`WordsEmbedder` with a dimension of its own for each word it meets (no two words
    share one) that reads a text's first `window` words only, as a small model reads its
    first 256 tokens (about 1,000 characters: 200 words of five letters)."""

    def __init__(self, synonyms: dict[str, str] | None = None, window: int = 200) -> None:
        super().__init__(synonyms)
        self.window = window
        self.dimensions: dict[str, int] = {}

    def embed(self, texts: Sequence[str], *, query: bool = False) -> list[list[float]]:
        if not query:
            self.texts += texts
        vectors = []
        for text in texts:
            vector = [0.0] * 4096
            for word in re.findall(r"[a-z]+", text.lower())[: self.window]:
                word = self.synonyms.get(word, word)
                vector[self.dimensions.setdefault(word, len(self.dimensions))] += 1.0
            vectors.append(vector)
        return vectors


def _filler(topic: str, words: int) -> str:
    """A paragraph of `words` words no query of these tests holds (a topic's, numbered)."""
    return " ".join(f"{topic}{chr(97 + n % 26)}{chr(97 + n // 26 % 26)}" for n in range(words))


def test_a_memory_is_cut_into_passages_at_its_headings_and_paragraphs() -> None:
    short = "# Fruit\n\nBananas are yellow.\n"
    assert vectors.passages_of(short) == [short]
    assert vectors.texts_of("notes/fruit", short) == ("notes fruit\nFruit", f"notes fruit\n{short}")
    sections = [f"## Part {n}\n\n{_filler(f'p{n}', 150)}." for n in range(3)]
    body = "# Handbook\n\n" + "\n\n".join(sections) + "\n"
    assert len(body) > vectors.PASSAGE_CHARS
    passages = vectors.passages_of(body)
    assert len(passages) >= 3
    assert all(len(p) <= vectors.PASSAGE_CHARS for p in passages)
    assert passages[-1].startswith("## Part 2")  # cut where a section begins
    assert "".join(passages) == body
    # A paragraph longer than a passage is cut at its lines, a line at the passage's size.
    line = "x" * (2 * vectors.PASSAGE_CHARS + 5)
    assert [len(p) for p in vectors.passages_of(line)] == [
        vectors.PASSAGE_CHARS,
        vectors.PASSAGE_CHARS,
        5,
    ]
    assert len(vectors.passages_of(line * 20)) == vectors.MAX_PASSAGES


def test_a_memory_is_found_by_a_passage_past_what_the_model_reads(
    memories: Path, engines: list[Meaning], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer in the third section of a long memory, after more than the model reads
    of one text: found by meaning (its passage), not when embedded as one text."""
    folder = memories / ".serena" / "memories"
    sections = [
        f"## Deploys\n\n{_filler('dep', 110)}.",
        f"## Backups\n\n{_filler('bak', 110)}.",
        "## Escalation\n\nAn unanswered pager escalates to Priya Raman.",
    ]
    (folder / "handbook.md").write_text("# Handbook\n\n" + "\n\n".join(sections) + "\n")
    question = "whom does the beeper go to when it is ignored"
    synonyms = {"beeper": "pager", "ignored": "unanswered", "whom": "escalates"}

    def first(store: Store) -> str | None:
        engine = _engine(store, WindowEmbedder(synonyms), engines)
        engine.embed_pending()
        nearest = engine.nearest(question, 3, floor=0.01, summary=True)
        located = engine.located(nearest[0][0]) if nearest else None
        return None if located is None else located[1]

    store, _config = _store(memories, provider="openai")
    assert first(store) == "handbook"
    # Embedded as one text, the model reads its first words only: not found.
    monkeypatch.setattr(vectors, "PASSAGE_CHARS", 10**6)
    monkeypatch.setenv("XDG_CACHE_HOME", str(memories.parent / "other-cache"))
    one_text, _config = _store(memories, provider="openai")
    assert first(one_text) != "handbook"


def test_a_search_scores_a_memory_by_its_best_passage_and_its_summary(
    memories: Path, engines: list[Meaning]
) -> None:
    store, _config = _store(memories, provider="openai")
    engine = _engine(store, WordsEmbedder(), engines)
    engine.embed_pending()
    # "yellow" is in fruit's passage only, "fruit" in its summary and passage.
    by_passage = dict(engine.nearest("yellow", 3, floor=0.0) or [])
    blended = dict(engine.nearest("yellow", 3, floor=0.0, summary=True) or [])
    (fruit,) = [i for i in by_passage if (engine.located(i) or (0, ""))[1] == "fruit"]
    weight = vectors.SUMMARY_WEIGHT
    assert blended[fruit] == pytest.approx((1 - weight) * by_passage[fruit], abs=1e-5)
    summary_only = dict(engine.nearest("fruit", 3, floor=0.0, summary=True) or [])
    passage_only = dict(engine.nearest("fruit", 3, floor=0.0) or [])
    assert summary_only[fruit] > passage_only[fruit] * (1 - weight)


def test_vectors_of_an_older_layout_are_embedded_again_and_then_forgotten(
    memories: Path, engines: list[Meaning]
) -> None:
    """An index made before passages (one vector a memory, raw float32, the model's key
    without its layout) answers after one embedding anew; its old vectors are dropped."""
    store, _config = _store(memories, provider="openai")
    engine = _engine(store, WordsEmbedder(), engines)
    with engine._lock:
        db = engine._db()
        ids = [row[0] for row in db.execute("SELECT id FROM files")]
        for ident in ids:
            digest = ident.to_bytes(16, "big")
            db.execute(
                "INSERT INTO vectors VALUES ('openai:words', ?, ?)",
                (digest, b"\x00\x00\x80\x3f" * DIMENSIONS),
            )
            db.execute("INSERT INTO embedded VALUES (?, 'openai:words', ?)", (ident, digest))
    assert engine.state().embedded == 0  # none read as this layout's
    assert engine.nearest("payments", 3) == []
    assert engine.embed_pending() == 3
    assert {model for _i, model, _h in _rows(engine)} == {"openai:words#2"}
    assert engine.nearest("payments", 3)
    with engine._lock:
        models = {row[0] for row in engine._db().execute("SELECT DISTINCT model FROM vectors")}
    assert models == {"openai:words#2"}


def test_a_search_fuses_the_nearest_in_meaning_and_says_while_incomplete(
    memories: Path, engines: list[Meaning], monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory_ls.core.services.meaning import engine as engine_module

    store, config = _store(memories, provider="openai")  # ready at once, as an endpoint is
    # "boss" and "money" mean what "led" and "payments" say, for this stand-in model.
    embedder = WordsEmbedder({"boss": "led", "money": "payments"})
    assert store.search_index is not None
    made = _engine(store, embedder, engines)
    made.poke = lambda: None  # type: ignore[method-assign]
    monkeypatch.setattr(engine_module, "meaning_for", lambda _config, _path: made)
    before = store.search_memories("boss of money", per_memory=True, count=True)
    assert before.hits == []
    assert any("covers 0 of 3 memories" in note for note in before.notes)
    made.embed_pending()
    found = store.search_memories("boss of money", per_memory=True, count=True)
    assert [hit.name for hit in found.hits] == ["payments_team"]
    assert found.notes == ()
    assert found.hits[0].similarity is not None and found.hits[0].similarity > 0.4
    assert found.total == 1
    # Words still rank: both rankings agree on the first.
    both = store.search_memories("deploy", per_memory=True, count=True)
    assert both.hits[0].name == "deploying"
    # The words' answer alone, when meaning search is off.
    plain = Store(dataclasses.replace(config, meaning=None), store.search_index)
    assert plain.search_memories("boss of money", per_memory=True).hits == []


def test_a_provider_that_fails_leaves_words_only_and_says_so(
    memories: Path, engines: list[Meaning], monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory_ls.core.services.meaning import engine as engine_module

    class Failing(WordsEmbedder):
        def embed(self, texts: Sequence[str], *, query: bool = False) -> list[list[float]]:
            raise EmbeddingError("connection refused")

    store, _config = _store(memories, provider="openai")
    made = _engine(store, Failing(), engines)
    made.poke = lambda: None  # type: ignore[method-assign]
    monkeypatch.setattr(engine_module, "meaning_for", lambda _config, _path: made)
    assert made.embed_pending() == 0
    found = store.search_memories("deploy", per_memory=True)
    assert [hit.name for hit in found.hits] == ["deploying"]
    assert found.notes == ("Search by meaning is unavailable (connection refused); words only.",)


# ----- the endpoint provider -------------------------------------------------------------


def test_the_endpoint_is_posted_the_model_and_texts_with_the_key_from_the_environment() -> None:
    seen: list[tuple[str, dict[str, Any], str | None]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append((self.path, body, self.headers.get("Authorization")))
            data = [
                {"index": n, "embedding": [float(n), 1.0]}
                for n in reversed(range(len(body["input"])))
            ]
            answer = json.dumps({"data": data}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        settings = MeaningSettings(
            "openai", "tiny", f"http://127.0.0.1:{server.server_port}/v1/", "TEST_EMBEDDINGS_KEY"
        )
        embedder = EndpointEmbedder(settings, {"TEST_EMBEDDINGS_KEY": "sk-test"})
        # In the order given, whatever order the answer lists them in.
        assert embedder.embed(["a", "b"]) == [[0.0, 1.0], [1.0, 1.0]]
        assert seen == [
            ("/v1/embeddings", {"model": "tiny", "input": ["a", "b"]}, "Bearer sk-test")
        ]
        no_key = EndpointEmbedder(attrs.evolve(settings, api_key_env=None), {})
        no_key.embed(["c"])
        assert seen[-1][2] is None
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(EmbeddingError):
        EndpointEmbedder(settings, {}).embed(["a"], query=True)  # the server is gone


# ----- off by default ------------------------------------------------------------------


def test_with_it_off_a_search_loads_nothing_of_search_by_meaning(tmp_path: Path) -> None:
    """A search, a write and a search again in one process with no [search.meaning]:
    none of its modules, nor numpy, nor a model library is imported."""
    folder = tmp_path / "repo" / ".serena" / "memories"
    folder.mkdir(parents=True)
    (folder / "deploying.md").write_text("# Deploying\n\nRun make deploy.\n")
    code = (
        "import sys, json\n"
        "from memory_ls.config import merge_layers\n"
        "from memory_ls.core import Store, resolve_store_config\n"
        "from memory_ls.core.services.search import SearchIndex\n"
        "from memory_ls.core.operations.report import answer_with_findings\n"
        f"config = resolve_store_config(merge_layers(), {str(tmp_path / 'repo')!r})\n"
        "store = Store(config, SearchIndex(config, live=False))\n"
        "assert store.search_memories('deploy').hits\n"
        "result = store.save('other', '# Other\\n\\nDeploy notes.\\n')\n"
        "answer_with_findings(store, result)\n"
        "assert store.search_memories('deploy notes').hits\n"
        "loaded = [m for m in sys.modules if m.startswith('memory_ls.core.services.meaning')\n"
        "          or m.split('.')[0] in ('numpy', 'sentence_transformers', 'torch')]\n"
        "print(json.dumps(loaded))\n"
    )
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_a_search_with_it_off_takes_no_longer(memories: Path) -> None:
    """The words' search is the same call as before: no engine is asked for."""
    config = resolve_store_config(merge_layers(), str(memories))
    store = Store(config, SearchIndex(config, live=False))
    started = time.perf_counter()
    found = store.search_memories("deploy", per_memory=True)
    assert [hit.name for hit in found.hits] == ["deploying"]
    assert found.notes == ()
    assert found.hits[0].similarity is None
    assert time.perf_counter() - started < 5


def test_the_retrieval_bench_names_the_paraphrases_that_share_no_word_with_their_note() -> None:
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "bench" / "retrieval" / "run.py"
    spec = importlib.util.spec_from_file_location("retrieval_bench_meaning", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    root, questions = bench.load_questions(bench.DEFAULT_QUESTIONS)
    memories = bench.read_memories(root)
    unshared = bench.unshared_questions(questions, memories)
    # "how long can a shopper stay inactive before they have to sign in again" for the
    # session's idle timeout; not "session idle timeout" phrased as a paraphrase.
    assert "cur-session-ttl" in unshared
    assert 5 <= len(unshared) < len([q for q in questions if q.kind != "none"])
    for q in questions:
        if q.id in unshared:
            asked = set(bench.words(q.phrasings["paraphrase"]))
            held = set(bench.words(" ".join(memories[a] for a in q.answers)))
            assert not {w for w in asked & held if len(w) > 4}, q.id


def test_the_vectors_follow_the_index_in_the_background_without_a_search(
    memories: Path, engines: list[Meaning]
) -> None:
    store, _config = _store(memories, provider="openai")
    embedder = WordsEmbedder()
    engine = _engine(store, embedder, engines)
    engine.poke()
    deadline = time.monotonic() + 30
    while engine.state().embedded < 3:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    (memories / ".serena" / "memories" / "new.md").write_text("# New\n\nA new note.\n")
    assert store.search_index is not None
    store.search_index.sync()  # as the server's watch does: no search, no poke
    while engine.state().embedded < 4:
        assert time.monotonic() < deadline, engine.state()
        time.sleep(0.05)
    assert embedder.texts[-1].endswith("A new note.\n")


def test_a_local_model_is_ready_though_every_memory_was_embedded_before(
    memories: Path, engines: list[Meaning]
) -> None:
    """A server started again over vectors all there loads its model all the same."""
    store, _config = _store(memories)
    _engine(store, WordsEmbedder(), engines).embed_pending()
    again = _engine(store, WordsEmbedder(), engines)
    assert again.state().notes() == [
        "Search by meaning is starting (its model is loading); words only."
    ]
    assert again.embed_pending() == 0
    assert again.state().notes() == []
    assert again.nearest("payments", 3)


def test_an_index_rebuilt_by_another_process_gets_its_vector_tables_again(
    memories: Path, engines: list[Meaning]
) -> None:
    store, _config = _store(memories, provider="openai")
    engine = _engine(store, WordsEmbedder(), engines)
    assert engine.embed_pending() == 3
    with engine._lock:
        db = engine._db()
        for table in ("embedded", "vectors", "vector_meta"):
            db.execute(f"DROP TABLE {table}")
    assert engine.nearest("payments", 3) is None  # said, not raised
    engine._failed_at = float("-inf")  # as after RETRY_SECONDS
    assert engine.embed_pending() == 3
    assert engine.nearest("payments", 3)
