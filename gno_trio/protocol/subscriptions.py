"""Resource subscriptions of the 2025-11-25 era, sans-IO: what a client hears about.

Offered only when the server is started with subscriptions switched on;
otherwise ``resources/subscribe`` and ``resources/unsubscribe`` stay unknown
methods (``-32601``), as they always were. A client subscribes to document
URIs (``gno://{collection}/{path}``); a change journal entry naming one of
them becomes ``notifications/resources/updated``, and entries that add or
remove documents become one ``notifications/resources/list_changed`` (every
listener hears that one: the resource list is everybody's).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from gno_trio.protocol.errors import invalid_params

RESOURCES_SUBSCRIBE: Final = "resources/subscribe"
RESOURCES_UNSUBSCRIBE: Final = "resources/unsubscribe"
LEGACY_SUBSCRIPTION_METHODS: Final = frozenset({RESOURCES_SUBSCRIBE, RESOURCES_UNSUBSCRIBE})
RESOURCE_UPDATED: Final = "notifications/resources/updated"
RESOURCE_LIST_CHANGED: Final = "notifications/resources/list_changed"

MAX_SUBSCRIPTIONS: Final = 1024
"""Document URIs one connection or session may listen to at once."""
MAX_URI_CHARS: Final = 4096
DOCUMENT_SCHEME: Final = "gno://"

_LIST_KINDS: Final = frozenset({"create", "inactivate", "reactivate", "rename"})
"""Journal kinds that add a document to, or remove one from, the resource list."""

Notice = tuple[str, dict[str, Any]]


def _uri_of(params: Mapping[str, Any] | None, method: str) -> str:
    uri = params.get("uri") if params is not None else None
    if not isinstance(uri, str) or not uri.startswith(DOCUMENT_SCHEME):
        raise invalid_params(f"{method} needs a gno://{{collection}}/{{path}} uri")
    if len(uri) > MAX_URI_CHARS:
        raise invalid_params(f"{method}: uri is longer than {MAX_URI_CHARS} characters")
    return uri


class ResourceSubscriptions:
    """The document URIs one connection (stdio) or session (HTTP) listens to."""

    def __init__(self, limit: int = MAX_SUBSCRIPTIONS) -> None:
        self._limit = limit
        self._uris: set[str] = set()

    def __len__(self) -> int:
        return len(self._uris)

    def __contains__(self, uri: object) -> bool:
        return uri in self._uris

    def subscribe(self, params: Mapping[str, Any] | None) -> None:
        """Add the request's URI; subscribing twice is one subscription.

        A URI beyond the cap is refused (``-32602``) and changes nothing.
        """
        uri = _uri_of(params, RESOURCES_SUBSCRIBE)
        if uri not in self._uris and len(self._uris) >= self._limit:
            raise invalid_params(
                f"At most {self._limit} resources may be subscribed at once; unsubscribe first",
                {"maxSubscriptions": self._limit},
            )
        self._uris.add(uri)

    def unsubscribe(self, params: Mapping[str, Any] | None) -> None:
        """Drop the request's URI (one never subscribed is not an error)."""
        self._uris.discard(_uri_of(params, RESOURCES_UNSUBSCRIBE))

    def notices(self, entries: Iterable[Mapping[str, Any]]) -> list[Notice]:
        """The notifications ``entries`` (``changes@1.0`` journal entries) mean for this listener.

        One ``updated`` per subscribed URI (the old and the new URI of a
        rename both count), then at most one ``list_changed``.
        """
        updated: list[str] = []
        list_changed = False
        for entry in entries:
            if entry.get("kind") in _LIST_KINDS:
                list_changed = True
            for side in ("previous", "current"):
                snapshot = entry.get(side)
                uri = snapshot.get("uri") if isinstance(snapshot, Mapping) else None
                if isinstance(uri, str) and uri in self._uris and uri not in updated:
                    updated.append(uri)
        notices: list[Notice] = [(RESOURCE_UPDATED, {"uri": uri}) for uri in updated]
        if list_changed:
            notices.append((RESOURCE_LIST_CHANGED, {}))
        return notices


__all__ = [
    "LEGACY_SUBSCRIPTION_METHODS",
    "MAX_SUBSCRIPTIONS",
    "RESOURCES_SUBSCRIBE",
    "RESOURCES_UNSUBSCRIBE",
    "RESOURCE_LIST_CHANGED",
    "RESOURCE_UPDATED",
    "ResourceSubscriptions",
]
