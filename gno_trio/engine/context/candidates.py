"""Candidate passages: cut exact line spans out of the retrieved documents.

The documents come from :mod:`~gno_trio.engine.context.retrieval` (the
engine's hybrid query, merged across collections, with their best
chunks and mirror lines). Each admitted document then offers its
best-matching chunks as candidates, up to the depth policy's count per
document, and each candidate's text is the exact run of whole mirror lines
its chunk spans: the bytes ``gno_get`` returns for that line range, which is
what makes a passage verifiable later.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Final

from gno_trio.engine.canonical import sha256_text
from gno_trio.engine.context.canonical import PassageRef
from gno_trio.engine.context.facets import FacetMatcher, neighbour_pairs
from gno_trio.engine.context.passages import Line, Weights, Window, best_window, describe_lines
from gno_trio.engine.context.request import NormalizedRequest
from gno_trio.engine.context.retrieval import LoadedDocument, RetrievedDocument, load_documents
from gno_trio.engine.ingest.outline import outline
from gno_trio.engine.search.results import date_instant
from gno_trio.engine.store.database import Connection, RowView

MAX_METADATA_CHARS: Final = 2048
_DATE_ONLY: Final = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True, slots=True)
class Passage:
    """A materialised candidate: exact text plus everything its evidence entry records."""

    ref: PassageRef
    candidate_id: str
    text: str
    size: int
    collection: str
    title: str | None
    heading: str | None
    modified_at: str | None
    document_date: str | None
    facets: tuple[str, ...]
    retrieval_rank: int
    retrieval_sources: tuple[str, ...]
    # What each requested facet adds to the passage's relevance, in facet
    # order, and what goal words standing together in it add.
    facet_weights: tuple[float, ...] = ()
    pair_weight: float = 0.0

    def gain(self, covered: Collection[str], facets: Sequence[str]) -> float:
        """Relevance still to be had from this passage: covered facets count half."""
        return self.pair_weight + sum(
            weight / 2 if facet in covered else weight
            for facet, weight in zip(facets, self.facet_weights, strict=False)
        )


@dataclass(frozen=True, slots=True)
class CandidatePool:
    """Every materialised candidate, and the ones whose lines could not be read."""

    passages: tuple[Passage, ...]
    unreadable: tuple[PassageRef, ...]


def _headings(lines: Sequence[str]) -> tuple[list[int], list[str]]:
    """Line numbers and texts of the ATX headings outside frontmatter and code fences."""
    found = outline(lines)
    return [h.line for h in found], [h.title[:MAX_METADATA_CHARS] for h in found]


def _heading_for(headings: tuple[list[int], list[str]], start: int, end: int) -> str | None:
    """The heading a passage starts under, else the first one inside it."""
    numbers, texts = headings
    position = bisect.bisect_right(numbers, start) - 1
    if position >= 0:
        return texts[position]
    if numbers and numbers[0] <= end:
        return texts[0]
    return None


def _document_date(value: object) -> str | None:
    """A frontmatter date as written when it is a calendar date, else its UTC instant."""
    if isinstance(value, str) and _DATE_ONLY.fullmatch(value):
        return value
    return date_instant(value)


# The room one passage may take, given its document (URI, title, collection).
PassageCap = Callable[[str, str | None, str], int]


def _unreadable(row: RowView) -> PassageRef:
    return PassageRef(
        uri=row["uri"],
        docid=row["docid"],
        start_line=None,
        end_line=None,
        passage_hash=None,
        source_hash=row["source_hash"],
        mirror_hash=row["mirror_hash"],
    )


def _spans(doc: LoadedDocument) -> list[tuple[int, int]] | None:
    """The document's chunk spans, or None when its mirror cannot give them back."""
    lines = doc.lines
    spans = [(int(chunk["start_line"]), int(chunk["end_line"])) for chunk in doc.chunks]
    if lines is None or not spans or any(not 1 <= a <= b <= len(lines) for a, b in spans):
        return None
    return spans


def _windows(
    doc: LoadedDocument,
    spans: Sequence[tuple[int, int]],
    described: Sequence[Line],
    weights: Weights,
    cap: int,
    count: int,
) -> list[Window]:
    """Up to ``count`` non-overlapping windows, the best chunk's first."""
    taken: list[Window] = []
    for _ in range(count):
        before = len(taken)
        for span in spans:
            if len(taken) >= count:
                break
            found = best_window(described, span, cap, taken, weights)
            if found is not None and (found.score > 0 or not taken):
                taken.append(found)
        if len(taken) == before:
            break
    return taken


