"""Where a search hit points: its best chunk, a highlighted snippet, the match line.

Documents are ranked on the document-level index; this module then looks
inside the returned documents only. The chunk index (``chunks_fts``) has two
columns, the chunk ``text`` and its ``mirror_hash``, so one statement can rank
the chunks of every returned document at once: the query terms are matched
against ``text`` and the result documents' mirror hashes against
``mirror_hash`` (weight 0, so the hash never adds to a score). FTS5's bm25()
works out each term's corpus frequency once per statement; ranking each
document's chunks in its own statement paid that cost once per hit, which
was most of a search's time for common words.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Callable, Mapping, Sequence

from gno_trio.engine.search import chunkrank, memoryanchors
from gno_trio.engine.search.anchortext import (
    SNIPPET_MARKS,
    Anchor,
    exact_first,
    excerpt,
    first_hit_line,
)
from gno_trio.engine.search.chunkmemory import ChunkMemory
from gno_trio.engine.store import scratch_fulltext
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import DEFAULT_TOKENIZE, Connection

Span = tuple[int, int]


def text_match(expression: str) -> str:
    """Restrict a chunk-index MATCH expression to the chunk text column."""
    return f"text : ({expression})"


def chunk_spans(conn: Connection, mirror_hashes: Sequence[str]) -> dict[str, Span]:
    """First and last chunk id of each mirror, in one statement for all of them.

    A mirror's chunks are inserted together, so their ids are one contiguous
    range.
    """
    return SQLITE_STORES.chunk_matches(conn).spans(mirror_hashes)


def best_on_index(conn: Connection, spans: Mapping[str, Span], match: str) -> dict[str, int]:
    """The best chunk of each mirror that ``match`` finds in it: bm25 on the chunk
    index, ties to the lowest chunk id.

    One FTS5 statement for all the mirrors. Its rows come in chunk id order
    as plain tuples, so each mirror's rows are one slice (found by bisection)
    and its best is the first lowest score of that slice: a long page's
    hundreds of matching chunks are never handled one by one in Python. A
    malformed expression matches nothing rather than failing the search.
    """
    if not spans:
        return {}
    rows = SQLITE_STORES.chunk_matches(conn).scored(text_match(match), spans)
    chosen: dict[str, int] = {}
    for mirror, (first, last) in spans.items():
        start = bisect.bisect_left(rows, first, key=_CHUNK_ID)
        end = bisect.bisect_right(rows, last, lo=start, key=_CHUNK_ID)
        if start < end:
            chosen[mirror] = int(min(rows[start:end], key=_SCORE)[0])
    return chosen


_CHUNK_ID = operator.itemgetter(0)
_SCORE = operator.itemgetter(1)


def best_chunks(
    conn: Connection, spans: Mapping[str, Span], match: str
) -> dict[str, tuple[int, str]]:
    """The best chunk of each mirror, with the match form that found it.

    A mirror of one chunk needs no ranking: that chunk is its best, and the
    snippet step finds out whether it matches. Mirrors none of whose chunks
    match are left out (their anchor is the first chunk's opening text).
    """
    chosen: dict[str, tuple[int, str]] = {}
    single = {mirror: first for mirror, (first, last) in spans.items() if first == last}
    pending = {mirror: span for mirror, span in spans.items() if mirror not in single}
    forms = exact_first(match)
    for mirror, chunk_id in single.items():
        chosen[mirror] = (chunk_id, "")
    for form in forms:
        if not pending:
            break
        for mirror, chunk_id in best_on_index(conn, pending, form).items():
            chosen[mirror] = (chunk_id, form)
            del pending[mirror]
    return chosen


def anchors_for(
    conn: Connection,
    spans: Mapping[str, Span],
    match: str | None,
    memory: ChunkMemory | None,
    said: scratch_fulltext.Tokenized | None = None,
) -> dict[str, Anchor]:
    """The anchor of each mirror (keyed by its chunk id range): its best chunk for
    ``match``, else its opening text. A mirror without chunks has no anchor.
    ``memory`` is the held chunk index of ``conn``'s state (:func:`.chunkkeeper.current`);
    ``said``, the search's tokenizations (shared with its ranking).
    """
    found: dict[str, Anchor] = {}
    if match and memory is not None:
        held = {mirror: span for mirror, span in spans.items() if memory.holds_span(*span)}
        tokenizer = said if said is not None else scratch_fulltext.Tokenized(memory.tokenize)
        worked = memoryanchors.anchors_in_memory(conn, memory, tokenizer, held, match)
        if worked is not None:
            found.update(worked)
            spans = {mirror: span for mirror, span in spans.items() if mirror not in worked}
    if match and spans:
        tokenize, totals = _index_facts(conn)
        with scratch_fulltext.scratch_table(tokenize) as table:
            waiting, rows = _chosen_chunks(conn, table, spans, match, totals)
            chosen = {chunk_id: mirror for mirror, (chunk_id, _) in waiting.items()}
            cut = _cutter(conn, table, rows, chosen, match, totals)
            for form in exact_first(match):
                # A chunk found by one form is cut with that form; a single-chunk
                # mirror's chunk (form unknown) tries each form in turn.
                owners = {
                    chunk_id: mirror
                    for mirror, (chunk_id, found_by) in waiting.items()
                    if found_by in ("", form)
                }
                for chunk_id, anchor in cut(list(owners), form).items():
                    found[owners[chunk_id]] = anchor
                    del waiting[owners[chunk_id]]
    for mirror in spans:
        if mirror not in found:
            opening = _opening_anchor(conn, mirror)
            if opening is not None:
                found[mirror] = opening
    return found


_ChunkRows = dict[int, tuple[str, int, int, str | None]]


def _index_facts(conn: Connection) -> tuple[str, tuple[int, int] | None]:
    """The chunk index's tokenizer and its totals (None for trigram: never ranked
    here), read in one statement."""
    tokenizer, totals = SQLITE_STORES.chunk_matches(conn).tokenizer_and_totals()
    tokenize = tokenizer or DEFAULT_TOKENIZE
    return tokenize, None if "trigram" in tokenize else totals


def _chosen_chunks(
    conn: Connection,
    table: scratch_fulltext.SnippetTable,
    spans: Mapping[str, Span],
    match: str,
    totals: tuple[int, int] | None,
) -> tuple[dict[str, tuple[int, str]], _ChunkRows]:
    """Each mirror's best chunk (and the form that found it), and the chunks read to rank.

    Mirrors of several chunks are ranked in ``table`` (their chunks loaded
    there) when that beats FTS5's ranking on the chunk index (:mod:`.chunkrank`).
    """
    forms = exact_first(match)
    pending = {mirror: span for mirror, span in spans.items() if span[0] != span[1]}
    loadable = sum(last - first + 1 for first, last in pending.values())
    chosen: dict[str, tuple[int, str]] = {
        mirror: (first, "") for mirror, (first, last) in spans.items() if first == last
    }
    rows: _ChunkRows = {}
    ranked = None
    # A quoted string per two quotes at most: where even that many phrases would
    # not make loading worth it (a small index), the expression is never parsed.
    parsed = (
        [chunkrank.or_phrases(form) for form in forms]
        if pending and chunkrank.worth_loading(totals, loadable, match.count('"') // 2)
        else []
    )
    if (
        parsed
        and all(phrases is not None for phrases in parsed)
        and chunkrank.worth_loading(totals, loadable, len(parsed[0] or ()))
    ):
        rows = _chunk_rows(
            conn, [c for first, last in pending.values() for c in range(first, last + 1)]
        )
        table.load({chunk_id: row[0] for chunk_id, row in rows.items()})
        ranked = _rank_in_table(conn, table, pending, forms, parsed, totals)
    chosen.update(ranked if ranked is not None else best_chunks(conn, pending, match))
    return chosen, rows


def _cutter(
    conn: Connection,
    table: scratch_fulltext.SnippetTable,
    rows: _ChunkRows,
    chunk_ids: Mapping[int, str],
    match: str,
    totals: tuple[int, int] | None,
) -> Callable[[Sequence[int], str], dict[int, Anchor]]:
    """How the chosen chunks get their snippets: in ``table`` or on the chunk index.

    Both give FTS5's snippet() of the chunk. On the index the expression
    (a prefix term: every indexed word it begins) is set up over the whole
    index; in the table the chunks are tokenized once more. The table wins
    on a large index (the rule :func:`.chunkrank.worth_loading` applies), or
    when the chunks are loaded there already. ``chunk_ids`` maps each chunk
    to its mirror.
    """
    missing = [chunk_id for chunk_id in chunk_ids if not table.holds(chunk_id)]
    if missing and not (
        chunkrank.worth_loading(totals, len(missing), max(1, match.count('"') // 2))
        and chunkrank.worth_loading(
            totals, len(missing), len(chunkrank.or_phrases(match) or ()) or 1
        )
    ):
        return _IndexCutter(conn, chunk_ids).cut
    rows.update(_chunk_rows(conn, missing))
    table.load({chunk_id: rows[chunk_id][0] for chunk_id in missing if chunk_id in rows})

    def in_table(ids: Sequence[int], form: str) -> dict[int, Anchor]:
        found = {}
        for chunk_id, snippet in table.snippets(ids, text_match(form), SNIPPET_MARKS).items():
            text, start, end, language = rows[chunk_id]
            found[chunk_id] = Anchor(
                snippet, start, end, language, first_hit_line(snippet, text, start)
            )
        return found

    return in_table


def _rank_in_table(
    conn: Connection,
    table: scratch_fulltext.SnippetTable,
    pending: Mapping[str, Span],
    forms: Sequence[str],
    parsed: Sequence[list[chunkrank.Phrase] | None],
    totals: tuple[int, int] | None,
) -> dict[str, tuple[int, str]] | None:
    """:func:`best_chunks` computed over the loaded chunks (None: rank on the index)."""
    chosen: dict[str, tuple[int, str]] = {}
    left = dict(pending)
    for form, phrases in zip(forms, parsed, strict=True):
        if not left or phrases is None:
            break
        best = chunkrank.best_in_table(conn, table, left, phrases, totals)
        if best is None:
            return None
        for mirror, chunk_id in best.items():
            chosen[mirror] = (chunk_id, form)
            del left[mirror]
    return chosen


def _chunk_rows(conn: Connection, chunk_ids: Sequence[int]) -> _ChunkRows:
    """Text, line range and language of each of these chunks, in one statement."""
    return SQLITE_STORES.chunk_matches(conn).places(chunk_ids)


class _IndexCutter:
    """Snippets cut by FTS5's snippet() on the chunk index, for chunks of known mirrors."""

    def __init__(self, conn: Connection, owners: Mapping[int, str]) -> None:
        self._index = SQLITE_STORES.chunk_matches(conn)
        self._owners = owners

    def cut(self, chunk_ids: Sequence[int], form: str) -> dict[int, Anchor]:
        """The anchor of each of these chunks that ``form`` matches.

        The chunks' mirrors narrow the match, as when the chunks were ranked,
        so the index sets the expression up once for all of them.
        """
        if not chunk_ids:
            return {}
        mirrors = dict.fromkeys(self._owners[chunk_id] for chunk_id in chunk_ids)
        cut = self._index.cut(chunk_ids, text_match(form), mirrors, SNIPPET_MARKS)
        found: dict[int, Anchor] = {}
        for chunk_id, snippet, text, start, end, language in cut:
            found[int(chunk_id)] = Anchor(
                snippet, start, end, language, first_hit_line(snippet, text, start)
            )
        return found


def _opening_anchor(conn: Connection, mirror: str) -> Anchor | None:
    """The first chunk's opening text: the anchor of a hit no chunk of which matches."""
    row = SQLITE_STORES.chunk_matches(conn).opening(mirror)
    if row is None:
        return None
    text, start, end, language = row
    return Anchor(excerpt(text), start, end, language, start)
