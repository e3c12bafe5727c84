"""Errors as values with a stable code.

Every failure the engine reports to a user carries a machine-readable ``code``
(``INVALID_INPUT``, ``NOT_FOUND`` ...) and a human message. The CLI maps codes
to exit statuses, the MCP layer maps them to tool errors; nothing downstream
parses message text.
"""

from __future__ import annotations

# Codes that mean "the caller asked for something invalid" (CLI exit 1);
# everything else is a runtime failure (CLI exit 2).
VALIDATION_CODES = frozenset(
    {
        "VALIDATION",
        "INVALID_INPUT",
        "INVALID_PATH",
        "INVALID_NAME",
        "INVALID_REF",
        "NOT_FOUND",
        "DUPLICATE",
        "PATH_NOT_FOUND",
        "FORBIDDEN_ROOT",
        "CONFIG_INVALID",
    }
)


class GnoError(Exception):
    """A failure with a stable ``code`` and a message meant for people."""

    def __init__(self, code: str, message: str, *, details: dict[str, object] | None = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = details or {}

    @property
    def is_validation(self) -> bool:
        return self.code in VALIDATION_CODES or self.code.startswith("MEMORY_")
