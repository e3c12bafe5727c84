"""How the tantivy document index cuts text into terms, and the fields it holds.

The analyzer reproduces what the FTS5 tokenizer of the index does, so a
query finds the same documents on either backend:

* words are runs of letters, digits, marks and private-use characters
  (FTS5's ``unicode61`` token characters, with combining marks kept inside
  the word so scripts with vowel signs are not cut apart); everything else
  separates words. Python turns every separator into a space
  (:func:`words`) and tantivy splits on spaces: its regular-expression
  tokenizer cut the same words at twice the indexing time of the whole
  tantivy index (measured on 10,000 notes: 8.2 s of CPU against 3.4 s).
  A run of Chinese, Japanese or Korean characters is one term on both
  backends, and a query finds it by its leading characters
  (every plain query word is a prefix term);
* letters are lower-cased and diacritics folded (``remove_diacritics 2``);
  text is brought to Unicode NFC first, so a decomposed accent folds like a
  precomposed one, as FTS5 folds it;
* ``porter`` and ``snowball english`` stem English words (tantivy's stemmer
  is Snowball English, the stemmer GNO names; FTS5 only has Porter's);
* ``trigram`` indexes every three-character window instead (substring search).

Field weights are the FTS5 ranking's (:data:`FIELD_WEIGHTS`), applied as
boosts per field.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Final

import tantivy

from gno_trio.engine.store import fulltext

TEXT_FIELDS: Final = fulltext.DOCUMENT_FIELDS
"""The ranked fields: ``documents_fts``'s, filled with the same text."""
FIELD_WEIGHTS: Final = fulltext.FIELD_WEIGHTS
"""BM25 weights of :data:`TEXT_FIELDS`, the FTS5 ranking's."""

ID_FIELD: Final = "id"
"""``documents.id``; the reserved value :data:`STAMP_ID` marks the stamp document."""
STAMP_ID: Final = 0
STAMP_FIELD: Final = "stamp"
GENERATION_FIELD: Final = "generation"
LAYOUT: Final = 2
"""Version of the fields and analysis below: an index stamped with another is rebuilt."""


def stamped_generation(generation: str) -> str:
    """What the stamp document records: the directory's generation and the layout version."""
    return f"{generation}:{LAYOUT}"


# Exact-match keys for the search filters, computed by SQLite from the
# document's row so a filter means exactly what its SQL form means.
COLLECTION_KEY: Final = "collection"
URI_KEY: Final = "uri"
TAG_KEY: Final = "tag"
CATEGORY_KEY: Final = "category"
AUTHOR_KEY: Final = "author_key"
LANGUAGE_KEY: Final = "language_key"
NO_LANGUAGE: Final = "-"
"""The language key of a document without a language hint (no real hint is ``-``)."""
DATE_KEY: Final = "date"
"""``julianday()`` of the document's date, as the ``since``/``until`` filters compare it."""
KEY_FIELDS: Final = (COLLECTION_KEY, URI_KEY, TAG_KEY, CATEGORY_KEY, AUTHOR_KEY, LANGUAGE_KEY)

ANALYZER_NAME: Final = "gno"
_SPACE: Final = 0x20
_ASCII_WORDS: Final = bytes(code if chr(code).isalnum() else _SPACE for code in range(256))
"""``bytes.translate`` table for ASCII text: letters and digits stay, the rest become spaces."""
_CACHED_CHARACTERS: Final = 1 << 16
"""At most this many non-ASCII characters are remembered (a hostile text cannot grow it more)."""


class _WordCharacters(dict[int, int]):
    """``str.translate`` table: word characters map to themselves, the others to a space.

    Filled on first sight of each character, from its Unicode category:
    letters (L*), digits and numbers (N*), marks (M*) and private use (Co)
    are word characters, as in FTS5's ``unicode61``.
    """

    def __missing__(self, code: int) -> int:
        category = unicodedata.category(chr(code))
        value = code if category[0] in "LNM" or category == "Co" else _SPACE
        if len(self) < _CACHED_CHARACTERS:
            self[code] = value
        return value


_WORD_CHARACTERS: Final = _WordCharacters()


def analyzer(tokenizer: str) -> tantivy.TextAnalyzer:
    """The analyzer matching an FTS5 ``tokenize=`` clause (see the module docstring)."""
    if tokenizer.startswith("trigram"):
        return (
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.ngram(3, 3, False))
            .filter(tantivy.Filter.lowercase())
            .build()
        )
    builder = (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
    )
    if tokenizer.startswith("porter"):
        builder = builder.filter(tantivy.Filter.stemmer("english"))
    return builder.build()


def is_trigram(tokenizer: str) -> bool:
    return tokenizer.startswith("trigram")


def normalized(text: str) -> str:
    """``text`` in NFC (cheap when it already is, as nearly all text is)."""
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def words(text: str) -> str:
    """``text`` in NFC with every character that is not a word character made a space.

    What the analyzer of a word tokenizer is given, when indexing and when
    querying alike (a trigram index is given the text itself: see
    :func:`analyzed_text`).
    """
    if text.isascii():  # ASCII text is in NFC already
        return text.encode("ascii").translate(_ASCII_WORDS).decode("ascii")
    return normalized(text).translate(_WORD_CHARACTERS)


def analyzed_text(tokenizer: str) -> Callable[[str], str]:
    """What the index's analyzer is handed for a text: :func:`words`, or NFC text for trigrams."""
    return normalized if is_trigram(tokenizer) else words


def schema() -> tantivy.Schema:
    """The document index's fields: ranked text, exact filter keys, the id."""
    builder = tantivy.SchemaBuilder()
    # Signed: tantivy's Python delete-by-term reads an int as a signed term.
    builder.add_integer_field(ID_FIELD, stored=True, indexed=True, fast=True)
    for name in TEXT_FIELDS:
        builder.add_text_field(name, tokenizer_name=ANALYZER_NAME, index_option="position")
    for name in KEY_FIELDS:
        builder.add_text_field(name, tokenizer_name="raw", index_option="basic")
    builder.add_float_field(DATE_KEY, indexed=True, fast=True)
    builder.add_integer_field(STAMP_FIELD, stored=True)
    builder.add_text_field(GENERATION_FIELD, stored=True, tokenizer_name="raw")
    return builder.build()
