"""Candidate passages: retrieve documents, then cut exact line spans out of them.

Retrieval is the engine's own model-free hybrid path (``query``: BM25 over the
query plus any ``term`` entries, fused), run once per requested collection in
canonical order with the result limit spread across them, merged by rank and
capped once. Each admitted document then offers its best-matching chunks as
candidates, up to the depth policy's count per document, and each candidate's
text is the exact run of whole mirror lines its chunk spans: the bytes
``gno_get`` returns for that line range, which is what makes a passage
verifiable later.
"""

from __future__ import annotations

import bisect
import re
import sqlite3
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from gno_trio.engine.context import codes
from gno_trio.engine.context.canonical import PassageRef, sha256_text, utf8_size
from gno_trio.engine.context.facets import FacetMatcher, facet_expression
from gno_trio.engine.context.request import NormalizedRequest, iso_instant
from gno_trio.engine.search.anchors import chunk_spans, exact_first, text_match
from gno_trio.engine.search.hybrid import QueryOptions, query
from gno_trio.engine.search.lexical import SearchRequest
from gno_trio.engine.search.querygrammar import parse_query
from gno_trio.errors import GnoError

MAX_SEARCH_LIMIT: Final = 100
MAX_METADATA_CHARS: Final = 2048
_ATX_HEADING: Final = re.compile(r" {0,3}(#{1,6})[ \t]+(.*?)[ \t]*(?:#+[ \t]*)?$")
_FENCE: Final = re.compile(r" {0,3}(`{3,}|~{3,})")
_DATE_ONLY: Final = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True, slots=True)
class RetrievedDocument:
    """One admitted search hit, in merged retrieval order."""

    uri: str
    sources: tuple[str, ...]


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


@dataclass(frozen=True, slots=True)
class CandidatePool:
    """Every materialised candidate, and the ones whose lines could not be read."""

    passages: tuple[Passage, ...]
    unreadable: tuple[PassageRef, ...]


def _share(total: int, index: int, parts: int) -> int:
    """``total`` spread over ``parts`` in order: earlier parts take the remainder."""
    return total // parts + (1 if index < total % parts else 0)


def retrieve_documents(
    conn: sqlite3.Connection, request: NormalizedRequest, now: datetime
) -> list[RetrievedDocument]:
    """Admitted documents, best first, at most ``request.limit`` across all collections."""
    targets: Sequence[str | None] = request.collections or (None,)
    ranked: list[tuple[int, str, tuple[str, ...]]] = []
    for index, collection in enumerate(targets):
        share = max(1, _share(request.limit, index, len(targets)))
        search = SearchRequest(
            query=request.search_query,
            limit=min(MAX_SEARCH_LIMIT, share),
            collection=collection,
            min_score=request.min_score,
            lang=request.lang,
            intent=request.intent,
            exclude=request.exclude,
            since=request.since,
            until=request.until,
            categories=request.categories,
            author=request.author,
            tags_all=request.tags_all,
            tags_any=request.tags_any,
            uri_prefix=request.uri_filter,
            now=now,
        )
        options = QueryOptions(
            query_modes=request.query_modes,
            fast=request.depth_policy == "fast",
            thorough=request.depth_policy == "thorough",
        )
        try:
            hits = query(conn, search, options)["results"]
        except GnoError as error:
            raise GnoError(codes.RETRIEVAL_FAILED, error.message) from None
        sources: tuple[str, ...] = ("bm25", "bm25_variant") if request.term_texts else ("bm25",)
        ranked.extend((rank, hit["uri"], sources) for rank, hit in enumerate(hits, 1))
    ranked.sort(key=lambda item: (item[0], item[1]))
    seen: set[str] = set()
    admitted: list[RetrievedDocument] = []
    for _, uri, legs in ranked:
        if uri in seen:
            continue
        seen.add(uri)
        admitted.append(RetrievedDocument(uri=uri, sources=legs))
    return admitted[: request.limit]


def _chunk_match(request: NormalizedRequest) -> tuple[str, ...]:
    """FTS5 expressions ranking a document's chunks: exact words, then prefixes."""
    parts = [parse_query(text).any_match for text in (request.search_query, *request.term_texts)]
    return exact_first(" OR ".join(f"({part})" for part in parts))


