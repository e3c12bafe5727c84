"""A search request's filters, normalised once for whichever index applies them.

The SQL form (:func:`gno_trio.engine.search.request.filter_clauses`) and the
tantivy form (:mod:`.docindex.query`) read the same normalised values, so a
filter means the same on either backend.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Filters:
    """What a request admits. Empty values filter nothing.

    ``collection`` is a known collection's name; ``since``/``until`` are the
    resolved instants as ISO text (compared through SQLite's ``julianday``);
    tags, categories, author and language are lower-cased as their filters
    compare them; ``exclude`` holds phrases with something to find in them.
    """

    collection: str | None = None
    uri_prefix: str | None = None
    since: str | None = None
    until: str | None = None
    tags_all: tuple[str, ...] = ()
    tags_any: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    author: str | None = None
    lang: str | None = None
    exclude: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return self == _NONE


_NONE = Filters()
