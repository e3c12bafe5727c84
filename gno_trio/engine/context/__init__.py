"""Context Capsules: budgeted, deterministic, extractive evidence for one goal.

``compile_capsule`` turns a :class:`ContextRequest` into a closed
``context-capsule-v1`` object; ``agent_projection_text`` renders the compact
``gno-context-agent-v1`` view a model reads. Everything runs without models.
"""

from __future__ import annotations

from gno_trio.engine.canonical import canonical_json
from gno_trio.engine.context.codes import CONTEXT_ERROR_CODES, public_code
from gno_trio.engine.context.compile import compile_capsule
from gno_trio.engine.context.markdown import capsule_markdown, verification_markdown
from gno_trio.engine.context.projection import (
    PROJECTION_VERSION,
    agent_projection,
    agent_projection_text,
)
from gno_trio.engine.context.request import ContextRequest

__all__ = [
    "CONTEXT_ERROR_CODES",
    "PROJECTION_VERSION",
    "ContextRequest",
    "agent_projection",
    "agent_projection_text",
    "canonical_json",
    "capsule_markdown",
    "compile_capsule",
    "public_code",
    "verification_markdown",
]
