"""What a document read admits: a request's filters, normalised once, and their SQL form.

Every retrieval path (BM25, vectors, hybrid, diagnosis) normalises a
request's filters into one :class:`Filters` value; the SQL form
(:func:`document_filter`) and the tantivy form
(:mod:`gno_trio.engine.search.docindex.query`) read the same values, so a
filter means the same on either index. The stores of search reads take the
SQL form as an opaque :class:`DocumentFilter`: a second database renders
the same values in its own dialect.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

ACTIVE: Final = "d.active = 1"
DOC_DATE: Final = "COALESCE(d.frontmatter_date, d.source_mtime)"
"""The date a document is "about": its frontmatter date, else its file time."""


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


@dataclass(frozen=True, slots=True)
class DocumentFilter:
    """Conditions on documents ``d`` and their parameters: what the search stores filter by."""

    clauses: tuple[str, ...]
    params: tuple[Any, ...]

    @property
    def unfiltered(self) -> bool:
        """Whether only the active documents are asked for (no filter of the request's)."""
        return self.clauses == (ACTIVE,)

    @property
    def where(self) -> str:
        return " AND ".join(self.clauses)


def document_filter(
    filters: Filters, *, excluded_match: str | None = None, excluded_ids: Sequence[int] = ()
) -> DocumentFilter:
    """The SQL form of normalised filters (on documents ``d``).

    ``filters.exclude`` drops the documents the document full-text index
    matches with ``excluded_match`` (FTS5 ranks documents), or those listed
    in ``excluded_ids`` (another index found them) when there is no match.
    """
    clauses = [ACTIVE]
    params: list[Any] = []
    if filters.collection:
        clauses.append("d.collection = ?")
        params.append(filters.collection)
    if filters.uri_prefix:
        clauses.append("substr(d.uri, 1, ?) = ?")
        params.extend([len(filters.uri_prefix), filters.uri_prefix])
    # Stored dates mix shapes ("2024-03-01", "...T10:00:00Z", naive times), so
    # they are compared as instants: as text, "2024-03-01" sorts before
    # "2024-03-01T00:00:00.000Z" and a note dated that day would fall out of
    # since=2024-03-01.
    if filters.since:
        clauses.append(f"julianday({DOC_DATE}) >= julianday(?)")
        params.append(filters.since)
    if filters.until:
        clauses.append(f"julianday({DOC_DATE}) <= julianday(?)")
        params.append(filters.until)
    if filters.tags_all:
        marks = ", ".join("?" for _ in filters.tags_all)
        clauses.append(
            f"(SELECT COUNT(DISTINCT t.tag) FROM doc_tags t WHERE t.doc_id = d.id "
            f"AND t.tag IN ({marks})) = ?"
        )
        params.extend([*filters.tags_all, len(filters.tags_all)])
    if filters.tags_any:
        marks = ", ".join("?" for _ in filters.tags_any)
        clauses.append(
            f"EXISTS (SELECT 1 FROM doc_tags t WHERE t.doc_id = d.id AND t.tag IN ({marks}))"
        )
        params.extend(filters.tags_any)
    if filters.categories:
        marks = ", ".join("?" for _ in filters.categories)
        clauses.append(
            f"(lower(COALESCE(d.content_type, '')) IN ({marks}) OR EXISTS (SELECT 1 FROM "
            f"json_each(d.categories_json) j WHERE lower(j.value) IN ({marks})))"
        )
        params.extend([*filters.categories, *filters.categories])
    if filters.author:
        clauses.append("instr(lower(COALESCE(d.author, '')), ?) > 0")
        params.append(filters.author)
    if filters.lang:
        clauses.append(
            "(d.language_hint IS NULL OR lower(d.language_hint) = ? "
            "OR lower(d.language_hint) LIKE ? || '-%')"
        )
        params.extend([filters.lang, filters.lang])
    if filters.exclude:
        if excluded_match is not None:
            clauses.append(
                "d.id NOT IN (SELECT rowid FROM documents_fts WHERE documents_fts MATCH ?)"
            )
            params.append(excluded_match)
        else:
            clauses.append("d.id NOT IN (SELECT value FROM json_each(?))")
            params.append(json.dumps(sorted(excluded_ids)))
    return DocumentFilter(tuple(clauses), tuple(params))


__all__ = ["ACTIVE", "DOC_DATE", "DocumentFilter", "Filters", "document_filter"]
