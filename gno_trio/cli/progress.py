"""A terminal progress bar for long indexing runs, drawn on stderr.

Drawn only when stderr is a terminal (or when forced), and redrawn at most
ten times a second so that a large folder does not spend its time printing.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import TextIO


class ProgressBar:
    def __init__(self, label: str, *, stream: TextIO | None = None, force: bool = False) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        from gno_trio.cli.render import quiet

        self.enabled = not quiet() and (force or self.stream.isatty())
        self._last_draw = 0.0
        self._drawn = False

    def update(self, done: int, total: int, item: str = "") -> None:
        if not self.enabled or total <= 0:
            return
        now = time.monotonic()
        if done < total and now - self._last_draw < 0.1:
            return
        self._last_draw = now
        width = shutil.get_terminal_size((80, 20)).columns
        bar_width = max(10, min(30, width - 60))
        filled = int(bar_width * done / total)
        bar = "#" * filled + "-" * (bar_width - filled)
        text = f"\r{self.label} [{bar}] {done}/{total} {item}"
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
