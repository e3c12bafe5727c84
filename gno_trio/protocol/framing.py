"""stdio framing, sans-IO: bytes as they arrive in, whole JSON-RPC lines out.

MCP over stdio is newline-delimited JSON. A transport hands every chunk it
reads to :meth:`LineBuffer.feed` and gets back, in order, each complete line
(blank lines dropped) or :data:`OVERSIZED` where a line outgrew the limit.
Memory stays bounded whatever the client sends: once the unfinished line
passes ``max_line_bytes`` it is dropped and the rest of it, up to its
newline, is skipped as it arrives, so one oversized line costs one
``OVERSIZED`` and the next line is read normally. At end of input,
:meth:`LineBuffer.finish` gives the last line when it had no newline.
"""

from __future__ import annotations

from typing import Final, final

_NEWLINE: Final = b"\n"


@final
class LineTooLong:
    """A line longer than the limit was dropped (the transport answers ``-32600``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "OVERSIZED"


OVERSIZED: Final = LineTooLong()

Framed = bytes | LineTooLong
"""One framing event: a complete, non-blank line, or :data:`OVERSIZED`."""


class LineBuffer:
    """Splits a byte stream into lines of at most ``max_line_bytes`` (newline excluded)."""

    __slots__ = ("_buffer", "_discarding", "_scanned", "max_line_bytes")

    def __init__(self, max_line_bytes: int) -> None:
        self.max_line_bytes = max_line_bytes
        self._buffer = bytearray()
        self._scanned = 0  # bytes of the buffer known to hold no newline
        self._discarding = False  # inside an oversized line, up to its newline

    def feed(self, chunk: bytes | bytearray) -> list[Framed]:
        """The events ``chunk`` completes, in input order."""
        if self._discarding:
            newline = chunk.find(_NEWLINE)
            if newline < 0:
                return []
            self._discarding = False
            chunk = chunk[newline + 1 :]
        buffer = self._buffer
        buffer += chunk
        events: list[Framed] = []
        while True:
            newline = buffer.find(_NEWLINE, self._scanned)
            if newline < 0:
                self._scanned = len(buffer)
                break
            line = bytes(buffer[:newline])
            del buffer[: newline + 1]
            self._scanned = 0
            event = self._event(line)
            if event is not None:
                events.append(event)
        if len(buffer) > self.max_line_bytes:
            buffer.clear()
            self._scanned = 0
            self._discarding = True
            events.append(OVERSIZED)
        return events

    def finish(self) -> Framed | None:
        """The unterminated last line at end of input, if there is one worth reading."""
        line, self._buffer = bytes(self._buffer), bytearray()
        self._scanned = 0
        if not line or self._discarding:
            return None
        return self._event(line)

    def _event(self, line: bytes) -> Framed | None:
        if len(line) > self.max_line_bytes:
            return OVERSIZED
        if not line.strip():
            return None
        return line


__all__ = ["OVERSIZED", "Framed", "LineBuffer", "LineTooLong"]
