"""Change subscriptions in both eras, sans-IO: what a client listens to, and what it hears.

Offered only when the server is started with subscriptions switched on;
otherwise ``resources/subscribe``, ``resources/unsubscribe`` and
``subscriptions/listen`` stay unknown methods (``-32601``), as they always
were. A 2025-11-25 client subscribes to document
URIs (``gno://{collection}/{path}``); a change journal entry naming one of
them becomes ``notifications/resources/updated``, and entries that add or
remove documents become one ``notifications/resources/list_changed`` (every
listener hears that one: the resource list is everybody's).

A 2026-07-28 client opens a ``subscriptions/listen`` stream with a filter
(:class:`ListenFilter`); the server acknowledges the part it honours
(``resourcesListChanged`` and ``gno://`` ``resourceSubscriptions``; tools and
prompts never change here) before anything else, stamps the listen request's
id on every notification, and ends the stream with a ``complete`` result.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any, Final, Protocol

from gno_trio.protocol.errors import INVALID_REQUEST, ProtocolError, invalid_params

RESOURCES_SUBSCRIBE: Final = "resources/subscribe"
RESOURCES_UNSUBSCRIBE: Final = "resources/unsubscribe"
LEGACY_SUBSCRIPTION_METHODS: Final = frozenset({RESOURCES_SUBSCRIBE, RESOURCES_UNSUBSCRIBE})
RESOURCE_UPDATED: Final = "notifications/resources/updated"
RESOURCE_LIST_CHANGED: Final = "notifications/resources/list_changed"
SUBSCRIPTIONS_LISTEN: Final = "subscriptions/listen"
SUBSCRIPTIONS_ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
SUBSCRIPTION_ID_KEY: Final = "io.modelcontextprotocol/subscriptionId"

MAX_SUBSCRIPTIONS: Final = 1024
"""Document URIs one connection or session may listen to at once."""
MAX_LISTENS: Final = 16
"""``subscriptions/listen`` streams one caller (a stdio connection, an HTTP identity) may hold."""
LISTEN_LIFETIME_SECONDS: Final = 3600.0
"""How long one listen stream lives before the server completes it (the client re-listens)."""
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


def too_many_listens() -> ProtocolError:
    """The refusal of one ``subscriptions/listen`` beyond :data:`MAX_LISTENS`."""
    return ProtocolError(
        INVALID_REQUEST,
        f"At most {MAX_LISTENS} subscriptions/listen streams may be open at once",
        {"maxListens": MAX_LISTENS},
    )


class SubscriptionBook(Protocol):
    """Where one listener's subscribed URIs are kept.

    In memory for a stdio connection or a single-process gateway; in the
    shared session registry when several worker processes serve one session
    (a subscription made through one worker must be heard on another's GET
    stream). ``add`` enforces the cap where the set lives, so concurrent
    subscribers never overshoot it.
    """

    def add(self, uri: str, limit: int) -> bool:
        """Keep ``uri`` (already kept is fine); False, keeping nothing, when ``limit`` are held."""
        ...

    def discard(self, uri: str) -> None: ...

    def uris(self) -> frozenset[str]: ...


class MemoryBook:
    """A :class:`SubscriptionBook` held by this process alone (any thread may call it)."""

    def __init__(self) -> None:
        self._uris: set[str] = set()
        self._lock = threading.Lock()

    def add(self, uri: str, limit: int) -> bool:
        with self._lock:
            if uri not in self._uris and len(self._uris) >= limit:
                return False
            self._uris.add(uri)
            return True

    def discard(self, uri: str) -> None:
        with self._lock:
            self._uris.discard(uri)

    def uris(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._uris)


class ResourceSubscriptions:
    """The document URIs one connection (stdio) or session (HTTP) listens to."""

    def __init__(
        self, limit: int = MAX_SUBSCRIPTIONS, book: SubscriptionBook | None = None
    ) -> None:
        self._limit = limit
        self._book: SubscriptionBook = book if book is not None else MemoryBook()

    def __len__(self) -> int:
        return len(self._book.uris())

    def __contains__(self, uri: object) -> bool:
        return uri in self._book.uris()

    def subscribe(self, params: Mapping[str, Any] | None) -> None:
        """Add the request's URI; subscribing twice is one subscription.

        A URI beyond the cap is refused (``-32602``) and changes nothing.
        """
        uri = _uri_of(params, RESOURCES_SUBSCRIBE)
        if not self._book.add(uri, self._limit):
            raise invalid_params(
                f"At most {self._limit} resources may be subscribed at once; unsubscribe first",
                {"maxSubscriptions": self._limit},
            )

    def unsubscribe(self, params: Mapping[str, Any] | None) -> None:
        """Drop the request's URI (one never subscribed is not an error)."""
        self._book.discard(_uri_of(params, RESOURCES_UNSUBSCRIBE))

    @property
    def uris(self) -> list[str]:
        """The subscribed URIs, sorted."""
        return sorted(self._book.uris())

    def notices(
        self,
        entries: Iterable[Mapping[str, Any]],
        *,
        list_changes: bool = True,
        subscribed: frozenset[str] | None = None,
    ) -> list[Notice]:
        """The notifications ``entries`` (``changes@1.0`` journal entries) mean for this listener.

        One ``updated`` per subscribed URI (the old and the new URI of a
        rename both count), then at most one ``list_changed`` (unless
        ``list_changes`` is off). ``subscribed``: the URIs, when the caller
        already read them from a book that blocks.
        """
        if subscribed is None:  # read once per batch: it may live in another process
            subscribed = self._book.uris()
        updated: list[str] = []
        list_changed = False
        for entry in entries:
            if entry.get("kind") in _LIST_KINDS:
                list_changed = True
            for side in ("previous", "current"):
                snapshot = entry.get(side)
                uri = snapshot.get("uri") if isinstance(snapshot, Mapping) else None
                if isinstance(uri, str) and uri in subscribed and uri not in updated:
                    updated.append(uri)
        notices: list[Notice] = [(RESOURCE_UPDATED, {"uri": uri}) for uri in updated]
        if list_changed and list_changes:
            notices.append((RESOURCE_LIST_CHANGED, {}))
        return notices


