"""The resident server's background embedder: new chunks get vectors without anyone asking.

``serve`` and ``daemon`` start one of these. A daemon thread looks every
:data:`WAKE_SECONDS` whether any chunk was added since it last looked (one
indexed lookup, so a ``gno-trio update`` run from another terminal is
noticed within a second or two), and counts the whole embedding backlog when
something was, or every :data:`POLL_SECONDS` anyway (a model changed in
``index.yml``, vectors cleared). When chunks are waiting it runs
the ordinary embed phase (batch-wise, committed batch by batch), asking
between batches whether the server is shutting down. Like every writer it
takes the write lease, but only around each batch's write (milliseconds),
so a CLI ``update``, a capture or an MCP write tool waits at most for one
batch's write, never for the backlog. When another writer holds the lease
the embedder waits for it (patiently: it never gives up with ``LOCKED``)
and writes its batch afterwards. Requests are served by the other threads
(numpy releases the interpreter lock while it multiplies). A model that
cannot run or an endpoint that is down is logged and retried after
:data:`RETRY_SECONDS`; nothing of it reaches a request.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from gno_trio.errors import GnoError

if TYPE_CHECKING:
    from gno_trio.engine.vectors.face import VectorsFace

logger = logging.getLogger("gno_trio.engine.vectors.background")

WAKE_SECONDS: Final = 1.0
POLL_SECONDS: Final = 15.0
RETRY_SECONDS: Final = 300.0
OS_RETRY_SECONDS: Final = 30.0
"""A short retry for a passing shortage of the machine (EMFILE, ENOSPC, ENOMEM)."""
STOP_WAIT_SECONDS: Final = 2.0
"""How long shutdown waits for the batch in flight; an abandoned batch is never written."""


@dataclass(frozen=True, slots=True)
class EmbedderState:
    """What ``status`` says of the background embedder (GNO's ``background.embedding``)."""

    running: bool
    last_run_at: int | None
    """Milliseconds since the epoch when the last run ended."""
    next_run_at: int | None
    last_embedded: int | None
    last_errors: int | None
    last_error: str | None


class BackgroundEmbedder:
    """Embeds the backlog of an engine in a thread until :meth:`close`."""

    def __init__(
        self,
        engine: VectorsFace,
        *,
        poll_seconds: float = POLL_SECONDS,
        wake_seconds: float = WAKE_SECONDS,
    ) -> None:
        self._engine = engine
        self._poll = poll_seconds
        self._wake = min(wake_seconds, poll_seconds)
        self._stop = threading.Event()
        self._bell = threading.Event()  # rung by nudge() and close(): look now, not at the wake
        self._thread: threading.Thread | None = None
        self._running = False
        self._last_run_at: int | None = None
        self._next_check = 0.0
        self._last_result: tuple[int, int] | None = None
        self.runs = 0
        self.embedded = 0
        self.last_error: str | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._loop, name="gno-background-embed", daemon=True
            )
            self._thread.start()

    def nudge(self) -> None:
        """New chunks were just written (a watched folder synced): look now, not at the wake."""
        self._bell.set()

    def state(self) -> EmbedderState:
        alive = self._thread is not None and self._thread.is_alive()
        wall_offset = time.time() - time.monotonic()
        return EmbedderState(
            running=self._running,
            last_run_at=self._last_run_at,
            next_run_at=int((self._next_check + wall_offset) * 1000) if alive else None,
            last_embedded=self._last_result[0] if self._last_result else None,
            last_errors=self._last_result[1] if self._last_result else None,
            last_error=self.last_error,
        )

    def _waiting(self) -> int:
        return sum(waiting for _, waiting in self._engine.counts().values())

    def _run_once(self) -> float:
        """One look at the backlog (and a run when it is not empty); the next full look's delay."""
        if self._waiting() == 0:
            return self._poll
        self._running = True
        try:
            run = self._engine.embed(should_stop=self._stop.is_set, patient=True)
        finally:
            self._running = False
            self._last_run_at = int(time.time() * 1000)
        self.runs += 1
        self.embedded += run.embedded
        self._last_result = (run.embedded, run.errors)
        self.last_error = run.last_error
        if run.embedded:
            logger.info("background embedding: %d chunks embedded", run.embedded)
        return self._poll

    def _loop(self) -> None:
        stamp: int | None = None
        self._next_check = time.monotonic()
        while not self._stop.is_set():
            try:
                current = self._engine.content_stamp()
                if current != stamp or time.monotonic() >= self._next_check:
                    stamp = current
                    delay = self._run_once()
                    self._next_check = time.monotonic() + delay
            except GnoError as error:
                if self._stop.is_set():  # shutting down while waiting for the lease
                    return
                self.last_error = f"{error.code}: {error.message}"
                logger.warning("background embedding paused: %s", self.last_error)
                self._next_check = time.monotonic() + RETRY_SECONDS
                stamp = None if error.code == "LOCKED" else self._safe_stamp()
            except (OSError, ImportError) as error:
                # Descriptors or disk short for a while: no traceback. A module the loop
                # imports on first use fails as ImportError when its shared library
                # cannot be opened (EMFILE), so that is the same passing shortage.
                reason = error.strerror if isinstance(error, OSError) else None
                self.last_error = f"{type(error).__name__}: {reason or error}"
                logger.warning("background embedding paused: %s", self.last_error)
                self._next_check = time.monotonic() + OS_RETRY_SECONDS
                stamp = None
            except Exception:  # the loop must outlive any one failure
                logger.exception("background embedding failed")
                self._next_check = time.monotonic() + RETRY_SECONDS
                stamp = self._safe_stamp()
            self._bell.wait(self._wake)
            self._bell.clear()

    def _safe_stamp(self) -> int | None:
        """The stamp now, so a failed run is retried on new chunks or after RETRY_SECONDS."""
        try:
            return self._engine.content_stamp()
        except Exception:
            return None

    def close(self, timeout: float = STOP_WAIT_SECONDS) -> bool:
        """Ask the thread to stop and wait briefly; returns whether it has ended.

        Shutdown never waits for a model load or a long batch: the thread is
        a daemon, and a batch is only written after it is embedded, in one
        transaction, so one abandoned mid-way leaves nothing behind.
        """
        self._stop.set()
        self._bell.set()
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()
