"""stdio framing (``protocol.framing.LineBuffer``): the lines a byte stream holds,
whatever chunks it arrives in, within the line limit.
"""

from __future__ import annotations

import itertools
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from gno_trio.protocol.framing import OVERSIZED, Framed, LineBuffer


def framed(chunks: list[bytes], max_line_bytes: int) -> list[Framed]:
    buffer = LineBuffer(max_line_bytes)
    events = [event for chunk in chunks for event in buffer.feed(chunk)]
    last = buffer.finish()
    return [*events, last] if last is not None else events


def expected(stream: bytes, max_line_bytes: int) -> list[Framed]:
    """The rule, stated on the whole stream: split at newlines, drop blanks, flag long lines."""
    out: list[Framed] = []
    for line in stream.split(b"\n"):
        if len(line) > max_line_bytes:
            out.append(OVERSIZED)
        elif line.strip():
            out.append(line)
    return out


def split_at(stream: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(stream), *(c % (len(stream) + 1) for c in cuts)})
    return [stream[a:b] for a, b in itertools.pairwise(points)]


@settings(max_examples=400, deadline=None)
@given(
    stream=st.lists(st.sampled_from([b"a", b"{}", b" ", b"\t", b"\n", b"\r\n", b"\xff"])).map(
        b"".join
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=12),
    max_line_bytes=st.integers(min_value=0, max_value=8),
)
def test_lines_do_not_depend_on_how_the_bytes_were_chunked(
    stream: bytes, cuts: list[int], max_line_bytes: int
) -> None:
    assert framed(split_at(stream, cuts), max_line_bytes) == expected(stream, max_line_bytes)


def test_an_oversized_line_is_reported_once_and_the_next_line_is_read() -> None:
    chunks = [b'{"a":', b"1234567890", b"1234567890", b'}\n{"id":1}\n']
    assert framed(chunks, 8) == [OVERSIZED, b'{"id":1}']


def test_an_oversized_line_is_not_held_while_its_newline_is_awaited() -> None:
    buffer = LineBuffer(16)
    assert buffer.feed(b"x" * 17) == [OVERSIZED]
    for _ in range(1000):
        assert buffer.feed(b"y" * 4096) == []
    assert sys.getsizeof(buffer._buffer) < 4096  # the skipped line is not kept
    assert buffer.feed(b'\n{"id":2}\n') == [b'{"id":2}']


def test_the_last_line_needs_no_newline() -> None:
    assert framed([b'{"id":1}\n{"id":2}'], 64) == [b'{"id":1}', b'{"id":2}']
    assert framed([b"  \n\t"], 64) == []