class ListenFilter:
    """One ``subscriptions/listen`` stream's honoured filter, and its notifications."""

    def __init__(self, subscription_id: str | int, params: Mapping[str, Any] | None) -> None:
        """Read the request's ``notifications`` filter; ``-32602`` when malformed.

        Unknown or unsupported filter fields are left out of the honoured set,
        as the pattern asks; URIs outside ``gno://`` are not honoured.
        """
        wanted = params.get("notifications", {}) if params is not None else {}
        if not isinstance(wanted, Mapping):
            raise invalid_params("subscriptions/listen: notifications must be an object")
        lists = wanted.get("resourcesListChanged", False)
        uris = wanted.get("resourceSubscriptions", [])
        if not isinstance(lists, bool):
            raise invalid_params("subscriptions/listen: resourcesListChanged must be a boolean")
        if not isinstance(uris, list) or not all(isinstance(uri, str) for uri in uris):
            raise invalid_params(
                "subscriptions/listen: resourceSubscriptions must be a list of strings"
            )
        self.subscription_id = subscription_id
        self.list_changes = lists
        self.resources = ResourceSubscriptions()
        for uri in uris:
            if uri.startswith(DOCUMENT_SCHEME):
                self.resources.subscribe({"uri": uri})

    def _meta(self) -> dict[str, Any]:
        return {SUBSCRIPTION_ID_KEY: self.subscription_id}

    def acknowledgement(self) -> Notice:
        """The first message of the stream: what the server agreed to deliver."""
        honoured: dict[str, Any] = {}
        if self.list_changes:
            honoured["resourcesListChanged"] = True
        if len(self.resources):
            honoured["resourceSubscriptions"] = self.resources.uris
        return SUBSCRIPTIONS_ACKNOWLEDGED, {"_meta": self._meta(), "notifications": honoured}

    def notices(self, entries: Iterable[Mapping[str, Any]]) -> list[Notice]:
        """What ``entries`` mean for this stream, each stamped with its subscription id."""
        return [
            (method, {"_meta": self._meta(), **params})
            for method, params in self.resources.notices(entries, list_changes=self.list_changes)
        ]

    def completion(self) -> dict[str, Any]:
        """The result that ends the stream gracefully (shutdown, or its lifetime is up)."""
        return {"resultType": "complete", "_meta": self._meta()}


__all__ = [
    "LEGACY_SUBSCRIPTION_METHODS",
    "LISTEN_LIFETIME_SECONDS",
    "MAX_LISTENS",
    "MAX_SUBSCRIPTIONS",
    "RESOURCES_SUBSCRIBE",
    "RESOURCES_UNSUBSCRIBE",
    "RESOURCE_LIST_CHANGED",
    "RESOURCE_UPDATED",
    "SUBSCRIPTIONS_ACKNOWLEDGED",
    "SUBSCRIPTIONS_LISTEN",
    "SUBSCRIPTION_ID_KEY",
    "ListenFilter",
    "MemoryBook",
    "ResourceSubscriptions",
    "SubscriptionBook",
    "too_many_listens",
]