def _best_chunks(
    conn: sqlite3.Connection,
    span: tuple[int, int] | None,
    matches: tuple[str, ...],
    count: int,
) -> list[int]:
    """Ids of a mirror's ``count`` best-matching chunks (exact terms first)."""
    if span is None:
        return []
    found: dict[int, None] = {}
    for expression in matches:
        if len(found) >= count:
            break
        try:
            rows = conn.execute(
                "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? "
                "AND rowid BETWEEN ? AND ? ORDER BY rank, rowid LIMIT ?",
                (text_match(expression), span[0], span[1], count),
            ).fetchall()
        except sqlite3.OperationalError:
            continue
        for row in rows:
            found.setdefault(int(row[0]), None)
    return list(found)[:count]


def _headings(lines: Sequence[str]) -> tuple[list[int], list[str]]:
    """Line numbers and texts of the ATX headings outside frontmatter and code fences."""
    numbers: list[int] = []
    texts: list[str] = []
    start = 0
    if lines and lines[0].strip() == "---":
        for index in range(1, len(lines)):
            if lines[index].strip() in ("---", "..."):
                start = index + 1
                break
    fence: str | None = None
    for index in range(start, len(lines)):
        line = lines[index]
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        heading = _ATX_HEADING.match(line)
        if heading and heading.group(2).strip():
            numbers.append(index + 1)
            texts.append(heading.group(2).strip()[:MAX_METADATA_CHARS])
    return numbers, texts


def _heading_for(headings: tuple[list[int], list[str]], start: int, end: int) -> str | None:
    """The heading a passage starts under, else the first one inside it."""
    numbers, texts = headings
    position = bisect.bisect_right(numbers, start) - 1
    if position >= 0:
        return texts[position]
    if numbers and numbers[0] <= end:
        return texts[0]
    return None


def _instant(value: object) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return iso_instant(moment if moment.tzinfo else moment.replace(tzinfo=UTC))


def _document_date(value: object) -> str | None:
    if isinstance(value, str) and _DATE_ONLY.fullmatch(value):
        return value
    return _instant(value)


@dataclass(frozen=True, slots=True)
class _Document:
    row: sqlite3.Row
    retrieved: RetrievedDocument
    lines: list[str] | None
    chunks: list[sqlite3.Row]


def _load_documents(
    conn: sqlite3.Connection,
    retrieved: Sequence[RetrievedDocument],
    request: NormalizedRequest,
    configured: Collection[str],
) -> list[_Document]:
    """Rows, best chunks and mirror lines of the retrieved documents.

    A document whose collection has left the configuration since the index
    was written is skipped: nothing could say where its content may go.
    """
    if not retrieved:
        return []
    marks = ", ".join("?" for _ in retrieved)
    rows = {
        row["uri"]: row
        for row in conn.execute(
            f"SELECT uri, docid, collection, title, source_hash, mirror_hash, source_mtime, "
            f"frontmatter_date FROM documents WHERE active = 1 AND uri IN ({marks})",
            tuple(doc.uri for doc in retrieved),
        )
    }
    present = [
        doc
        for doc in retrieved
        if doc.uri in rows
        and rows[doc.uri]["mirror_hash"]
        and rows[doc.uri]["collection"] in configured
    ]
    mirrors = sorted({rows[doc.uri]["mirror_hash"] for doc in present})
    spans = chunk_spans(conn, mirrors)
    matches = _chunk_match(request)
    documents = []
    for doc in present:
        row = rows[doc.uri]
        mirror = row["mirror_hash"]
        ids = _best_chunks(conn, spans.get(mirror), matches, request.passages_per_document)
        if ids:
            marks = ", ".join("?" for _ in ids)
            by_id = {
                int(chunk["id"]): chunk
                for chunk in conn.execute(
                    f"SELECT id, start_line, end_line, language FROM content_chunks "
                    f"WHERE id IN ({marks})",
                    tuple(ids),
                )
            }
            chunks = [by_id[i] for i in ids if i in by_id]
        else:
            chunks = conn.execute(
                "SELECT id, start_line, end_line, language FROM content_chunks "
                "WHERE mirror_hash = ? ORDER BY seq LIMIT 1",
                (mirror,),
            ).fetchall()
        content = conn.execute(
            "SELECT markdown FROM content WHERE mirror_hash = ?", (mirror,)
        ).fetchone()
        lines = str(content[0]).split("\n") if content is not None else None
        documents.append(_Document(row=row, retrieved=doc, lines=lines, chunks=chunks))
    return documents


