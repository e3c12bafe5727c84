"""Why a file was not indexed, and what a converter warns about.

Skip reasons are the codes ``status`` lists next to every file the walker saw
but the index does not hold; warning codes are GNO's
``conversion.warnings[].code`` values (a document indexed with a caveat).
Both are declared here once; converters and the runner raise or return them.
"""

from __future__ import annotations

from typing import Final, Literal

UNSUPPORTED_TYPE: Final = "UNSUPPORTED_TYPE"
"""No converter handles the file's type."""
TOO_LARGE: Final = "TOO_LARGE"
"""The source is bigger than the per-file limit (or inflates past the unpacked limit)."""
CONVERSION_FAILED: Final = "CONVERSION_FAILED"
"""The file is damaged, hostile, or the converter crashed or ran out of memory."""
CONVERSION_TIMEOUT: Final = "CONVERSION_TIMEOUT"
"""The conversion ran past its wall-time limit and was stopped."""
ENCRYPTED: Final = "ENCRYPTED"
"""The document is password-protected."""
BINARY_FILE: Final = "BINARY_FILE"
"""The file holds binary data, not text in any encoding we recognise."""
SYMLINK: Final = "SYMLINK"
"""A symbolic link: never followed, since its target may lie outside the collection."""
SPECIAL_FILE: Final = "SPECIAL_FILE"
"""A FIFO, socket or device node: reading one could block or touch a device."""
FILE_REPLACED: Final = "FILE_REPLACED"
"""Between the walk and the read the name came to hold another file; the next sync looks again."""

SKIP_REASONS: Final = frozenset(
    {
        UNSUPPORTED_TYPE,
        TOO_LARGE,
        CONVERSION_FAILED,
        CONVERSION_TIMEOUT,
        ENCRYPTED,
        BINARY_FILE,
        SYMLINK,
        SPECIAL_FILE,
        FILE_REPLACED,
    }
)

WarningCode = Literal["LOSSY", "TRUNCATED", "PARTIAL", "UNSUPPORTED_FEATURE", "LOW_CONFIDENCE"]
WARNING_CODES: Final = frozenset(
    {"LOSSY", "TRUNCATED", "PARTIAL", "UNSUPPORTED_FEATURE", "LOW_CONFIDENCE"}
)

LISTED_WARNINGS: Final = frozenset({"LOW_CONFIDENCE"})
"""Warning codes ``update`` and ``status`` list by file, not only in a result's JSON:
the text may be mojibake, which only the user can judge."""


def warning(code: WarningCode, message: str) -> str:
    """A converter warning as the converter interface carries it (``"CODE: message"``)."""
    return f"{code}: {message}"


def parse_warning(text: str) -> dict[str, str]:
    """``{code, message}`` as GNO's ``conversion.warnings`` items; untagged text is ``LOSSY``."""
    code, sep, message = text.partition(": ")
    if sep and code in WARNING_CODES:
        return {"code": code, "message": message}
    return {"code": "LOSSY", "message": text}
