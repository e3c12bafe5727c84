"""A serving process readies semantic search as it starts, when the index holds vectors.

``gno-trio mcp``, ``serve`` and ``daemon`` start one of these beside their
first request. In a thread of its own it asks (one statement, no numpy)
whether the index holds any vectors; when it does not, nothing else happens:
the model and numpy stay unloaded, and a process serving lexical calls only
stays small. When it does, it reads the configured model's vectors into
memory and loads the model, the two things the first semantic call would
otherwise wait for.

Requests are answered meanwhile: a lexical call needs neither; a semantic
call that arrives during the load waits for it (both the model load and
the vectors' read are serialised behind their own locks, so the call
simply finds them done), and is never refused for it. A failure is logged
and left to the semantic call, which meets it again and says why.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Final

from gno_trio.errors import GnoError

if TYPE_CHECKING:
    from gno_trio.engine.kernel import EngineKernel

logger = logging.getLogger("gno_trio.engine.vectors.warmup")

STARTING: Final = "starting"
NO_VECTORS: Final = "no-vectors"
LOADING: Final = "loading"
READY: Final = "ready"
FAILED: Final = "failed"
SETTLED: Final = frozenset((NO_VECTORS, READY, FAILED))


class SemanticWarmup:
    """The one background load of a serving engine (see the module docstring)."""

    def __init__(self, engine: EngineKernel) -> None:
        self._engine = engine
        self._state = STARTING
        self._settled = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gno-semantic-warmup", daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def state(self) -> str:
        """One of ``starting``, ``no-vectors``, ``loading``, ``ready``, ``failed``."""
        return self._state

    def wait(self, timeout: float) -> str:
        """The state once settled (no vectors, ready or failed), or as it is after ``timeout``."""
        self._settled.wait(timeout)
        return self._state

    def _run(self) -> None:
        try:
            self._state = self._load()
        except GnoError as error:
            logger.warning("semantic search not readied: %s: %s", error.code, error.message)
            self._state = FAILED
        except Exception:  # an engine closed under it, a damaged install: the call will say
            logger.info("semantic search not readied", exc_info=True)
            self._state = FAILED
        finally:
            self._settled.set()

    def _load(self) -> str:
        engine = self._engine
        with engine.connection() as conn:
            if not engine.stores.vectors(conn).has_any():
                logger.info("no vectors in the index: the embedding model is not loaded")
                return NO_VECTORS
            self._state = LOADING
            from gno_trio.engine.vectors.available import stored_vectors
            from gno_trio.engine.vectors.models import configured_backend

            backend = configured_backend(engine.config)
            try:
                stored_vectors(conn, backend)
            except GnoError as error:  # vectors of another model only
                logger.info("semantic search not readied: %s", error.message)
                return NO_VECTORS
        load = getattr(backend, "load", None)
        if load is not None:  # an endpoint has nothing to load
            load()
        engine.rest()  # the pages the vectors were read through are not needed to search them
        logger.info("semantic search ready: %s loaded", backend.identity.uri)
        return READY


__all__ = ["FAILED", "LOADING", "NO_VECTORS", "READY", "STARTING", "SemanticWarmup"]
