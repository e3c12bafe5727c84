"""What the index knows of a document besides its text: :class:`DocumentMeta` and :class:`Link`.

The types stand on the engine's ground floor because every floor reads
them: ingest fills them (:func:`gno_trio.engine.ingest.frontmatter.extract_meta`),
the change journal diffs them, the memory projection and the graph read
them. The parsers that build them stay in ingest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True, slots=True)
class Link:
    """One outgoing link in the body, positioned in the full text (1-based)."""

    kind: str
    target: str
    collection: str | None
    heading: str | None
    display: str | None
    line: int
    col: int


@dataclass(frozen=True, slots=True)
class DocumentMeta:
    """Everything the index stores about a document besides its text and chunks."""

    frontmatter: Mapping[str, Any]
    frontmatter_error: str | None
    body: str
    body_start_line: int
    title: str
    tags: tuple[str, ...]
    author: str | None
    categories: tuple[str, ...]
    content_type: str | None
    date: str | None
    relations: tuple[tuple[str, str], ...]
    headings: tuple[str, ...]
    links: tuple[Link, ...]

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled with its frontmatter as a dict (text is prepared in worker processes)."""
        values = [getattr(self, name) for name in self.__slots__]
        values[0] = dict(self.frontmatter)
        return _unpickle_meta, tuple(values)


def _unpickle_meta(frontmatter: dict[str, Any], *rest: Any) -> DocumentMeta:
    return DocumentMeta(MappingProxyType(frontmatter), *rest)


__all__ = ["DocumentMeta", "Link"]
