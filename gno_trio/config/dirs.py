"""Where gno-trio keeps its config, index databases and caches.

The layout matches GNO's so both programs can share one installation: three
directories (config, data, cache), each overridable through ``GNO_CONFIG_DIR``,
``GNO_DATA_DIR`` and ``GNO_CACHE_DIR``, with per-platform defaults (XDG on
Linux). Index names end up inside a file name, so they are validated here,
before they can influence any path.
"""

from __future__ import annotations

import os
import sys
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from gno_trio.config.environment import CACHE_DIR, CONFIG_DIR, DATA_DIR, environment
from gno_trio.errors import GnoError

APP_DIR_NAME = "gno"
CONFIG_FILE_NAME = "index.yml"
WRITE_LOCK_FILE_NAME = ".mcp-write.lock"
DEFAULT_INDEX_NAME = "default"

_DB_PREFIX = "index-"
_DB_SUFFIX = ".sqlite"
# A database file name must fit the 255-unit limit common to filesystems, so
# the canonical name gets what remains after "index-" and ".sqlite".
MAX_INDEX_NAME_STORAGE = 255 - len(_DB_PREFIX) - len(_DB_SUFFIX)
MAX_INDEX_NAME_LENGTH = 64

_INDEX_NAME_RULES = (
    "use 1-64 letters, marks, numbers, internal spaces, '.', '_' or '-'; "
    "start with a letter or number; do not end with a space or '.'; "
    f"do not contain '..'; stay within {MAX_INDEX_NAME_STORAGE} bytes as UTF-8"
)
_EXTRA_NAME_CHARS = frozenset(" ._-")


@dataclass(frozen=True, slots=True)
class Dirs:
    """The three resolved directories; every file location derives from them."""

    config: Path
    data: Path
    cache: Path
    config_explicit: bool = field(default=False, compare=False)
    """``config`` came from ``GNO_CONFIG_DIR`` rather than a platform default."""

    @property
    def config_file(self) -> Path:
        """The ``index.yml`` holding collections, contexts and gateway settings."""
        return self.config / CONFIG_FILE_NAME

    def database(self, index_name: str = DEFAULT_INDEX_NAME) -> Path:
        """The SQLite file of one index.

        The file is named after the canonical (case-folded) name, so ``Work``
        and ``work`` select the same database on every filesystem, not only on
        the case-insensitive ones.
        """
        return self.data / database_file_name(index_name)

    @property
    def write_lock(self) -> Path:
        """Lease file that serialises writers (MCP tools and CLI) on this data dir."""
        return self.data / WRITE_LOCK_FILE_NAME


def resolve_dirs(env: Mapping[str, str] | None = None, *, platform: str | None = None) -> Dirs:
    """Resolve the directories from environment variables and platform defaults.

    ``env`` defaults to the process environment and ``platform`` to ``sys.platform``;
    both are parameters so callers and tests can resolve layouts for another
    environment without mutating the process.
    """
    environ: Mapping[str, str] = environment() if env is None else env
    plat = sys.platform if platform is None else platform
    home = _home(environ)
    if plat == "darwin":
        support = home / "Library" / "Application Support" / APP_DIR_NAME
        defaults = (
            support / "config",
            support / "data",
            home / "Library" / "Caches" / APP_DIR_NAME,
        )
    elif plat == "win32":
        roaming = _absolute_env(environ, "APPDATA") or home / "AppData" / "Roaming"
        local = _absolute_env(environ, "LOCALAPPDATA") or home / "AppData" / "Local"
        defaults = (
            roaming / APP_DIR_NAME / "config",
            local / APP_DIR_NAME / "data",
            local / APP_DIR_NAME / "cache",
        )
    else:
        defaults = (
            (_absolute_env(environ, "XDG_CONFIG_HOME") or home / ".config") / APP_DIR_NAME,
            (_absolute_env(environ, "XDG_DATA_HOME") or home / ".local" / "share") / APP_DIR_NAME,
            (_absolute_env(environ, "XDG_CACHE_HOME") or home / ".cache") / APP_DIR_NAME,
        )
    config, data, cache = defaults
    chosen_config = _override(environ, CONFIG_DIR, home)
    return Dirs(
        config=chosen_config or config,
        data=_override(environ, DATA_DIR, home) or data,
        cache=_override(environ, CACHE_DIR, home) or cache,
        config_explicit=chosen_config is not None,
    )


def validate_index_name(name: str) -> str:
    """Return ``name`` unchanged if it is a safe index name, else raise ``VALIDATION``."""
    if not isinstance(name, str) or not _is_valid_index_name(name):
        raise GnoError("VALIDATION", f"Invalid index name {name!r}: {_INDEX_NAME_RULES}")
    return name


def canonical_index_name(name: str) -> str:
    """The identity of an index name: NFC, then a lower/upper/lower case closure.

    A plain ``lower()`` leaves pairs such as ``ß``/``SS`` or ``ſ``/``S`` apart
    although case-insensitive filesystems treat them as one name; the round
    trip through upper case joins them.
    """
    validate_index_name(name)
    return _canonicalize(name)


def database_file_name(index_name: str) -> str:
    """``index-<canonical name>.sqlite``: the file name of an index's database."""
    return f"{_DB_PREFIX}{canonical_index_name(index_name)}{_DB_SUFFIX}"


def index_names_match(left: str, right: str) -> bool:
    """Whether two index names select the same database."""
    return canonical_index_name(left) == canonical_index_name(right)


def _canonicalize(name: str) -> str:
    folded = unicodedata.normalize("NFC", name).lower().upper().lower()
    return unicodedata.normalize("NFC", folded)


def _utf16_length(text: str) -> int:
    # GNO counts length in UTF-16 code units; astral characters count twice.
    return len(text.encode("utf-16-le")) // 2


def _is_valid_index_name(name: str) -> bool:
    if not name or _utf16_length(name) > MAX_INDEX_NAME_LENGTH:
        return False
    if unicodedata.category(name[0])[0] not in "LN":
        return False
    for char in name[1:]:
        if char not in _EXTRA_NAME_CHARS and unicodedata.category(char)[0] not in "LMN":
            return False
    if name[-1] in " ." or ".." in name:
        return False
    canonical = _canonicalize(name)
    return (
        _utf16_length(canonical) <= MAX_INDEX_NAME_STORAGE
        and len(canonical.encode("utf-8")) <= MAX_INDEX_NAME_STORAGE
    )


def _home(environ: Mapping[str, str]) -> Path:
    for key in ("HOME", "USERPROFILE"):
        value = environ.get(key)
        if value and os.path.isabs(value):
            return Path(value)
    return Path.home()


def _absolute_env(environ: Mapping[str, str], key: str) -> Path | None:
    """An environment directory, ignored when empty or relative (as XDG requires)."""
    value = environ.get(key)
    if value and os.path.isabs(value):
        return Path(value)
    return None


def _override(environ: Mapping[str, str], key: str, home: Path) -> Path | None:
    """An explicit ``GNO_*_DIR``: ``~`` expands, relative paths anchor at the cwd."""
    value = environ.get(key)
    if not value:
        return None
    if value == "~" or value.startswith(("~/", "~" + os.sep)):
        return home / value[2:] if len(value) > 1 else home
    return Path(os.path.abspath(value))
