"""The engine's Context Capsules: one budgeted evidence handoff per goal."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

from gno_trio.engine.context.compile import compile_capsule
from gno_trio.engine.context.request import ContextRequest
from gno_trio.engine.kernel import EngineKernel


class ContextFace(EngineKernel):
    def context(
        self,
        request: ContextRequest,
        *,
        now: datetime | None = None,
        conn: sqlite3.Connection | None = None,
    ) -> dict[str, Any]:
        """Compile the ``context-capsule-v1`` for ``request``; raises Context-coded errors."""
        with self.connection(conn) as c:
            return compile_capsule(c, self.config, self.location.index_name, request, now=now)


__all__ = ["ContextFace"]
