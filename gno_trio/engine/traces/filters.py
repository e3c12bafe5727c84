"""What a retrieval trace records as its filters: the request, under the wire names.

One rule for every surface: a ``search`` asked over MCP, over REST or on the
command line records the same filters, because they are read from the
engine request (its :class:`~gno_trio.engine.search.scope.Scope`, limit and
query options) and not from whatever arguments a surface happened to parse.
Values are kept as the caller gave them; the recorder then keeps GNO's
trace filter keys only and, in ``metadata`` mode, only their shapes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gno_trio.engine.search.hybrid import QueryOptions
from gno_trio.engine.search.request import SearchRequest

if TYPE_CHECKING:
    from gno_trio.engine.context.request import ContextRequest


def _modes(modes: Any) -> list[dict[str, str]] | None:
    return [{"mode": mode, "text": text} for mode, text in modes] or None


def retrieval_filters(request: SearchRequest, options: QueryOptions | None) -> dict[str, Any]:
    """A ranked retrieval's filters: its limit, its scope, and the query options it changed."""
    found: dict[str, Any] = {"limit": request.limit, **request.scope.given()}
    collections = found.pop("collections", None)
    if collections:
        found["collection"] = collections[0]  # a search has one
    if options is not None:
        changed = {
            "candidateLimit": options.candidate_limit,
            "queryModes": _modes(options.query_modes),
            "explain": options.explain or None,
            "noGraph": (not options.graph) or None,
            "noExpand": (options.expand is False) or None,
            "noRerank": (options.rerank is False) or None,
        }
        found.update((key, value) for key, value in changed.items() if value is not None)
    return found


def capsule_filters(request: ContextRequest) -> dict[str, Any]:
    """A Capsule's filters: its scope (``collections`` as a list) and retrieval switches."""
    found: dict[str, Any] = {**request.scope.given(), "noRerank": request.no_rerank}
    changed = {
        "limit": request.limit,
        "candidateLimit": request.candidate_limit,
        "graph": request.graph,
        "queryModes": _modes(request.query_modes),
    }
    found.update((key, value) for key, value in changed.items() if value is not None)
    return found
