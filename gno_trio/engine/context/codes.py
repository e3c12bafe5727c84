"""The public error taxonomy of Context Capsule compilation.

A failed compile is reported with one of these codes (GNO's Context codes),
never with a partial Capsule. Codes are lower-case, unlike the rest of the
engine's, because clients of GNO already branch on these exact strings.
"""

from __future__ import annotations

from typing import Final

INVALID_INPUT: Final = "invalid_input"
INVALID_FILTER: Final = "invalid_filter"
INVALID_GOAL: Final = "invalid_goal"
INVALID_BUDGET: Final = "invalid_budget"
INVALID_URI: Final = "invalid_uri"
NO_EVIDENCE: Final = "no_evidence"
RETRIEVAL_FAILED: Final = "retrieval_failed"
INDEX_CHANGED: Final = "index_changed_during_compile"
RUNTIME_ERROR: Final = "runtime_error"

CONTEXT_ERROR_CODES: Final = frozenset(
    {
        INVALID_INPUT,
        INVALID_FILTER,
        INVALID_GOAL,
        INVALID_BUDGET,
        INVALID_URI,
        NO_EVIDENCE,
        RETRIEVAL_FAILED,
        INDEX_CHANGED,
        RUNTIME_ERROR,
    }
)


def public_code(code: str) -> str:
    """The Context code to report for an engine error code."""
    if code in CONTEXT_ERROR_CODES:
        return code
    if code in {"INVALID_INPUT", "VALIDATION"}:
        return INVALID_INPUT
    return RUNTIME_ERROR
