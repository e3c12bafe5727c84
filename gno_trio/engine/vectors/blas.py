"""How many threads numpy's BLAS may use: one.

Searches and query embeddings are products of one vector with a matrix: a
second BLAS thread only adds hand-over cost, and on a busy machine
OpenBLAS's spinning threads made a 10,000-row search 30 ms instead of 2.
So the process-wide BLAS pool is set to one thread on first use (through
threadpoolctl, which finds the BLAS library numpy loaded). The embed job
uses more cores by splitting a batch over worker threads
(``GNO_EMBED_THREADS``), each running BLAS on one thread.
"""

from __future__ import annotations

import threading

from threadpoolctl import threadpool_limits

_lock = threading.Lock()
_done = False


def single_threaded() -> None:
    """Limit BLAS to one thread for the rest of the process (idempotent)."""
    global _done
    if _done:
        return
    with _lock:
        if not _done:
            threadpool_limits(limits=1, user_api="blas")
            _done = True
