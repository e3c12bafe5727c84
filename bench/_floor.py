"""The FTS5 ranking floor the search benchmarks measure gno-trio against.

The floor is what any FTS5 search must do at least: a contentless table
with the document index's columns, tokenizer and prefix indexes, ranked by
``bm25()`` with the same field weights and the same MATCH strings, all-terms
first and topped up with any-term matches when fewer than the limit match,
as gno-trio ranks. It reads no document rows, cuts no snippet, finds no
line anchor and applies no filter: every part of a gno-trio search above it
is measured against it.

:class:`SnippetFloor` adds what a search showing text must do: the table
keeps the text and a ``snippet()`` is cut for each hit. :class:`TantivyFloor`
is the ranking alone on gno-trio's tantivy index, where tantivy ranks.
"""

from __future__ import annotations

import re
import sqlite3

from gno_trio.engine.search.docrankers import relaxed_match
from gno_trio.engine.search.querygrammar import parse_query
from gno_trio.engine.store.database import CACHE_KIB, MMAP_BYTES
from gno_trio.engine.store.fulltext import FIELD_WEIGHTS

FLOOR_TABLE = "f"
_ARGUMENTS = re.compile(r"USING\s+fts5\s*\((.*)\)\s*$", re.IGNORECASE | re.DOTALL)


def floor_declaration(index_sql: str) -> str:
    """The floor's ``CREATE VIRTUAL TABLE`` from the document index's own declaration.

    Same columns, tokenizer and prefix indexes, with no content stored.
    """
    found = _ARGUMENTS.search(index_sql)
    if found is None or "content" in found.group(1).replace("content_rowid", ""):
        raise ValueError(f"not a content-holding FTS5 declaration: {index_sql!r}")
    return f"CREATE VIRTUAL TABLE {FLOOR_TABLE} USING fts5({found.group(1)}, content = '')"


def open_floor(path: str) -> sqlite3.Connection:
    """A connection to a floor database, read as gno-trio reads its index (same page cache
    and memory map)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
    return conn


def copy_document_index(index: sqlite3.Connection, floor: sqlite3.Connection) -> int:
    """Fill an empty floor with the rows of gno-trio's document index; returns the row count."""
    (index_sql,) = index.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'documents_fts'"
    ).fetchone()
    columns = [str(row[1]) for row in index.execute("PRAGMA table_info(documents_fts)")]
    floor.execute(floor_declaration(str(index_sql)))
    listed = ", ".join(columns)
    marks = ", ".join("?" for _ in columns)
    rows = [tuple(row) for row in index.execute(f"SELECT rowid, {listed} FROM documents_fts")]
    floor.execute("BEGIN")
    floor.executemany(f"INSERT INTO {FLOOR_TABLE}(rowid, {listed}) VALUES (?, {marks})", rows)
    floor.execute("COMMIT")
    return len(rows)


class RankingFloor:
    """Ranks a query on the floor table of ``conn`` as gno-trio ranks documents."""

    extra_columns = ""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        weights = ", ".join(str(w) for w in FIELD_WEIGHTS)
        self._sql = (
            f"SELECT rowid, bm25({FLOOR_TABLE}, {weights}) AS r{self.extra_columns} "
            f"FROM {FLOOR_TABLE} WHERE {FLOOR_TABLE} MATCH ? ORDER BY r LIMIT ?"
        )

    def search(self, query: str, limit: int) -> int:
        """How many documents the ranking returns (all-terms, then any-term top-up)."""
        parsed = parse_query(query)
        rows = self._conn.execute(self._sql, (parsed.match, limit)).fetchall()
        relaxed = relaxed_match(parsed)
        if len(rows) < limit and relaxed is not None:
            rows += self._conn.execute(self._sql, (relaxed, limit + len(rows))).fetchall()
        return len(rows)


class SnippetFloor(RankingFloor):
    """The floor of a search that shows text: ranking on a content-storing FTS5 table
    (``CREATE VIRTUAL TABLE f USING fts5(filepath, title, body, ...)``, text kept) and a
    ``snippet()`` of the body cut for every hit, as any search answering with a
    passage must at least do. No line anchor, no chunk choice, no filter."""

    extra_columns = f", snippet({FLOOR_TABLE}, 2, '', '', '...', 24)"


class TantivyFloor:
    """The ranking part alone on gno-trio's own tantivy document index.

    Where tantivy ranks (large indexes), the FTS5 floors rank on another index
    than gno-trio; this one asks the product's tantivy ranker the same
    questions its lexical search asks (all terms, then the any-term top-up)
    and stops there: no document rows, no snippet, no anchor.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        from gno_trio.engine.search.docindex.ranking import ranker
        from gno_trio.engine.store.document_filters import Filters

        found = ranker(conn)
        if found is None:
            raise ValueError("tantivy does not rank this index's documents")
        self._ranker = found
        self._conn = conn
        self._filters = Filters()

    def search(self, query: str, limit: int) -> int:
        parsed = parse_query(query)
        hits = self._ranker.top(self._conn, parsed, self._filters, limit, any_term=False)
        if len(hits) < limit:
            hits += self._ranker.top(self._conn, parsed, self._filters, limit, any_term=True)
        return len(hits)
