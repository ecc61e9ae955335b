"""`Meaning`: one store's vectors kept in step with its full-text index in the background,
and the memories nearest in meaning to a text."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from memory_ls.config import MeaningSettings
from memory_ls.core.services.meaning import vectors
from memory_ls.core.services.meaning.providers import Embedder, EmbeddingError, embedder_for
from memory_ls.core.services.search.database import Database
from memory_ls.core.services.search.schema import IndexUnusable, sqlite3
from memory_ls.core.storage.folders import StoreConfig

logger = logging.getLogger(__name__)

# Memories embedded in one call to an endpoint (and one transaction).
BATCH = 32
# In process, fewer: the model embeds one batch at a time, and a search's query waits for
# the batch under way. all-MiniLM-L6-v2 here, load 2 to 2.5 on 2 cores, memories of 1,000
# to 1,400 characters (a summary and 1.7 passages each): 197 ms a memory by 4, 199 by 8,
# the slowest batch 1.9 s by 4, 3.3 s by 8 (one text a memory, 8 took about 1 s).
LOCAL_BATCH = 4
# After the provider failed, it is not asked again for this long (a search does not wait
# for an endpoint that is down on every call); the background work tries again then.
RETRY_SECONDS = 30.0
# Cosine similarity under which a memory is not near in meaning (all-MiniLM-L6-v2 gives
# unrelated texts 0 to 0.15, a question and the note that answers it 0.4 to 0.7).
SIMILARITY_FLOOR = 0.2
# Between searches, the background work looks this often whether the index changed (one
# PRAGMA), and embeds what changed: the vectors follow the memories without a search.
WATCH_SECONDS = 2.0
# Vectors no memory holds any more are dropped at most this often.
FORGET_SECONDS = 600.0


@dataclass(frozen=True)
class State:
    """How far the vectors are: memories embedded of those indexed, and any problem."""

    embedded: int
    indexed: int
    problem: str | None
    ready: bool  # the provider answered (a local model is loaded)

    def notes(self) -> list[str]:
        """What an answer says of search by meaning when it is not whole."""
        if self.problem is not None:
            return [f"Search by meaning is unavailable ({self.problem}); words only."]
        if not self.ready:
            return ["Search by meaning is starting (its model is loading); words only."]
        if self.embedded < self.indexed:
            return [
                f"Search by meaning covers {self.embedded} of {self.indexed} memories so far "
                "(the rest are being embedded); the others are found by their words."
            ]
        return []


class Meaning:
    """The vectors of one store's index for one provider and model (thread-safe)."""

    def __init__(
        self,
        settings: MeaningSettings,
        config: StoreConfig,
        path: str | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.settings = settings
        self.model = vectors.model_key(settings.provider, settings.model)
        self.batch = LOCAL_BATCH if settings.provider == "local" else BATCH
        self.embedder = embedder if embedder is not None else embedder_for(settings)
        # Its own connection to the index's database: the index's lock is never held
        # while a batch is embedded.
        self.database = Database(config, path)
        self.prefixes = [folder.qualified("") for folder in config.folders]
        self._lock = threading.Lock()  # the connection and the matrix
        self._matrix: vectors.Matrix | None = None
        self._matrix_version = -1
        self._ready = settings.provider != "local"  # an endpoint is asked at once
        self._problem: str | None = None
        self._failed_at = float("-inf")
        self._forgotten_at = 0.0
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False

    # ----- the background work --------------------------------------------------------

    def poke(self) -> None:
        """Embed what the index holds without a vector, in the background."""
        with self._lock:
            if self._closed:
                return
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="memory-ls-meaning", daemon=True
                )
                self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        seen = None
        while not self._closed:
            poked = self._wake.wait(WATCH_SECONDS)
            self._wake.clear()
            if self._closed:
                return
            if not poked:
                # Whether anyone wrote the index since (a memory changed): else nothing to do.
                with self._lock:
                    try:
                        now = self._db().execute("PRAGMA data_version").fetchone()[0]
                    except (IndexUnusable, sqlite3.Error):
                        continue
                if now == seen:
                    continue
                seen = now
            if time.monotonic() - self._failed_at < RETRY_SECONDS:
                time.sleep(RETRY_SECONDS - (time.monotonic() - self._failed_at))
            try:
                self.embed_pending()
            except Exception as exc:  # never let the thread die: said in answers
                logger.warning("memory-ls: embedding memories failed: %s", exc)
                self._failed(str(exc))
                self._reconnect()

    def embed_pending(self, limit: int | None = None) -> int:
        """Embed indexed memories without a vector, a batch at a time, until none is left
        (or `limit` were); how many were recorded."""
        done = 0
        if not self._ready:
            # The model loaded first, even with nothing to embed: searches wait for it.
            try:
                self.embedder.embed(["memory-ls"])
            except EmbeddingError as exc:
                self._failed(str(exc))
                return 0
            self._ready, self._problem = True, None
        while limit is None or done < limit:
            with self._lock:
                if self._closed:
                    break
                db = self._db()
                batch = vectors.pending(db, self.model, self.prefixes, self.batch)
                if not batch:
                    break
                stored = vectors.known(db, self.model, [row.hash for row in batch])
            fresh = [row for row in batch if row.hash not in stored]
            texts = [text for row in fresh for text in row.texts]
            try:
                found = self.embedder.embed(texts) if texts else []
            except EmbeddingError as exc:
                self._failed(str(exc))
                break
            if len(found) != len(texts):
                self._failed(f"{len(found)} vectors for {len(texts)} texts")
                break
            self._ready, self._problem = True, None
            at = 0
            for row in fresh:
                stored[row.hash] = vectors.pack(found[at : at + len(row.texts)])
                at += len(row.texts)
            with self._lock:
                if self._closed:
                    break
                recorded = vectors.store(
                    self._db(), self.model, [(row, stored[row.hash]) for row in batch]
                )
            done += recorded
            if not recorded:
                break  # every row changed meanwhile: the next poke takes them as they are
        if time.monotonic() - self._forgotten_at > FORGET_SECONDS and limit is None:
            with self._lock:
                vectors.forget_unused(self._db(), self.model)
            self._forgotten_at = time.monotonic()
        return done

    def _failed(self, problem: str) -> None:
        self._problem = problem
        self._failed_at = time.monotonic()

    def _reconnect(self) -> None:
        """Open the database again next time (an index rebuilt by another process lost
        the vectors' tables: they are made again)."""
        with self._lock:
            self._forget()

    def _forget(self) -> None:
        """`_reconnect`, the lock held."""
        self.database.close()
        self._matrix, self._matrix_version = None, -1

    def _db(self) -> Any:
        """The connection, the vectors' tables made first (lock held)."""
        fresh = self.database.db is None
        db = self.database.connect()
        if fresh:
            vectors.create_tables(db)
        return db

    def close(self) -> None:
        """Stop the background work and close the connection."""
        self._closed = True
        self._wake.set()
        # Not while the background work reads or writes through it (SQLite would crash).
        with self._lock:
            self.database.close()

    # ----- questions ------------------------------------------------------------------

    def state(self) -> State:
        """How far the vectors are now."""
        with self._lock:
            try:
                db = self._db()
                indexed = int(db.execute("SELECT count(*) FROM files").fetchone()[0])
                embedded = len(self._current())
            except (IndexUnusable, sqlite3.Error) as exc:
                self._forget()
                return State(0, 0, str(exc), self._ready)
        return State(embedded, indexed, self._problem, self._ready)

    def _current(self) -> vectors.Matrix:
        """The matrix as the database holds it now (lock held)."""
        db = self._db()
        now = vectors.version(db)
        if self._matrix is None or now != self._matrix_version:
            self._matrix = vectors.Matrix.load(db, self.model)
            self._matrix_version = now
        return self._matrix

    def embed_query(self, text: str) -> vectors.Matrix32 | None:
        """A search's text as a unit vector; None when the provider cannot say now (a
        local model still loading, an endpoint that failed lately)."""
        self.poke()  # whatever changed since is embedded meanwhile
        if not self._ready or time.monotonic() - self._failed_at < RETRY_SECONDS:
            return None
        try:
            (vector,) = self.embedder.embed([text], query=True)
        except EmbeddingError as exc:
            self._failed(str(exc))
            return None
        return vectors.unit(vector)

    def nearest(
        self, text: str, count: int, floor: float = SIMILARITY_FLOOR, *, summary: bool = False
    ) -> list[tuple[int, float]] | None:
        """The `files` rows of the `count` memories nearest in meaning to `text`, with
        their cosine similarity (their best passage's; with `summary`, blended with their
        summary's, as a search ranks), best first; None when it cannot be embedded now."""
        query = self.embed_query(text)
        if query is None:
            return None
        with self._lock:
            try:
                matrix = self._current()
            except (IndexUnusable, sqlite3.Error) as exc:
                self._failed(str(exc))
                self._forget()
                return None
        return matrix.nearest(query, count, floor, summary=summary)

    def located(self, ident: int) -> tuple[int, str] | None:
        """(folder rank, name) of a `files` row."""
        with self._lock:
            row = (
                self._db()
                .execute("SELECT folder, name FROM files WHERE id = ?", (ident,))
                .fetchone()
            )
        return None if row is None else (int(row[0]), str(row[1]))


_ENGINES: dict[tuple[str, MeaningSettings], Meaning] = {}
_ENGINES_LOCK = threading.Lock()


def meaning_for(config: StoreConfig, path: str) -> Meaning | None:
    """The `Meaning` of this store's settings over the index at `path`, one a process (its
    work started); None when search by meaning is off."""
    settings = config.meaning
    if settings is None:
        return None
    key = (path, settings)
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = _ENGINES[key] = Meaning(settings, config, path)
    engine.poke()
    return engine
