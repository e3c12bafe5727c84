"""The bounds every conversion runs under, and the per-job context converters read.

GNO's defaults: 100 MB per source file, 60 s per conversion and 50 M
characters of output. On top of those, a worker process gets an address-space
limit (so a file that makes a parser allocate without end fails alone), and
zip containers (DOCX, XLSX, PPTX) are checked against their declared
unpacked size before any parser sees them.

Converters take only ``(rel_path, data)``; the limits and the progress hook
of the job at hand reach them through :func:`current`, a context variable
that the worker (or a test) sets with :func:`applied`.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

from gno_trio.config.features import Conversion

MIB: Final = 1024 * 1024
LimitsTuple = tuple[int, float, int, int, int, int, int, int, float]


@dataclass(frozen=True, slots=True)
class ConversionLimits:
    """Per-file bounds (all configurable; the defaults are GNO's where GNO has one)."""

    max_bytes: int = 100 * MIB
    """Largest source file converted; bigger ones are ``TOO_LARGE`` without being read."""
    timeout_s: float = 60.0
    """Wall time one conversion may take before its worker is killed."""
    max_chars: int = 50_000_000
    """Longest mirror kept; longer output is cut there with a ``TRUNCATED`` warning."""
    max_memory_bytes: int = 2048 * MIB
    """Address-space limit of a worker process (``RLIMIT_AS``)."""
    max_unpacked_bytes: int = 512 * MIB
    """Largest total declared unpacked size of a zip container's entries."""
    max_zip_ratio: int = 200
    """Largest unpacked/packed ratio of a zip entry bigger than one MiB."""
    max_zip_entries: int = 20_000
    max_html_depth: int = 256
    """Element nesting kept by the HTML converter; deeper content is flattened."""
    progress_interval_s: float = 0.2
    """Least time between two progress reports of one conversion."""

    def as_tuple(self) -> LimitsTuple:
        return (
            self.max_bytes,
            self.timeout_s,
            self.max_chars,
            self.max_memory_bytes,
            self.max_unpacked_bytes,
            self.max_zip_ratio,
            self.max_zip_entries,
            self.max_html_depth,
            self.progress_interval_s,
        )

    @classmethod
    def from_tuple(
        cls, values: tuple[int, float, int, int, int, int, int, int]
    ) -> ConversionLimits:
        return cls(*values)


DEFAULT_LIMITS: Final = ConversionLimits()


def limits_from_settings(settings: Conversion) -> ConversionLimits:
    """The limits an index's ``conversion:`` settings ask for."""
    return ConversionLimits(
        max_bytes=settings.max_bytes,
        timeout_s=settings.timeout_ms / 1000,
        max_chars=settings.max_output_chars,
        max_memory_bytes=settings.max_memory_mb * MIB,
    )


ProgressHook = Callable[[int, int], None]
"""``(done, total)`` units of the file at hand (pages, sheets, slides)."""


@dataclass(frozen=True, slots=True)
class JobContext:
    limits: ConversionLimits
    progress: ProgressHook | None = None


_DEFAULT_CONTEXT: Final = JobContext(DEFAULT_LIMITS)
_CURRENT: contextvars.ContextVar[JobContext | None] = contextvars.ContextVar(
    "gno_conversion_job", default=None
)


def current() -> JobContext:
    """The limits and progress hook of the conversion running in this context."""
    return _CURRENT.get() or _DEFAULT_CONTEXT


@contextlib.contextmanager
def applied(limits: ConversionLimits, progress: ProgressHook | None = None) -> Iterator[None]:
    """Run the enclosed conversions under ``limits``, reporting to ``progress``."""
    token = _CURRENT.set(JobContext(limits, progress))
    try:
        yield
    finally:
        _CURRENT.reset(token)


class Ticker:
    """Reports progress through the job's hook, at most every ``interval`` seconds.

    Converters call :meth:`tick` once per page, sheet or slide; the hook sends
    a message to the parent, so it is rate-limited here rather than there.
    """

    def __init__(self, total: int) -> None:
        self.total = total
        job = current()
        self._hook = job.progress
        self._interval = interval = job.limits.progress_interval_s
        self._next = time.monotonic() + interval

    def tick(self, done: int) -> None:
        if self._hook is None:
            return
        now = time.monotonic()
        if now >= self._next or done >= self.total:
            self._next = now + self._interval
            self._hook(done, self.total)
