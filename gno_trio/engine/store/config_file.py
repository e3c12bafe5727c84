"""Writing ``index.yml``: whole-file, atomic, private when new.

Only the engine writes the configuration, and only under the write lease
(see :meth:`gno_trio.engine.kernel.EngineKernel.update_config`), so this
module is the one place a config file is produced.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from gno_trio.config import Config, dumps_config
from gno_trio.engine.store.atomic import replace
from gno_trio.errors import GnoError

NEW_CONFIG_MODE: Final = 0o600
"""A new ``index.yml`` is private to the user; an existing one keeps its bits."""


def save_config(path: Path, config: Config) -> None:
    """Write ``config`` to ``path`` atomically, so readers see the old or the new file."""
    text = dumps_config(config)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace(path, text, new_mode=NEW_CONFIG_MODE)
    except OSError as exc:
        raise GnoError("RUNTIME", f"Cannot write config {path}: {exc.strerror or exc}") from None


__all__ = ["NEW_CONFIG_MODE", "save_config"]
