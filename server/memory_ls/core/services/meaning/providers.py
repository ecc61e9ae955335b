"""Where embeddings come from: an OpenAI-compatible `/embeddings` endpoint, or a
sentence-transformers model in this process (`pip install memory-ls[meaning]`)."""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any, Protocol

from memory_ls.config import MeaningSettings

# A query is embedded while a search waits; a batch in the background may take longer.
QUERY_TIMEOUT_SECONDS = 5.0
BATCH_TIMEOUT_SECONDS = 120.0
# Characters of a text sent to be embedded: small models read 256 to 512 tokens, and an
# endpoint need not be sent more for that (a memory is sent as passages shorter than this).
MAX_TEXT_CHARS = 4000
# Texts the in-process model embeds at once: sorted by length first, so a memory's short
# summary is not padded to its passages' length.
LOCAL_BATCH_TEXTS = 8


class EmbeddingError(Exception):
    """The provider could not embed (unreachable, refused, an answer of another shape)."""


class Embedder(Protocol):
    """Something that turns texts into vectors, one per text, in order."""

    def embed(self, texts: Sequence[str], *, query: bool = False) -> list[list[float]]:
        """The texts' vectors; `query`: a search waits for it (a shorter timeout)."""
        ...


class EndpointEmbedder:
    """An OpenAI-compatible API (OpenAI, Ollama, llama.cpp's server, LM Studio, …)."""

    def __init__(self, settings: MeaningSettings, environ: dict[str, str] | None = None) -> None:
        self.model = settings.model
        self.address = (settings.url or "").rstrip("/") + "/embeddings"
        env = os.environ if environ is None else environ
        # Read now, from the variable the project file names; never written anywhere.
        self.key = env.get(settings.api_key_env) if settings.api_key_env else None

    def embed(self, texts: Sequence[str], *, query: bool = False) -> list[list[float]]:
        """The texts' vectors from the endpoint, in order."""
        body = json.dumps(
            {"model": self.model, "input": [text[:MAX_TEXT_CHARS] for text in texts]}
        ).encode()
        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        request = urllib.request.Request(self.address, body, headers, method="POST")
        timeout = QUERY_TIMEOUT_SECONDS if query else BATCH_TIMEOUT_SECONDS
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                answer = json.loads(response.read())
        except (OSError, ValueError, urllib.error.URLError) as exc:
            raise EmbeddingError(f"{self.address}: {exc}") from exc
        return _vectors_of(answer, len(texts), self.address)


def _vectors_of(answer: Any, count: int, address: str) -> list[list[float]]:
    """The vectors of an `/embeddings` answer, by their `index`."""
    try:
        rows = sorted(answer["data"], key=lambda row: row.get("index", 0))
        vectors = [[float(x) for x in row["embedding"]] for row in rows]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise EmbeddingError(f"{address}: not an embeddings answer ({exc})") from exc
    if len(vectors) != count or not vectors or len({len(v) for v in vectors}) != 1:
        raise EmbeddingError(f"{address}: {len(vectors)} vectors for {count} texts")
    return vectors


class LocalEmbedder:
    """A sentence-transformers model in this process: a name it knows or a folder."""

    def __init__(self, settings: MeaningSettings) -> None:
        self.name = settings.model
        self._model: Any = None
        # One inference at a time: a search's query does not share the cores with a batch.
        self._lock = threading.Lock()

    def _loaded(self) -> Any:
        if self._model is None:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise EmbeddingError(
                    'provider = "local" needs sentence-transformers: '
                    "pip install 'memory-ls[meaning]'"
                ) from exc
            try:
                self._model = SentenceTransformer(self.name, device="cpu")
            except Exception as exc:  # a missing model, no hub to fetch it from
                raise EmbeddingError(f"model {self.name!r} could not be loaded: {exc}") from exc
        return self._model

    def embed(self, texts: Sequence[str], *, query: bool = False) -> list[list[float]]:
        """The texts' vectors from the model, in order."""
        with self._lock:
            model = self._loaded()
            try:
                found = model.encode(
                    [text[:MAX_TEXT_CHARS] for text in texts],
                    batch_size=max(1, min(len(texts), LOCAL_BATCH_TEXTS)),
                    show_progress_bar=False,
                    convert_to_numpy=True,
                )
            except Exception as exc:  # the model's own failures, whatever their kind
                raise EmbeddingError(f"model {self.name!r}: {exc}") from exc
        rows: list[list[float]] = found.tolist()
        return rows


def embedder_for(settings: MeaningSettings) -> Embedder:
    """The embedder the settings name."""
    if settings.provider == "local":
        return LocalEmbedder(settings)
    return EndpointEmbedder(settings)
