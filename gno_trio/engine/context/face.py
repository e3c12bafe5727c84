"""``engine.capsules``: Context Capsules, one budgeted evidence handoff per goal."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from gno_trio.engine.kernel import EngineKernel
from gno_trio.errors import GnoError

if TYPE_CHECKING:
    from gno_trio.engine.context.request import ContextRequest


class ContextFace:
    """The Context Capsules of an opened index: compiled, and verified against it later."""

    def __init__(self, kernel: EngineKernel) -> None:
        self._kernel = kernel

    def compile(
        self,
        request: ContextRequest,
        *,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """Compile the ``context-capsule-v1`` for ``request``; raises Context-coded errors."""
        from gno_trio.engine.context.compile import compile_capsule  # loaded when first used

        with self._kernel.connection() as c:
            return compile_capsule(
                c, self._kernel.config, self._kernel.location.index_name, request, now=now
            )

    def verify(self, capsule: Mapping[str, Any]) -> dict[str, Any]:
        """``context-capsule-verification@1.0``: a saved Capsule against today's index.

        The Capsule's request is compiled again to judge ranking; when that
        compile fails, ranking is reported unavailable rather than guessed.
        Raises Context-coded errors for a malformed, non-canonical or foreign
        Capsule; nothing is changed or persisted.
        """
        from gno_trio.engine.context.compile import compile_capsule
        from gno_trio.engine.context.verify import request_of, verify_capsule

        with self._kernel.connection() as c:
            index_name = self._kernel.location.index_name
            recompiled: dict[str, Any] | None
            try:
                recompiled = compile_capsule(
                    c, self._kernel.config, index_name, request_of(capsule)
                )
            except (GnoError, KeyError, TypeError, ValueError, AttributeError):
                recompiled = None
            return verify_capsule(c, self._kernel.config, index_name, capsule, recompiled)


__all__ = ["ContextFace"]
