"""Which embedding model an index uses, read from ``index.yml`` the way GNO reads it.

The embed model URI comes from, in order: the collection's own
``models.embed``; the ``embed`` of the preset named by ``models.activePreset``
among ``models.presets``; the bundled model. Two kinds of URI run here: the
bundled model (``builtin:use-multilingual-v3``) and OpenAI-compatible
endpoints (``http(s)://...#model``). GNO's GGUF URIs (``hf:``, ``file:``) need
GNO's native runtime; naming one is ``MODEL_NOT_FOUND`` for the semantic leg
(search keeps answering lexically), never a silent switch to another model.
"""

from __future__ import annotations

import threading
from typing import Any, Final

from gno_trio.config import Config
from gno_trio.engine.vectors.bundled import (
    BUNDLED_DIMENSION,
    BUNDLED_URI,
    BundledEmbedder,
    model_path,
    package_version,
)
from gno_trio.engine.vectors.embedder import MODEL_NOT_FOUND, EmbeddingBackend
from gno_trio.engine.vectors.endpoint import DEFAULT_TIMEOUT_S, EndpointEmbedder, is_endpoint_uri
from gno_trio.errors import GnoError

_backends: dict[tuple[str, float], EmbeddingBackend] = {}
_backends_lock = threading.Lock()
_MS: Final = 1000.0


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def preset_uri(config: Config, role: str) -> str | None:
    """The URI the active preset (``models.activePreset``) names for ``role`` (embed, gen ...)."""
    models = _mapping(config.models)
    active = models.get("activePreset")
    for preset in models.get("presets") or ():
        preset = _mapping(preset)
        if preset.get("id") == active and isinstance(preset.get(role), str):
            return str(preset[role]).strip() or None
    return None


def embed_model_uri(config: Config, collection: str | None = None) -> str:
    """The embed model URI in force for ``collection`` (or the index as a whole)."""
    if collection is not None:
        found = config.collection(collection)
        if found is not None:
            own = _mapping(found.models).get("embed")
            if isinstance(own, str) and own.strip():
                return own.strip()
    return preset_uri(config, "embed") or BUNDLED_URI


def inference_timeout_s(config: Config) -> float:
    """``models.inferenceTimeout`` (milliseconds in the file) in seconds."""
    raw = _mapping(config.models).get("inferenceTimeout")
    if isinstance(raw, int | float) and not isinstance(raw, bool) and raw > 0:
        return float(raw) / _MS
    return DEFAULT_TIMEOUT_S


def check_embed_model_uri(uri: str) -> str:
    """``uri`` stripped, when it names a model that runs here; else ``INVALID_INPUT``.

    Checked where a URI is written into ``index.yml`` (``collection add
    --embed-model``), so a collection never starts with a model it cannot use.
    """
    chosen = uri.strip()
    if chosen == BUNDLED_URI or (is_endpoint_uri(chosen) and len(chosen) > len("https://")):
        return chosen
    raise GnoError(
        "INVALID_INPUT",
        f"Embedding model {uri!r} cannot run here: use {BUNDLED_URI} (bundled) "
        "or an OpenAI-compatible endpoint URL (https://host/v1#model)",
    )


def backend_for(uri: str, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> EmbeddingBackend:
    """The embedder behind a model URI (one instance per URI and process)."""
    key = (uri, timeout_s)
    with _backends_lock:
        found = _backends.get(key)
        if found is not None:
            return found
        backend: EmbeddingBackend
        if uri == BUNDLED_URI:
            backend = BundledEmbedder()
        elif is_endpoint_uri(uri):
            backend = EndpointEmbedder(uri, timeout_s=timeout_s)
        else:
            raise GnoError(
                MODEL_NOT_FOUND,
                f"Embedding model {uri} cannot run here: use {BUNDLED_URI} (bundled) "
                f"or an OpenAI-compatible endpoint URL",
            )
        _backends[key] = backend
        return backend


def configured_backend(config: Config, collection: str | None = None) -> EmbeddingBackend:
    return backend_for(embed_model_uri(config, collection), timeout_s=inference_timeout_s(config))


def models_list(config: Config) -> dict[str, Any]:
    """What ``models list`` shows: the roles, their URIs, and whether each can run."""
    uri = embed_model_uri(config)
    models = _mapping(config.models)
    embed: dict[str, Any] = {"uri": uri}
    if uri == BUNDLED_URI:
        version = package_version()
        embed.update(
            {"cached": version is not None, "bundled": True, "dimension": BUNDLED_DIMENSION}
        )
        if version is not None:
            embed["version"] = version
    elif is_endpoint_uri(uri):
        embed.update({"cached": True, "endpoint": True})
    else:
        embed.update({"cached": False, "unsupported": True})
    return {
        "activePreset": models.get("activePreset"),
        "embed": embed,
        "rerank": _endpoint_role(config, "rerank"),
        "expand": _endpoint_role(config, "expand"),
        "gen": _endpoint_role(config, "gen"),
    }


def _endpoint_role(config: Config, role: str) -> dict[str, Any] | None:
    """A role served only through an HTTP endpoint: its URI and whether it can run here."""
    uri = preset_uri(config, role)
    if uri is None:
        return None
    if uri.startswith(("http://", "https://")) and len(uri) > len("https://"):
        return {"uri": uri, "cached": True, "path": None, "endpoint": True}
    return {"uri": uri, "cached": False, "path": None, "unsupported": True}


def models_path() -> str | None:
    """Where the bundled model's files are (``models path``)."""
    return model_path()
