"""The resident server's background embedder: new chunks get vectors without anyone asking.

``serve`` and ``daemon`` start one of these. A daemon thread looks at the
embedding backlog every :data:`POLL_SECONDS`; when chunks are waiting it runs
the ordinary embed phase (batch-wise, committed batch by batch), asking
between batches whether the server is shutting down. It takes no write
lease: its transactions are one batch long, so syncs, captures and MCP
write tools go on while it works, and requests are served by the other
threads (numpy releases the interpreter lock while it multiplies). A model
that cannot run or an endpoint that is down is logged and retried after
:data:`RETRY_SECONDS`; nothing of it reaches a request.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Final

from gno_trio.errors import GnoError

if TYPE_CHECKING:
    from gno_trio.engine.vectors.face import VectorsFace

logger = logging.getLogger("gno_trio.engine.vectors.background")

POLL_SECONDS: Final = 15.0
RETRY_SECONDS: Final = 300.0
STOP_WAIT_SECONDS: Final = 2.0
"""How long shutdown waits for the batch in flight; an abandoned batch is never written."""


class BackgroundEmbedder:
    """Embeds the backlog of an engine in a thread until :meth:`close`."""

    def __init__(self, engine: VectorsFace, *, poll_seconds: float = POLL_SECONDS) -> None:
        self._engine = engine
        self._poll = poll_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.runs = 0
        self.embedded = 0
        self.last_error: str | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._loop, name="gno-background-embed", daemon=True
            )
            self._thread.start()

    def _waiting(self) -> int:
        return sum(waiting for _, waiting in self._engine.embedding_counts().values())

    def _loop(self) -> None:
        delay = 0.0
        while not self._stop.wait(delay):
            delay = self._poll
            try:
                if self._waiting() == 0:
                    continue
                run = self._engine.embed(should_stop=self._stop.is_set)
            except GnoError as error:
                self.last_error = f"{error.code}: {error.message}"
                logger.warning("background embedding paused: %s", self.last_error)
                delay = RETRY_SECONDS
                continue
            except Exception:  # the loop must outlive any one failure
                logger.exception("background embedding failed")
                delay = RETRY_SECONDS
                continue
            self.runs += 1
            self.embedded += run.embedded
            if run.embedded:
                logger.info("background embedding: %d chunks embedded", run.embedded)

    def close(self, timeout: float = STOP_WAIT_SECONDS) -> bool:
        """Ask the thread to stop and wait briefly; returns whether it has ended.

        Shutdown never waits for a model load or a long batch: the thread is
        a daemon, and a batch is only written after it is embedded, in one
        transaction, so one abandoned mid-way leaves nothing behind.
        """
        self._stop.set()
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()
