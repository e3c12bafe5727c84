"""Wire names every transport shares: HTTP header names and notification methods.

Header names are lower case, as HTTP/1.1 servers hand them over; each is
defined once here so a transport cannot drift from another.
"""

from __future__ import annotations

from typing import Final

PROTOCOL_VERSION_HEADER: Final = "mcp-protocol-version"
SESSION_HEADER: Final = "mcp-session-id"
METHOD_HEADER: Final = "mcp-method"
NAME_HEADER: Final = "mcp-name"
LAST_EVENT_ID_HEADER: Final = "last-event-id"

CANCELLED_NOTIFICATION: Final = "notifications/cancelled"
PROGRESS_NOTIFICATION: Final = "notifications/progress"

__all__ = [
    "CANCELLED_NOTIFICATION",
    "LAST_EVENT_ID_HEADER",
    "METHOD_HEADER",
    "NAME_HEADER",
    "PROGRESS_NOTIFICATION",
    "PROTOCOL_VERSION_HEADER",
    "SESSION_HEADER",
]
