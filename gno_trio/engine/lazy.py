"""Public names of a package, each imported from its home module the first time it is read.

A fresh process pays for every module it imports, and the engine's face
names parts (Context Capsules, answer checking, the vector stack) that most
commands never call. A package that lists its names' homes in a table and
installs :func:`lazy_exports` as its PEP 562 ``__getattr__``/``__dir__``
keeps ``from package import Name`` working for every name while a process
loads only the homes of the names it uses. The package still imports the
same names under ``TYPE_CHECKING``, so type checkers see them statically.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

Homes = Mapping[str, tuple[str, str]]
"""Public name -> (the module that defines it, its name there)."""


def lazy_exports(
    package: str, homes: Homes
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, resolving ``homes`` on first use."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home[0]), home[1])
        namespace[name] = value  # later reads are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *homes})

    return __getattr__, __dir__


__all__ = ["Homes", "lazy_exports"]
