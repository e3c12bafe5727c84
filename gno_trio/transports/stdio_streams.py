"""The process's own stdin and stdout as trio streams, with stdout reserved for JSON-RPC.

A stray ``print`` or a chatty library writing to fd 1 would corrupt the
protocol stream; while the stdio server runs, fd 1 and ``sys.stdout`` point
at stderr and the server writes to a private copy of the real stdout.
Kept apart from the server so the server itself only ever sees streams.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator, Iterator

import trio


@contextlib.contextmanager
def _stdout_reserved_for_protocol() -> Iterator[int]:
    """Hand out a private copy of fd 1 and point fd 1 (and ``print``) at stderr meanwhile.

    Stray writes from any library then land in the log instead of corrupting the
    JSON-RPC stream.
    """
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    saved_fd = os.dup(1)
    saved_stdout = sys.stdout
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        yield protocol_fd
    finally:
        sys.stdout = saved_stdout
        os.dup2(saved_fd, 1)
        os.close(saved_fd)


@contextlib.asynccontextmanager
async def process_streams(
    stdin: trio.abc.ReceiveStream | None, stdout: trio.abc.SendStream | None
) -> AsyncIterator[tuple[trio.abc.ReceiveStream, trio.abc.SendStream]]:
    with contextlib.ExitStack() as fds:
        if stdout is None:
            stdout = trio.lowlevel.FdStream(fds.enter_context(_stdout_reserved_for_protocol()))
            owned_out: trio.abc.SendStream | None = stdout
        else:
            owned_out = None
        owned_in: trio.abc.ReceiveStream | None = None
        if stdin is None:
            stdin = owned_in = trio.lowlevel.FdStream(os.dup(0))
        try:
            yield stdin, stdout
        finally:
            for stream in (owned_in, owned_out):
                if stream is not None:
                    with trio.CancelScope(shield=True):
                        await stream.aclose()
