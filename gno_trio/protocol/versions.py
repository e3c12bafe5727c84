"""Protocol revisions this server speaks and how a legacy handshake picks one.

Two eras share one server:

* legacy (handshake) revisions, negotiated once by ``initialize``;
* modern revisions, named by every request in its ``params._meta`` envelope.

``2026-07-28`` is never a handshake result: an ``initialize`` asking for it is a
2025-era opening and gets the newest legacy revision, like any version we do not know.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class Era(StrEnum):
    """Which protocol family a connection or request is served in."""

    LEGACY = "legacy"
    MODERN = "modern"


LATEST_LEGACY_VERSION: Final = "2025-11-25"

# Echoed back when a client asks for one of them; newest first.
LEGACY_VERSIONS: Final[tuple[str, ...]] = (
    LATEST_LEGACY_VERSION,
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
)

MODERN_VERSIONS: Final[tuple[str, ...]] = ("2026-07-28",)


def negotiate_legacy_version(requested: str) -> str:
    """The revision to answer an ``initialize`` with.

    A supported handshake revision is echoed; anything else (unknown, newer, or a
    modern revision) gets the newest legacy revision, leaving the decision to
    disconnect with the client as the lifecycle rules require.
    """
    if requested in LEGACY_VERSIONS:
        return requested
    return LATEST_LEGACY_VERSION
