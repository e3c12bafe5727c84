"""Errors as values with a stable code, and the one table of what each code means.

Every failure the engine reports to a user carries a machine-readable ``code``
(``INVALID_INPUT``, ``NOT_FOUND`` ...) and a human message. The codes are
GNO's and travel unchanged on the wire (a tool error is
``{"error": code, "message": ...}``). What a code *means* for a surface is
decided here once: :data:`CODE_KINDS` gives each code a :class:`Kind`, and the
kind gives the CLI exit status (0 ok, 1 invalid input, 2 runtime failure,
3 no such resident process, 4 busy), the JSON-RPC treatment of a failed
``resources/read`` and the HTTP status of an HTTP-native answer. Nothing
downstream parses message text, and no surface keeps its own list of codes.
"""

from __future__ import annotations

import enum
from typing import Final


class Kind(enum.Enum):
    """What went wrong, as far as a caller's next step is concerned."""

    INVALID = ("invalid_input", 1, 400)
    """The request itself is wrong (bad name, malformed query, unknown option)."""
    NOT_FOUND = ("not_found", 1, 404)
    """The request names something that does not exist."""
    FORBIDDEN = ("forbidden", 1, 403)
    """The request is well formed but never allowed (a system folder as a root)."""
    CONFLICT = ("conflict", 2, 409)
    """The request clashes with what is on disk or in the index right now."""
    BUSY = ("busy", 4, 409)
    """Another writer holds the lease or another job runs; trying again later works."""
    NOT_RUNNING = ("not_running", 3, 404)
    """``--status``/``--stop`` found no live resident process (GNO's exit 3)."""
    RUNTIME = ("runtime", 2, 500)
    """The disk, the database or the OS failed; the request may have been fine."""
    UNAVAILABLE = ("unavailable", 2, 503)
    """A server the request needs (team mode's database) is out of reach right now; the same
    request may work when tried again, once it is back (nothing was left half done)."""

    def __init__(self, label: str, exit_code: int, http_status: int) -> None:
        self.label = label
        self.exit_code = exit_code
        self.http_status = http_status

    @property
    def is_caller_error(self) -> bool:
        """Whether the caller should change the request (rather than retry or report)."""
        return self in (Kind.INVALID, Kind.NOT_FOUND, Kind.FORBIDDEN)


