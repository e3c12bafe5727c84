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
        conn.execute("CREATE VIRTUAL TABLE cut_words USING fts5vocab(cut, instance)")
        # Query phrases are tokenized in a table of their own: reading their
        # tokens back then never walks the chunks' words.
        conn.execute(f"CREATE VIRTUAL TABLE said USING fts5(text, tokenize = '{quoted}')")
        conn.execute("CREATE VIRTUAL TABLE said_words USING fts5vocab(said, instance)")
        held[tokenize] = conn
    return conn


class SnippetTable:
    """Chunks loaded for one search; :meth:`snippets` cuts them as the chunk index would.

    It also tells where words occur in the loaded chunks (:meth:`positions`),
    which is what ranking a document's chunks needs, and how the index's
    tokenizer splits a text (:meth:`tokens`).
    """

    def __init__(self, tokenize: str) -> None:
        self._tokenize = tokenize
        self._opened: sqlite3.Connection | None = None
        self._said = 0
        self._held: set[int] = set()

    def begin(self) -> None:
        """Open the transaction everything loaded lives in (once; a search that cuts
        nothing here never touches the scratch database)."""
        if self._opened is None:
            self._opened = _scratch(self._tokenize)
            self._opened.execute("BEGIN")

    def end(self) -> None:
        if self._opened is not None:
            self._opened.execute("ROLLBACK")
            self._opened = None
            self._held.clear()

    @property
    def _conn(self) -> sqlite3.Connection:
        self.begin()
        assert self._opened is not None
        return self._opened

    def load(self, texts: Mapping[int, str]) -> None:
        """Add chunk texts (by chunk id); a chunk already loaded is left as it is."""
        self.begin()
        fresh = [(chunk_id, text) for chunk_id, text in texts.items() if chunk_id not in self._held]
        self._conn.executemany("INSERT INTO cut(rowid, text) VALUES (?, ?)", fresh)
        self._held.update(chunk_id for chunk_id, _ in fresh)

    def holds(self, chunk_id: int) -> bool:
        return chunk_id in self._held

    def tokens(self, text: str) -> list[str]:
        """The tokens ``text`` is indexed as (FTS5 tokenizes a query phrase alike)."""
        self._said += 1
        self._conn.execute("INSERT INTO said(rowid, text) VALUES (?, ?)", (self._said, text))
        found = self._conn.execute(
            "SELECT term, offset FROM said_words WHERE doc = ?", (self._said,)
        ).fetchall()
        return [str(term) for term, _ in sorted(found, key=lambda pair: int(pair[1]))]

    def _words(self, term: str, *, prefix: bool) -> Iterator[tuple[str, int, int]]:
        """(term, chunk id, token offset) of each occurrence of ``term`` (of every word
        it begins, ``prefix``) in the loaded chunks."""
        if prefix:
            rows = self._conn.execute(
                "SELECT term, doc, offset FROM cut_words WHERE term >= ?", (term,)
            )
        else:
            rows = self._conn.execute(
                "SELECT term, doc, offset FROM cut_words WHERE term = ?", (term,)
            )
        for found, doc, offset in rows:
            if prefix and not str(found).startswith(term):
                break  # terms come in order: past the last word ``term`` begins
            yield str(found), int(doc), int(offset)

    def positions(self, term: str, *, prefix: bool) -> dict[int, set[int]]:
        """Token offsets of ``term`` (or of any word it begins) in each loaded chunk."""
        found: dict[int, set[int]] = {}
        for _, doc, offset in self._words(term, prefix=prefix):
            found.setdefault(doc, set()).add(offset)
        return found

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


class Tokenized:
    """Query phrases tokenized as the index does, each text once per search.

    One search tokenizes the same phrase up to three times (ranking all
    terms, then any term, then cutting the snippets), and a word the corpus
    lacks costs a round through a scratch table each time; the tokens of a
    text never change, so the search asks once.
    """

    __slots__ = ("_found", "_tokenize")

    def __init__(self, tokenize: str) -> None:
        self._tokenize = tokenize
        self._found: dict[str, list[str]] = {}

    def __call__(self, text: str) -> list[str]:
        found = self._found.get(text)
        if found is None:
            with scratch_table(self._tokenize) as table:
                found = self._found[text] = table.tokens(text)
        return found


@contextmanager
def scratch_table(tokenize: str) -> Iterator[SnippetTable]:
    """An empty table tokenizing as ``tokenize``, emptied again when the block ends."""
    table = SnippetTable(tokenize)
    try:
        yield table
    finally:
        table.end()
