"""gno-trio's configuration: the ``index.yml`` model, where things live, the environment.

One package for every setting the product reads:

``model.py``
    The ``index.yml`` configuration (typed, validated, GNO-compatible), with
    its value rules (``rules.py``), the optional sections (``features.py``)
    and the cattrs hooks (``codec.py``).
``dirs.py``
    The config, data and cache directories and the index names inside them.
``environment.py``
    The process environment: the only module that reads it, naming every
    variable the product consults.

The model's names are importable from the package itself
(``from gno_trio.config import Config``) and load on first use, so a command
that only needs its directories does not import YAML and cattrs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gno_trio.config.model import (
        DEFAULT_EXCLUDES,
        DEFAULT_FTS_TOKENIZER,
        DEFAULT_GATEWAY_PORT,
        DEFAULT_PATTERN,
        FTS_TOKENIZERS,
        URI_PREFIX,
        Collection,
        Config,
        Context,
        EgressPolicy,
        FtsTokenizer,
        Gateway,
        GatewayLimits,
        ScopeType,
        Search,
        SearchBackend,
        SourceAvailability,
        ToolProfile,
        Watch,
        dump_config,
        dumps_config,
        fts5_tokenize_clause,
        load_config,
        loads_config,
        normalize_collection_name,
        parse_config,
    )

__all__ = [
    "DEFAULT_EXCLUDES",
    "DEFAULT_FTS_TOKENIZER",
    "DEFAULT_GATEWAY_PORT",
    "DEFAULT_PATTERN",
    "FTS_TOKENIZERS",
    "URI_PREFIX",
    "Collection",
    "Config",
    "Context",
    "EgressPolicy",
    "FtsTokenizer",
    "Gateway",
    "GatewayLimits",
    "ScopeType",
    "Search",
    "SearchBackend",
    "SourceAvailability",
    "ToolProfile",
    "Watch",
    "dump_config",
    "dumps_config",
    "fts5_tokenize_clause",
    "load_config",
    "loads_config",
    "normalize_collection_name",
    "parse_config",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("gno_trio.config.model"), name)
    raise AttributeError(f"module 'gno_trio.config' has no attribute {name!r}")
