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
from typing import Final


def _load_malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    function: Callable[[int], int] = trim
    return function


_MALLOC_TRIM: Final = _load_malloc_trim()
CAN_TRIM: Final = _MALLOC_TRIM is not None
"""Whether this C library can give free heap pages back."""


def trim_heap() -> bool:
    """Return free heap pages to the OS; False when this C library cannot."""
    if _MALLOC_TRIM is None:
        return False
    _MALLOC_TRIM(0)
    return True


__all__ = ["CAN_TRIM", "trim_heap"]
