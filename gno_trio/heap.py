"""Giving freed heap pages back to the OS after a large, short-lived allocation.

Python frees its objects, but glibc's allocator keeps the freed pages for
reuse (per thread arena, and above its adaptive mmap threshold), so a
process that briefly built something large stays large long after: a
resident server at rest would keep its peak. :func:`trim_heap` asks glibc to
return its free pages (``malloc_trim``). On a C library without it, it does
nothing. It may take a few milliseconds: call it off the event loop.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable
from typing import Any, Final


def _libc_function(name: str, *arguments: type[ctypes.c_int | ctypes.c_size_t]) -> Any:
    """The C library's function ``name`` taking ``arguments`` and giving an int, or None."""
    library = ctypes.util.find_library("c")
    if library is None:
        return None
    try:
        function = getattr(ctypes.CDLL(library), name)
    except (OSError, AttributeError):
        return None
    function.argtypes = list(arguments)
    function.restype = ctypes.c_int
    return function


_MALLOC_TRIM: Final[Callable[[int], int] | None] = _libc_function("malloc_trim", ctypes.c_size_t)
_MALLOPT: Final[Callable[[int, int], int] | None] = _libc_function(
    "mallopt", ctypes.c_int, ctypes.c_int
)
_M_ARENA_MAX: Final = -8
CAN_TRIM: Final = _MALLOC_TRIM is not None
"""Whether this C library can give free heap pages back."""


def one_arena() -> None:
    """Have every thread allocate from the one main heap (glibc's ``M_ARENA_MAX``).

    Each thread that allocates otherwise gets a heap of its own, and what a
    worker thread freed stays in its heap, scattered between what it still
    holds: a server that loaded its vectors in one thread and searched in two
    others rested 6 MiB larger on mcp-docs. The engine threads of a server
    take turns (see :data:`gno_trio.runtime.ENGINE_STAGGER`), so one heap
    costs them little. Call it before the threads start; elsewhere a no-op.
    """
    if _MALLOPT is not None:
        _MALLOPT(_M_ARENA_MAX, 1)


def trim_heap() -> bool:
    """Return free heap pages to the OS; False when this C library cannot."""
    if _MALLOC_TRIM is None:
        return False
    _MALLOC_TRIM(0)
    return True


__all__ = ["CAN_TRIM", "one_arena", "trim_heap"]