def collect_candidates(
    conn: Connection,
    request: NormalizedRequest,
    retrieved: Sequence[RetrievedDocument],
    facets: Sequence[str],
    configured: Collection[str],
    cap_for: PassageCap,
) -> CandidatePool:
    """Materialise up to ``candidate_limit`` passages, ranked by what they say to the goal.

    Each retrieved document offers windows of its best-matching chunks
    (:mod:`~gno_trio.engine.context.passages`), up to the depth policy's count
    and each within the room ``cap_for`` gives it. Admission to the pool goes
    in tiers (every document's best window, then every second-best, ...) so a
    small candidate limit spreads over documents; the pool is then ordered by
    relevance, document retrieval order breaking ties, and that order is each
    passage's retrieval rank.
    """
    documents = load_documents(conn, retrieved, request, configured)
    matcher = FacetMatcher(facets, neighbour_pairs(request.search_query, facets))
    readable: list[tuple[LoadedDocument, list[tuple[int, int]], list[Line]]] = []
    unreadable: list[PassageRef] = []
    for doc in documents:
        spans = _spans(doc)
        if spans is None or doc.lines is None:
            unreadable.append(_unreadable(doc.row))
            continue
        prose = doc.chunks[0]["language"] is None
        readable.append((doc, spans, describe_lines(doc.lines, matcher, spans, prose=prose)))
    weights = Weights(
        [_span_counts(described, span) for _, spans, described in readable for span in spans],
        matcher.width,
    )
    tiers: list[list[tuple[int, Window, LoadedDocument, list[Line]]]] = []
    for order, (doc, spans, described) in enumerate(readable):
        row = doc.row
        title = row["title"][:MAX_METADATA_CHARS] if row["title"] else None
        cap = cap_for(row["uri"], title, row["collection"])
        found = _windows(doc, spans, described, weights, cap, request.passages_per_document)
        for tier, window in enumerate(found):
            while len(tiers) <= tier:
                tiers.append([])
            tiers[tier].append((order, window, doc, described))
    admitted = [entry for tier in tiers for entry in tier][
        : max(0, request.candidate_limit - len(unreadable))
    ]
    admitted.sort(key=lambda entry: (-entry[1].score, entry[0], entry[1].start))
    headings: dict[str, tuple[list[int], list[str]]] = {}
    passages: list[Passage] = []
    for _, window, doc, _described in admitted:
        passages.append(_passage(doc, window, weights, matcher, headings, len(passages) + 1))
    return CandidatePool(tuple(passages), tuple(unreadable))


def _span_counts(described: Sequence[Line], span: tuple[int, int]) -> tuple[int, ...]:
    width = len(described[span[0] - 1].counts)
    return tuple(
        sum(described[n - 1].counts[i] for n in range(span[0], span[1] + 1)) for i in range(width)
    )


def _passage(
    doc: LoadedDocument,
    window: Window,
    weights: Weights,
    matcher: FacetMatcher,
    headings: dict[str, tuple[list[int], list[str]]],
    rank: int,
) -> Passage:
    row = doc.row
    lines = doc.lines or []
    text = "\n".join(lines[window.start - 1 : window.end])
    mirror = row["mirror_hash"]
    prose = doc.chunks[0]["language"] is None
    found = headings.get(mirror)
    if found is None:
        found = headings[mirror] = _headings(lines) if prose else ([], [])
    title = row["title"][:MAX_METADATA_CHARS] if row["title"] else None
    ref = PassageRef(
        uri=row["uri"],
        docid=row["docid"],
        start_line=window.start,
        end_line=window.end,
        passage_hash=sha256_text(text),
        source_hash=row["source_hash"],
        mirror_hash=mirror,
    )
    spoken = {facet for facet, count in zip(matcher.facets, window.counts, strict=False) if count}
    shares = weights.contributions(window.counts)
    width = len(matcher.facets)
    titled = set(matcher.matches(title or ""))
    return Passage(
        ref=ref,
        candidate_id=ref.identity,
        text=text,
        size=window.size,
        collection=row["collection"],
        title=title,
        heading=_heading_for(found, window.start, window.end) if prose else None,
        modified_at=date_instant(row["source_mtime"]),
        document_date=_document_date(row["frontmatter_date"]),
        facets=tuple(f for f in matcher.facets if f in spoken or f in titled),
        retrieval_rank=rank,
        retrieval_sources=doc.retrieved.sources,
        facet_weights=shares[:width],
        pair_weight=sum(shares[width:]),
    )
