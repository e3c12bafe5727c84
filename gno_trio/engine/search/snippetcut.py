"""Cutting snippets in a private, in-memory FTS5 table that holds only the chunks being cut.

FTS5's ``snippet()`` over the chunk index paid for the whole index on every
search: each chunk of a ``rowid IN (...)`` list set the expression up again
(for a prefix term, a merge of every indexed word it begins, corpus-wide),
and each chunk's text was read back through the ``chunk_texts`` view. Yet a
snippet depends on one row only: that row's text and where the query's
phrases occur in it, never on other rows or corpus statistics. So the same
FTS5 ``snippet()``, with the same tokenizer, over a table holding just the
few chunks to cut gives the very same text, at a cost that no longer grows
with the index: the chunks are tokenized once, a prefix expands over their
words only.

The table lives in one in-memory database per thread and tokenizer (SQLite
connections are not shared across threads) and is emptied by rolling back
the transaction the chunks were inserted in.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

_LOCAL = threading.local()


def _scratch(tokenize: str) -> sqlite3.Connection:
    """This thread's in-memory database whose ``cut`` table tokenizes as ``tokenize`` does."""
    held: dict[str, sqlite3.Connection] | None = getattr(_LOCAL, "databases", None)
    if held is None:
        held = _LOCAL.databases = {}
    conn = held.get(tokenize)
    if conn is None:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        quoted = tokenize.replace("'", "''")
        conn.execute(f"CREATE VIRTUAL TABLE cut USING fts5(text, tokenize = '{quoted}')")
        held[tokenize] = conn
    return conn


class SnippetTable:
    """Chunks loaded for one search; :meth:`snippets` cuts them as the chunk index would."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def snippets(
        self,
        chunk_ids: Sequence[int],
        match: str,
        marks: tuple[str, str, str, int],
    ) -> dict[int, str]:
        """``snippet(text, open, close, ellipsis, tokens)`` of each chunk ``match`` matches.

        A malformed expression matches nothing, as on the chunk index.
        """
        if not chunk_ids:
            return {}
        places = ", ".join("?" for _ in chunk_ids)
        try:
            rows = self._conn.execute(
                f"SELECT rowid, snippet(cut, 0, ?, ?, ?, ?) FROM cut "
                f"WHERE cut MATCH ? AND rowid IN ({places})",
                (*marks, match, *chunk_ids),
            ).fetchall()
        except sqlite3.OperationalError:
            return {}
        return {int(chunk_id): str(snippet) for chunk_id, snippet in rows}


@contextmanager
def loaded(tokenize: str, texts: Mapping[int, str]) -> Iterator[SnippetTable]:
    """A table holding these chunk texts (by chunk id) for as long as the block runs."""
    conn = _scratch(tokenize)
    conn.execute("BEGIN")
    try:
        conn.executemany("INSERT INTO cut(rowid, text) VALUES (?, ?)", texts.items())
        yield SnippetTable(conn)
    finally:
        conn.execute("ROLLBACK")