_INVALID: Final = (
    "VALIDATION",
    "INVALID_INPUT",
    "INVALID_PATH",
    "INVALID_NAME",
    "CONFIG_INVALID",
    "DUPLICATE",
    "HAS_REFERENCES",
    "CONFIG_NOT_FOUND",
    "NOT_A_GIT_REPOSITORY",
    "MEMORY_BUDGET_INVALID",
    "MEMORY_COLLECTION_REQUIRED",
    "MEMORY_COLLECTION_UNMANAGED",
    "MEMORY_DECISION_INVALID",
    "MEMORY_FENCED_DERIVED",
    "MEMORY_FENCED_REPLAY",
    "MEMORY_IDENTITY_REQUIRED",
    "MEMORY_PREDECESSOR_HASH_MISMATCH",
    "MEMORY_PREDECESSOR_REQUIRED",
    "MEMORY_QUERY_REQUIRED",
    "MEMORY_RECEIPT_INVALID",
    "MEMORY_SCOPES_INVALID",
    "MEMORY_SCOPES_REQUIRED",
    "MEMORY_TEXT_REQUIRED",
    "MEMORY_TEXT_TOO_LARGE",
    # GNO's lower-case Context Capsule codes of a bad request (engine/context/codes.py)
    "invalid_input",
    "invalid_filter",
    "invalid_goal",
    "invalid_budget",
    "invalid_uri",
)
_NOT_FOUND: Final = (
    "NOT_FOUND",
    "PATH_NOT_FOUND",
    "MEMORY_COLLECTION_NOT_FOUND",
    "MEMORY_PREDECESSOR_NOT_FOUND",
)
_FORBIDDEN: Final = (
    "FORBIDDEN_ROOT",
    "WRITE_DISABLED",
    "EGRESS_DENIED",  # a collection's egress policy does not let this content go there
    "SYMLINK",  # a collection's links are never followed
    "SPECIAL_FILE",  # a FIFO, socket or device is never read as a note
)
_CONFLICT: Final = (
    "CONFLICT",
    "FILE_REPLACED",  # the file changed under the sync that was reading it
    "EGRESS_POLICY_CHANGED",  # a policy changed while the request was judged; retry
    "EMBED_DIMENSION_MISMATCH",  # the stored vectors come from another model
    "NO_UPSTREAM",  # the checked-out branch has nothing to pull from
    "RESIDENT_ACTIVE",  # another resident process owns the data directory
    "index_changed_during_compile",
)
_BUSY: Final = ("LOCKED", "JOB_CONFLICT", "MEMORY_WRITE_LEASE_BUSY", "MEMORY_SUPERSEDE_CONFLICT")
_NOT_RUNNING: Final = ("NOT_RUNNING",)
_RUNTIME: Final = (
    "RUNTIME",
    "CANCELLED",
    "READ_ERROR",
    "NOT_INITIALIZED",  # GNO: an index never initialised is a runtime failure (exit 2)
    # Conversion, model and network failures are runtime failures in GNO's exit table.
    "UNSUPPORTED_TYPE",
    "TOO_LARGE",
    "BINARY_FILE",
    "ENCRYPTED",
    "CONVERSION_FAILED",
    "MODEL_NOT_FOUND",
    "MODEL_LOAD_FAILED",
    "EMBED_ENDPOINT_FAILED",
    "VECTORS_UNAVAILABLE",
    "GENERATION_FAILED",
    "MEMORY_QUERY_FAILED",
    "MEMORY_SYNC_FAILED",
    "MEMORY_SUPERSEDE_PROJECTION_FAILED",
    "GIT_NOT_FOUND",
    "GIT_PULL_FAILED",
    "UPDATE_CMD_FAILED",
    "RESIDENT_START_FAILED",
    "GATEWAY_BIND_REFUSED",
    "GATEWAY_LISTEN_FAILED",
    "GATEWAY_TOKEN_INVALID",
    # GNO's lower-case Context Capsule codes of a failure (engine/context/codes.py)
    "no_evidence",
    "retrieval_failed",
    "runtime_error",
)

_UNAVAILABLE: Final = ("STORE_UNAVAILABLE",)  # team mode: the database dropped or is away
CODE_KINDS: Final[dict[str, Kind]] = {
    **dict.fromkeys(_INVALID, Kind.INVALID),
    **dict.fromkeys(_NOT_FOUND, Kind.NOT_FOUND),
    **dict.fromkeys(_FORBIDDEN, Kind.FORBIDDEN),
    **dict.fromkeys(_CONFLICT, Kind.CONFLICT),
    **dict.fromkeys(_BUSY, Kind.BUSY),
    **dict.fromkeys(_NOT_RUNNING, Kind.NOT_RUNNING),
    **dict.fromkeys(_RUNTIME, Kind.RUNTIME),
    **dict.fromkeys(_UNAVAILABLE, Kind.UNAVAILABLE),
}
"""Every code the product raises or reports, with its kind.

A code is added here before it is raised anywhere (a test reads the source
and fails on any code missing from this table).
"""


def kind_of(code: str) -> Kind:
    """The kind of ``code``.

    A code from outside this process (a converter child's report) that is not
    in the table is still answered as :attr:`Kind.RUNTIME`.
    """
    return CODE_KINDS.get(code, Kind.RUNTIME)


class GnoError(Exception):
    """A failure with a stable ``code`` and a message meant for people."""

    def __init__(self, code: str, message: str, *, details: dict[str, object] | None = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = details or {}

    @property
    def kind(self) -> Kind:
        return kind_of(self.code)


__all__ = ["CODE_KINDS", "GnoError", "Kind", "kind_of"]
