"""The bootstrap section of status: the model cache on disk and the embedding model in force.

Sizes are measured on disk (never estimated), so what status reports is
what a user would free by clearing the cache.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

from gno_trio.engine.reads.semantic_facts import NO_MODELS, PRESET, SemanticFacts


def _tree_size(root: Path) -> int:
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            try:
                total += (Path(folder) / name).lstat().st_size
            except OSError:
                continue
    return total


def _size_label(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def _models(facts: SemanticFacts | None) -> dict[str, Any]:
    """``bootstrap.models``: the embed role in force, its files, nothing downloading."""
    if facts is None:
        return {
            "activePresetId": PRESET["id"],
            "activePresetName": PRESET["name"],
            "estimatedFootprint": None,
            "downloading": False,
            "cachedCount": 0,
            "totalCount": 0,
            "summary": NO_MODELS,
            "entries": [],
        }
    preset = facts.preset()
    label = {"bundled": "bundled", "endpoint": "endpoint"}.get(facts.kind, "unsupported here")
    return {
        "activePresetId": preset["id"],
        "activePresetName": preset["name"],
        "estimatedFootprint": None if facts.size_bytes is None else _size_label(facts.size_bytes),
        "downloading": False,
        "cachedCount": int(facts.runnable),
        "totalCount": 1,
        "summary": facts.summary(),
        "entries": [
            {
                "role": "embed",
                "uri": facts.embed_uri,
                "cached": facts.runnable,
                "path": facts.path,
                "sizeBytes": facts.size_bytes,
                "statusLabel": label if facts.runnable else f"{label}: cannot run",
            }
        ],
    }


def model_size(path: str | None) -> int | None:
    """Bytes of the model's files under ``path`` (None when there is no local copy)."""
    if path is None or not Path(path).is_dir():
        return None
    return _tree_size(Path(path))


def bootstrap(cache_dir: Path, facts: SemanticFacts | None = None) -> dict[str, Any]:
    """Runtime, download policy, cache and models: Python, never a download.

    GNO's contract knows one runtime kind (``bun``, installed by hand); this
    server needs none beside the Python running it, which ``summary`` and
    ``detail`` name.
    """
    size = _tree_size(cache_dir) if cache_dir.is_dir() else 0
    python = platform.python_version()
    return {
        "runtime": {
            "kind": "bun",
            "strategy": "manual-install-beta",
            "currentVersion": "",
            "requiredVersion": "",
            "ready": True,
            "managedByApp": False,
            "summary": f"No extra runtime needed: gno-trio runs on Python {python}",
            "detail": f"{platform.python_implementation()} {python}; nothing else to install.",
        },
        "policy": {
            "offline": True,
            "allowDownload": False,
            "source": "no-auto-download",
            "summary": "Nothing is ever downloaded at run time.",
        },
        "cache": {
            "path": str(cache_dir),
            "totalSizeBytes": size,
            "totalSizeLabel": _size_label(size),
        },
        "models": _models(facts),
    }
