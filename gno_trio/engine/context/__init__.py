"""Context Capsules: budgeted, deterministic, extractive evidence for one goal.

``compile_capsule`` turns a :class:`ContextRequest` into a closed
``context-capsule-v1`` object; ``agent_projection_text`` renders the compact
``gno-context-agent-v1`` view a model reads. Everything runs without models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from gno_trio.engine.lazy import Homes, lazy_exports

if TYPE_CHECKING:
    from gno_trio.engine.canonical import canonical_json
    from gno_trio.engine.context.codes import CONTEXT_ERROR_CODES, public_code
    from gno_trio.engine.context.compile import compile_capsule
    from gno_trio.engine.context.projection import (
        PROJECTION_VERSION,
        agent_projection,
        agent_projection_text,
    )
    from gno_trio.engine.context.request import ContextRequest


_HOMES: Final[Homes] = {
    "CONTEXT_ERROR_CODES": ("gno_trio.engine.context.codes", "CONTEXT_ERROR_CODES"),
    "PROJECTION_VERSION": ("gno_trio.engine.context.projection", "PROJECTION_VERSION"),
    "ContextRequest": ("gno_trio.engine.context.request", "ContextRequest"),
    "agent_projection": ("gno_trio.engine.context.projection", "agent_projection"),
    "agent_projection_text": ("gno_trio.engine.context.projection", "agent_projection_text"),
    "canonical_json": ("gno_trio.engine.canonical", "canonical_json"),
    "compile_capsule": ("gno_trio.engine.context.compile", "compile_capsule"),
    "public_code": ("gno_trio.engine.context.codes", "public_code"),
}
"""Each name's home: a process that only needs the Context face loads none of the compiler."""

__getattr__, __dir__ = lazy_exports(__name__, _HOMES)

__all__ = [
    "CONTEXT_ERROR_CODES",
    "PROJECTION_VERSION",
    "ContextRequest",
    "agent_projection",
    "agent_projection_text",
    "canonical_json",
    "compile_capsule",
    "public_code",
]
