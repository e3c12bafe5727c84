"""The wire between the conversion runner and its worker processes.

Each message is a 4-byte big-endian length and a msgpack map (msgspec
encodes the source bytes and the mirror text without copies through
Python objects). The parent sends one ``convert`` message per job; the
worker answers with any number of ``progress`` messages and then exactly one
``ok`` or ``error``. A worker announces itself with ``ready`` after its
imports, so start-up cost is paid before the first deadline starts.
"""

from __future__ import annotations

import os
import struct
from typing import Any, Final

import msgspec

HEADER: Final = struct.Struct(">I")
MAX_FRAME: Final = 1 << 31  # a mirror of 50 M characters is at most 200 MB of UTF-8

_encoder: Final = msgspec.msgpack.Encoder()
_decoder: Final = msgspec.msgpack.Decoder()


def encode(message: dict[str, Any]) -> bytes:
    body = _encoder.encode(message)
    return HEADER.pack(len(body)) + body


def decode(body: bytes | memoryview) -> dict[str, Any]:
    message = _decoder.decode(body)
    if not isinstance(message, dict):
        raise ValueError("a frame must hold a map")
    return message


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def read_exactly(fd: int, size: int) -> bytes | None:
    """``size`` bytes from a blocking descriptor, or ``None`` at end of file."""
    parts: list[bytes] = []
    left = size
    while left:
        piece = os.read(fd, min(left, 1 << 20))
        if not piece:
            return None
        parts.append(piece)
        left -= len(piece)
    return b"".join(parts)


def read_frame(fd: int) -> dict[str, Any] | None:
    """The next message from a blocking descriptor, or ``None`` at end of file."""
    header = read_exactly(fd, HEADER.size)
    if header is None:
        return None
    (size,) = HEADER.unpack(header)
    if size > MAX_FRAME:
        raise ValueError(f"frame of {size} bytes is over the limit")
    body = read_exactly(fd, size)
    if body is None:
        return None
    return decode(body)


class FrameReader:
    """Reassembles messages from the chunks a non-blocking read returns."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        self._buffer += chunk
        messages: list[dict[str, Any]] = []
        while len(self._buffer) >= HEADER.size:
            (size,) = HEADER.unpack_from(self._buffer)
            if size > MAX_FRAME:
                raise ValueError(f"frame of {size} bytes is over the limit")
            end = HEADER.size + size
            if len(self._buffer) < end:
                break
            body = bytes(self._buffer[HEADER.size : end])
            del self._buffer[:end]
            messages.append(decode(body))
        return messages
