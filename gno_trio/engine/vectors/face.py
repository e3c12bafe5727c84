"""``engine.vectors``: the embed phase, clearing vectors, model facts.

The numpy-backed machinery is imported on first use, so commands that never
touch vectors (a keyword search, a ``get``) do not pay for loading numpy.

Every write here runs under the one write lease (issue 10's rule). The
embed phase takes it once per batch, only around the batch's write, so a
CLI ``update`` or an MCP write waits for at most one batch's write, never
for the backlog; a caller that already holds the lease (an MCP job holds it
for the whole job) hands its :class:`HeldLease` down instead.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final

from gno_trio.engine.kernel import EngineKernel
from gno_trio.engine.store.lease import HeldLease
from gno_trio.errors import GnoError

if TYPE_CHECKING:
    from gno_trio.engine.vectors.embedder import EmbeddingBackend
    from gno_trio.engine.vectors.embedding import EmbedProgress, WriteGuard
    from gno_trio.engine.vectors.service import EmbedRun
    from gno_trio.engine.vectors.warmup import SemanticWarmup

PATIENT_STEP_SECONDS: Final = 1.0
"""A patient writer (the background embedder) asks for the lease this long at a time."""


class VectorsFace:
    """Embedding: the embed phase, clearing a collection's vectors, model facts."""

    def __init__(self, kernel: EngineKernel) -> None:
        self._kernel = kernel
        self._warmup: SemanticWarmup | None = None

    def ready_semantic_search(self) -> None:
        """Start readying semantic search in the background, if the index holds vectors.

        Serving processes call it as they start (see :mod:`.warmup`): the
        model and the vectors are loaded before the first semantic call
        needs them, and an index without vectors loads neither.
        """
        if self._warmup is None:
            from gno_trio.engine.vectors.warmup import SemanticWarmup

            self._warmup = SemanticWarmup(self._kernel)
            self._warmup.start()

    def semantic_readiness(self, timeout: float = 0.0) -> str | None:
        """Where :meth:`ready_semantic_search` stands, waiting up to ``timeout`` for it to settle.

        ``None`` when it was never started; else ``starting``, ``loading``,
        ``no-vectors``, ``ready`` or ``failed``.
        """
        return None if self._warmup is None else self._warmup.wait(timeout)

    def model_loads(self) -> dict[str, int]:
        """This process's model loads, as ``resident-status@1.0`` counts them."""
        from gno_trio.engine.vectors import loads

        return loads.status()

    def backend(
        self, collection: str | None = None, *, model: str | None = None
    ) -> EmbeddingBackend:
        """The embedder for ``collection`` (or the index): ``model`` or the configured one.

        ``MODEL_NOT_FOUND`` when the model cannot run here.
        """
        from gno_trio.engine.vectors.service import chosen_backend

        return chosen_backend(self._kernel.config, collection, model)

    @contextlib.contextmanager
    def _batch_lease(
        self,
        lease: HeldLease | None,
        *,
        wait_seconds: float | None,
        should_stop: Callable[[], bool] | None,
        patient: bool,
    ) -> Iterator[HeldLease]:
        """The write lease for one batch's write: ``lease`` when held, else taken now.

        A ``patient`` writer never gives up while another writer holds the
        lease: it keeps asking (``should_stop`` ends the wait, as ``LOCKED``).
        """
        if lease is not None or not patient:
            with self._kernel.writing(
                lease, wait_seconds=wait_seconds, should_stop=should_stop
            ) as held:
                yield held
            return
        with contextlib.ExitStack() as stack:
            while True:
                try:
                    held = stack.enter_context(
                        self._kernel.lease(
                            wait_seconds=PATIENT_STEP_SECONDS, should_stop=should_stop
                        )
                    )
                except GnoError as error:
                    if error.code != "LOCKED" or (should_stop is not None and should_stop()):
                        raise
                    continue
                break
            yield held

    def _write_guard(
        self,
        lease: HeldLease | None,
        wait_seconds: float | None,
        should_stop: Callable[[], bool] | None,
        patient: bool = False,
    ) -> WriteGuard:
        def guard() -> contextlib.AbstractContextManager[object]:
            return self._batch_lease(
                lease, wait_seconds=wait_seconds, should_stop=should_stop, patient=patient
            )

        return guard

    def embed(
        self,
        names: Sequence[str] | None = None,
        *,
        batch_size: int | None = None,
        force: bool = False,
        model: str | None = None,
        should_stop: Callable[[], bool] | None = None,
        progress: EmbedProgress | None = None,
        lease: HeldLease | None = None,
        lease_wait_seconds: float | None = None,
        patient: bool = False,
    ) -> EmbedRun:
        """Give every chunk of the collections (all by default) a vector.

        Batch by batch, resumable, stopping between batches when ``should_stop``
        says so; see :func:`gno_trio.engine.vectors.service.embed`. ``model``
        overrides the configured model URI for this run (``embed --model``).
        Each batch's write takes the write lease (waiting ``lease_wait_seconds``,
        then ``LOCKED``; forever with ``patient``) unless ``lease`` is held.
        """
        from gno_trio.engine.vectors.embedding import DEFAULT_BATCH_SIZE
        from gno_trio.engine.vectors.service import embed

        guard = self._write_guard(lease, lease_wait_seconds, should_stop, patient)
        with self._kernel.connection() as c:
            return embed(
                c,
                self._kernel.config,
                names,
                batch_size=batch_size or DEFAULT_BATCH_SIZE,
                force=force,
                should_stop=should_stop,
                progress=progress,
                guard=guard,
                model_uri=model,
            )

    def content_stamp(self) -> int:
        """A number that grows whenever a chunk is added (one indexed lookup)."""
        with self._kernel.connection() as c:
            return self._kernel.stores.chunks(c).latest_id()

    def counts(self) -> dict[str, tuple[int, int]]:
        """``{collection: (embedded chunks, chunks waiting for a vector)}``."""
        from gno_trio.engine.vectors.service import backlog_by_collection

        with self._kernel.connection() as c:
            return backlog_by_collection(c, self._kernel.config)

    def clear(
        self,
        collection: str,
        *,
        mode: str = "stale",
        lease: HeldLease | None = None,
        lease_wait_seconds: float | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> dict[str, Any]:
        """Delete a collection's vectors of stale models (or ``all``), under the write lease."""
        from gno_trio.engine.vectors.service import clear

        guard = self._write_guard(lease, lease_wait_seconds, should_stop)
        with self._kernel.connection() as c:
            return clear(c, self._kernel.config, collection, mode=mode, guard=guard)

    def models(self) -> dict[str, Any]:
        """The configured model roles and whether each can run here (``models list``)."""
        from gno_trio.engine.vectors.models import models_list

        return models_list(self._kernel.config)

    def use_preset(self, preset: str, *, lease: HeldLease | None = None) -> dict[str, Any]:
        """Make ``preset`` the active model preset in ``index.yml`` (``models use``).

        The answer names the embedding model in force before and after, and
        whether embeddings must be made again (``embedChanged``).
        """
        from gno_trio.engine.vectors import presets

        before = self._kernel.config
        updated = self._kernel.update_config(
            lambda config: presets.with_preset(config, preset), lease=lease
        )
        old, new = presets.role_uri(before, "embed"), presets.role_uri(updated, "embed")
        return {
            "activePreset": presets.active_preset(updated),
            "previousPreset": presets.active_preset(before),
            "presets": presets.presets(updated),
            "embed": {"before": old, "after": new},
            "embedChanged": old != new,
        }

    def pull_models(self, roles: tuple[str, ...], *, force: bool = False) -> dict[str, Any]:
        """``models pull``: each role's model checked in place; nothing is downloaded."""
        from gno_trio.engine.vectors import presets

        return presets.pull(self._kernel.config, roles, force=force)

    def clear_models(self, roles: tuple[str, ...]) -> dict[str, Any]:
        """``models clear``: the bundled model's weight cache is deleted (see :mod:`.presets`)."""
        from gno_trio.engine.vectors import presets
        from gno_trio.engine.vectors.weightcache import models_dir

        return presets.clear(roles, str(models_dir(self._kernel.location.dirs.cache)))

    def models_path(self) -> str | None:
        """Where the bundled model's files live (``models path``)."""
        from gno_trio.engine.vectors.models import models_path

        return models_path()
