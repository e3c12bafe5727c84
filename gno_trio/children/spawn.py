"""``multiprocessing`` children that import nothing from the working directory.

The standard library starts a ``spawn`` child (and its resource tracker) with
``python -c``, which no flag of ours reaches. Such a child takes its parent's
``sys.path`` once started, but imports ``pickle``, ``socket`` and more
before, with the working directory first on its path. The context here
launches each child with ``PYTHONSAFEPATH=1`` (the environment's ``-P``) in
its environment, so the working directory is never on its path. This module
stands apart from :mod:`gno_trio.children` so commands that start no such
child do not import ``multiprocessing``.
"""

from __future__ import annotations

import contextlib
import multiprocessing.context
import multiprocessing.popen_spawn_posix
import multiprocessing.resource_tracker
import threading
from collections.abc import Iterator
from typing import Any, Final

from gno_trio.config.environment import variable_set

_SAFE_PATH_VARIABLE: Final = "PYTHONSAFEPATH"
_LAUNCHING = threading.Lock()


@contextlib.contextmanager
def _safe_path_environment() -> Iterator[None]:
    """``PYTHONSAFEPATH=1`` while a child is launched: it inherits the environment at exec.

    Set only for that moment. A program another thread starts meanwhile
    inherits it as well, which only keeps a Python there from importing its
    working directory (gno-trio's own children run ``-I`` and ignore it).
    """
    with _LAUNCHING, variable_set(_SAFE_PATH_VARIABLE, "1"):
        yield


class _SafePathPopen(multiprocessing.popen_spawn_posix.Popen):
    """``spawn``'s launcher, with the working directory kept off the child's start-up path."""

    def _launch(self, process_obj: Any) -> None:  # type: ignore[misc]
        with _safe_path_environment():
            super()._launch(process_obj)  # type: ignore[misc]


class _SafePathProcess(multiprocessing.context.SpawnProcess):
    @staticmethod
    def _Popen(process_obj: Any) -> _SafePathPopen:
        return _SafePathPopen(process_obj)


class _SafePathContext(multiprocessing.context.SpawnContext):
    Process = _SafePathProcess


def isolated_spawn_context() -> multiprocessing.context.SpawnContext:
    """A ``spawn`` context whose children never import from the working directory.

    The resource tracker every such context shares (a child ``multiprocessing``
    starts once per process, on demand) is started here the same way.
    """
    with _safe_path_environment():
        multiprocessing.resource_tracker.ensure_running()
    return _SafePathContext()


__all__ = ["isolated_spawn_context"]
