"""Engine requests from flat keywords, as the tests write them.

``flat_search(query="x", collection="notes", tags_any=["a"])`` puts each
scope keyword into the request's :class:`~gno_trio.engine.Scope` (a lone
``collection`` becomes ``collections``) and leaves the rest to the request.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gno_trio.engine import Scope, SearchRequest

SCOPE_FIELDS = frozenset(field.name for field in dataclasses.fields(Scope))


def split_scope(options: dict[str, Any]) -> tuple[Scope, dict[str, Any]]:
    """The scope keywords of ``options`` as a Scope, and the others."""
    rest = dict(options)
    if "collection" in rest:
        collection = rest.pop("collection")
        rest["collections"] = () if collection is None else (collection,)
    scoped = {key: rest.pop(key) for key in SCOPE_FIELDS & rest.keys()}
    return Scope(**scoped), rest


def flat_search(**options: Any) -> SearchRequest:
    scope, rest = split_scope(options)
    return SearchRequest(scope=scope, **rest)
