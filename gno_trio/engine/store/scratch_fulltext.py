"""What FTS5 makes of a few texts, asked of a private in-memory database: snippets, tokens.

The index's tokenizer (a Porter stem, folded diacritics) and its
``snippet()`` are FTS5's own; search asks them of texts it holds (a query's
words, the chunks of a page of hits, its self-checks) in tables of an
in-memory database, never of the index. Nothing here reads or writes the
index; every index a host serves searches through the same FTS5.

Cutting snippets (:class:`SnippetTable`): a private, in-memory FTS5 table
holds only the chunks being cut.

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

import functools
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


def _private(tokenize: str) -> sqlite3.Connection:
    """A fresh in-memory database whose ``said`` table tokenizes as ``tokenize`` does,
    with its words in order in ``said_words``."""
    conn = sqlite3.connect(":memory:")
    quoted = tokenize.replace("'", "''")
    conn.execute(f"CREATE VIRTUAL TABLE said USING fts5(text, tokenize = '{quoted}')")
    conn.execute("CREATE VIRTUAL TABLE said_words USING fts5vocab(said, instance)")
    return conn


def stems_of(tokenize: str, words: set[str]) -> dict[str, str]:
    """What the tokenizer makes of each of these words (each one ASCII token): all of
    them indexed as one row of a private table, read back in order; empty when some
    word is not one token."""
    if not words:
        return {}
    ordered = sorted(words)
    conn = _private(tokenize)
    try:
        conn.execute("INSERT INTO said(rowid, text) VALUES (1, ?)", (" ".join(ordered),))
        terms = dict(conn.execute("SELECT offset, term FROM said_words"))
    finally:
        conn.close()
    if len(terms) != len(ordered):
        return {}
    return {word: str(terms[offset]) for offset, word in enumerate(ordered)}


def index_terms(tokenize: str, words: Sequence[str]) -> list[str]:
    """The index term the tokenizer makes of each word ('' for a word it drops)."""
    return list(_index_terms(tokenize, tuple(words)))


@functools.lru_cache(maxsize=1024)
def _index_terms(tokenize: str, words: tuple[str, ...]) -> tuple[str, ...]:
    """:func:`index_terms`, kept for queries asked again (agents repeat themselves)."""
    conn = _private(tokenize)
    try:
        conn.executemany("INSERT INTO said(rowid, text) VALUES (?, ?)", list(enumerate(words, 1)))
        found: dict[int, str] = {}
        for doc, term in conn.execute("SELECT doc, term FROM said_words ORDER BY doc, offset"):
            found.setdefault(int(doc), str(term))
    finally:
        conn.close()
    return tuple(found.get(i, "") for i in range(1, len(words) + 1))


ReferenceCut = tuple[str, list[str], list[list[str]]]
"""FTS5's snippet of a text, the text's tokens and each phrase's tokens."""


def reference_snippets(
    tokenize: str, cases: Sequence[tuple[str, Sequence[str], int]]
) -> list[ReferenceCut] | None:
    """FTS5's own ``snippet(text, '[', ']', '...', width)`` of each ``(text, phrases,
    width)`` for the phrases, with the tokens it saw; None when this SQLite cannot."""
    conn = _private(tokenize)
    try:
        found: list[ReferenceCut] = []
        for rowid, (text, phrases, width) in enumerate(cases, start=1):
            match = " OR ".join(f'"{phrase}"' for phrase in phrases)
            conn.execute("INSERT INTO said(rowid, text) VALUES (?, ?)", (rowid, text))
            expected = conn.execute(
                "SELECT snippet(said, 0, '[', ']', '...', ?) FROM said "
                "WHERE said MATCH ? AND rowid = ?",
                (width, match, rowid),
            ).fetchone()[0]
            wanted = []
            for number, phrase in enumerate(phrases, start=1000 * rowid):
                conn.execute("INSERT INTO said(rowid, text) VALUES (?, ?)", (number, phrase))
                wanted.append(_row_terms(conn, number))
            found.append((str(expected), _row_terms(conn, rowid), wanted))
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    return found


def _row_terms(conn: sqlite3.Connection, rowid: int) -> list[str]:
    """The tokens of one row of ``said``, in order."""
    return [
        str(term)
        for (term,) in conn.execute(
            "SELECT term FROM said_words WHERE doc = ? ORDER BY offset", (rowid,)
        )
    ]
