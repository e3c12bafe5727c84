"""A terminal progress bar for long indexing and embedding runs, drawn on stderr.

Drawn only when stderr is a terminal (or when forced), and redrawn at most
ten times a second so that a large folder does not spend its time printing.
Besides the count it shows the rate (``12.5 files/s``) over the last
:data:`RATE_WINDOW_S` seconds and the time left at that rate
(``ETA 3m05s``), so a seven-minute run says it is one.
"""

from __future__ import annotations

import collections
import shutil
import sys
import time
from typing import Final, TextIO

RATE_WINDOW_S: Final = 10.0
"""The rate is measured over this much recent time, so it follows a change of pace."""
_MIN_RATE_S: Final = 1.0


def duration(seconds: float) -> str:
    """``45s``, ``3m05s``, ``1h02m``: short enough for a progress line."""
    whole = int(seconds + 0.5)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


class ProgressBar:
    """``label [####------] done/total unit  rate unit/s  ETA  item`` on one redrawn line."""

    def __init__(
        self,
        label: str,
        *,
        unit: str = "files",
        stream: TextIO | None = None,
        force: bool = False,
    ) -> None:
        self.label = label
        self.unit = unit
        self.stream = stream or sys.stderr
        from gno_trio.cli.render import quiet

        self.enabled = not quiet() and (force or self.stream.isatty())
        self._last_draw = 0.0
        self._drawn = False
        self._samples: collections.deque[tuple[float, int]] = collections.deque()

    def _pace(self, now: float, done: int, total: int) -> str:
        """``12.5 files/s, ETA 1m10s`` once there is a second of history, else ``""``."""
        samples = self._samples
        if samples and done < samples[0][1]:  # a new phase counts from zero
            samples.clear()
        if not samples or done > samples[-1][1]:  # a step back (parallel work) is no sample
            samples.append((now, done))
        done = samples[-1][1]
        while len(samples) > 2 and now - samples[1][0] >= RATE_WINDOW_S:
            samples.popleft()
        since, then = samples[0]
        if now - since < _MIN_RATE_S:
            return ""
        rate = (done - then) / (now - since)
        if rate <= 0:
            return f"0 {self.unit}/s"
        shown = f"{rate:.1f}" if rate < 100 else f"{rate:.0f}"
        left = f", ETA {duration((total - done) / rate)}" if done < total else ""
        return f"{shown} {self.unit}/s{left}"

    def update(self, done: int, total: int, item: str = "") -> None:
        if not self.enabled or total <= 0:
            return
        now = time.monotonic()
        pace = self._pace(now, done, total)
        if done < total and now - self._last_draw < 0.1:
            return
        self._last_draw = now
        width = shutil.get_terminal_size((80, 20)).columns
        bar_width = max(10, min(30, width - 80))
        filled = int(bar_width * done / total)
        bar = "#" * filled + "-" * (bar_width - filled)
        pace = f"  {pace}" if pace else ""
        text = f"\r{self.label} [{bar}] {done}/{total} {self.unit}{pace}  {item}".rstrip()
        if len(text) > width:
            text = text[: width - 1]
        self.stream.write(text.ljust(width - 1))
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
