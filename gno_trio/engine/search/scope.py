"""``Scope``: which documents a retrieval may answer from, in one value.

Every retrieval request (``search``, ``vsearch``, ``query``, ``ask``, a
Context Capsule) nests one :class:`Scope`, and each surface builds it with
one converter (MCP arguments, CLI options), so the filter set is written
down once. A scope holds the values as the caller gave them; what they mean
(lower-casing, tag normalisation, resolving ``since=7d`` to an instant, an
unknown collection refused) is decided when a request is run
(:func:`gno_trio.engine.search.request.request_filters`), and a retrieval
trace records them as given (:mod:`gno_trio.engine.traces.filters`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final


@dataclass(frozen=True, slots=True)
class Scope:
    """A retrieval's filters as the caller gave them; empty values filter nothing.

    ``collections``: one for a search (more is refused), any number for a
    Capsule, which searches each. ``uri_prefix``: a ``gno://`` prefix.
    ``since``/``until``: ISO dates or relative bounds (``7d``, ``last
    week``) on a document's date. ``tags_all``/``tags_any``: every tag / at
    least one. ``categories``: categories or content types. ``author``: a
    case-insensitive part of the author. ``lang``: a BCP-47 hint.
    ``exclude``: terms whose documents are dropped. ``min_score``: the
    lowest score kept (0-1). ``intent``: background that steers snippets
    and reranking and is not itself searched.
    """

    collections: Sequence[str] = ()
    uri_prefix: str | None = None
    since: str | None = None
    until: str | None = None
    tags_all: Sequence[str] = ()
    tags_any: Sequence[str] = ()
    categories: Sequence[str] = ()
    author: str | None = None
    lang: str | None = None
    exclude: Sequence[str] = ()
    min_score: float | None = None
    intent: str | None = None

    @property
    def collection(self) -> str | None:
        """The one collection a search is held to (``None``: every collection)."""
        return self.collections[0] if self.collections else None

    @classmethod
    def from_given(cls, given: Mapping[str, Any]) -> Scope:
        """The scope named by wire-named values (absent ones filter nothing); see :meth:`given`.

        A lone ``collection`` (what the search tools take) counts as ``collections``.
        """
        fields: dict[str, Any] = {}
        for field, name in WIRE_NAMES:
            value = given.get(name)
            if value is not None:
                fields[field] = value if isinstance(value, str | int | float) else tuple(value)
        if "collections" not in fields and given.get("collection") is not None:
            fields["collections"] = (given["collection"],)
        return cls(**fields)

    def but(self, **changes: Any) -> Scope:
        """This scope with ``changes`` (field names as keywords)."""
        return dataclasses.replace(self, **changes)

    def given(self) -> dict[str, Any]:
        """The filters that were set, under their wire names (lists as lists)."""
        found: dict[str, Any] = {}
        for field, name in WIRE_NAMES:
            value = getattr(self, field)
            if isinstance(value, str | int | float):
                found[name] = value
            elif value:
                found[name] = list(value)
        return found


WIRE_NAMES: Final = (
    ("collections", "collections"),
    ("uri_prefix", "uriPrefix"),
    ("since", "since"),
    ("until", "until"),
    ("tags_all", "tagsAll"),
    ("tags_any", "tagsAny"),
    ("categories", "categories"),
    ("author", "author"),
    ("lang", "lang"),
    ("exclude", "exclude"),
    ("min_score", "minScore"),
    ("intent", "intent"),
)
"""Each scope field and the name the MCP tools and the REST API give it."""

EVERYTHING: Final = Scope()
"""The scope that filters nothing."""