def _indexed_facets(
    conn: sqlite3.Connection, facets: Sequence[str], chunk_ids: Sequence[int]
) -> dict[int, set[str]]:
    """Which facets the full-text index matches in each of these chunks."""
    wanted = set(chunk_ids)
    found: dict[int, set[str]] = {}
    if not wanted:
        return found
    low, high = min(wanted), max(wanted)
    for facet in facets:
        expression = facet_expression(facet)
        if expression is None:
            continue
        try:
            rows = conn.execute(
                "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid BETWEEN ? AND ?",
                (text_match(expression), low, high),
            ).fetchall()
        except sqlite3.OperationalError:
            continue
        for row in rows:
            if int(row[0]) in wanted:
                found.setdefault(int(row[0]), set()).add(facet)
    return found


def _facets_of(facets: Sequence[str], *found: Collection[str]) -> tuple[str, ...]:
    hits = set().union(*found)
    return tuple(facet for facet in facets if facet in hits)


def collect_candidates(
    conn: sqlite3.Connection,
    request: NormalizedRequest,
    retrieved: Sequence[RetrievedDocument],
    facets: Sequence[str],
    configured: Collection[str],
) -> CandidatePool:
    """Materialise up to ``candidate_limit`` passages, best chunk of every document first.

    Candidates are ordered in tiers: each document's best chunk in document
    order, then each document's second-best, and so on, so a tight budget
    spends itself across documents before it goes deep into one.
    """
    documents = _load_documents(conn, retrieved, request, configured)
    matcher = FacetMatcher(facets)
    indexed = _indexed_facets(
        conn, facets, [int(chunk["id"]) for doc in documents for chunk in doc.chunks]
    )
    tiers = max((len(doc.chunks) for doc in documents), default=0)
    passages: list[Passage] = []
    unreadable: list[PassageRef] = []
    headings: dict[str, tuple[list[int], list[str]]] = {}
    for tier in range(tiers):
        for doc in documents:
            if tier >= len(doc.chunks) or len(passages) + len(unreadable) >= (
                request.candidate_limit
            ):
                continue
            chunk = doc.chunks[tier]
            row = doc.row
            start, end = int(chunk["start_line"]), int(chunk["end_line"])
            lines = doc.lines
            text = "\n".join(lines[start - 1 : end]) if lines is not None else ""
            if lines is None or not 1 <= start <= end <= len(lines) or not text.strip():
                unreadable.append(
                    PassageRef(
                        uri=row["uri"],
                        docid=row["docid"],
                        start_line=None,
                        end_line=None,
                        passage_hash=None,
                        source_hash=row["source_hash"],
                        mirror_hash=row["mirror_hash"],
                    )
                )
                continue
            heading = None
            if chunk["language"] is None:
                found = headings.get(row["mirror_hash"])
                if found is None:
                    found = headings[row["mirror_hash"]] = _headings(lines)
                heading = _heading_for(found, start, end)
            title = row["title"][:MAX_METADATA_CHARS] if row["title"] else None
            ref = PassageRef(
                uri=row["uri"],
                docid=row["docid"],
                start_line=start,
                end_line=end,
                passage_hash=sha256_text(text),
                source_hash=row["source_hash"],
                mirror_hash=row["mirror_hash"],
            )
            passages.append(
                Passage(
                    ref=ref,
                    candidate_id=ref.identity,
                    text=text,
                    size=utf8_size(text),
                    collection=row["collection"],
                    title=title,
                    heading=heading,
                    modified_at=_instant(row["source_mtime"]),
                    document_date=_document_date(row["frontmatter_date"]),
                    facets=_facets_of(
                        facets,
                        indexed.get(int(chunk["id"]), set()),
                        matcher.matches(f"{title or ''}\n{text}"),
                    ),
                    retrieval_rank=len(passages) + len(unreadable) + 1,
                    retrieval_sources=doc.retrieved.sources,
                )
            )
    return CandidatePool(tuple(passages), tuple(unreadable))
