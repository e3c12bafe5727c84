"""Waiting on a condition a test can observe, instead of sleeping a guess.

A fixed sleep is a bet on how fast the machine is; on a loaded one the bet
is lost. Polling the observable thing with a generous bound is as fast as
the machine allows and fails only when the thing never happens.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import trio

POLL_SECONDS = 0.01


async def wait_until(holds: Callable[[], bool], timeout: float = 30.0) -> None:
    """Return once ``holds()`` is true; fail after ``timeout`` seconds of trio time."""
    with trio.fail_after(timeout):
        while not holds():
            await trio.sleep(POLL_SECONDS)


@contextmanager
def real_time_limit(seconds: float = 60.0) -> Iterator[None]:
    """Fail the block after ``seconds`` of wall-clock time.

    For a test on a mock clock that stands still (it jumps the clock itself):
    ``trio.fail_after`` counts trio time there, so it would never fire, and a
    regression would hang the test instead of failing it.
    """
    token = trio.lowlevel.current_trio_token()

    def cancel() -> None:
        with contextlib.suppress(trio.RunFinishedError):
            token.run_sync_soon(scope.cancel)

    with trio.CancelScope() as scope:
        timer = threading.Timer(seconds, cancel)
        timer.start()
        try:
            yield
        finally:
            timer.cancel()
    if scope.cancelled_caught:
        raise AssertionError(f"not done after {seconds} s of real time")
