"""GNO's query grammar and search filters as tantivy queries.

The parsed query (:mod:`..querygrammar`) means on tantivy what its FTS5 form
means on ``documents_fts``:

* a plain word is a prefix term: its analyzed form, expanded over the term
  dictionary of each field, every expansion scored (BM25); past
  :data:`PREFIX_TERMS` expansions the rest still match (a regular
  expression over the dictionary) but add nothing to the score;
* a word that analyzes to several terms (``node.js`` typed unquoted cannot
  happen, but mixed scripts can) is a phrase whose last term is a prefix,
  as FTS5 reads ``"a b"*``;
* a quoted phrase or a hyphenated word is an exact phrase of its terms;
* every positive unit must match (any one of them for the any-term top-up),
  and no negated one may;
* a unit matches in any of the text fields, each field's score boosted by
  its weight (filepath 1.5, title 4, body 1).

Filters are exact keys computed by SQLite from the document's row when it
was indexed (:mod:`.store`), so each means what its SQL form means; they
add nothing to the score.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from typing import Final

import tantivy

from gno_trio.engine.search.docindex import analysis
from gno_trio.engine.search.querygrammar import LexicalQuery, QueryUnit

PREFIX_TERMS: Final = 64
"""Expansions of one prefix term scored per field; further ones only match."""
_REGEX_SPECIAL: Final = frozenset("\\.+*?()|[]{}^$#&-~")

Occur = tantivy.Occur
Query = tantivy.Query


@cache
def _analyzer(tokenizer: str) -> tantivy.TextAnalyzer:
    return analysis.analyzer(tokenizer)


def regex_literal(text: str) -> str:
    """``text`` as a literal in tantivy's regular-expression syntax."""
    return "".join("\\" + char if char in _REGEX_SPECIAL else char for char in text)


class QueryBuilder:
    """Builds queries against one searcher (prefix terms expand over its dictionary)."""

    def __init__(self, searcher: tantivy.Searcher, schema: tantivy.Schema, tokenizer: str) -> None:
        self._searcher = searcher
        self._schema = schema
        self._analyzer = _analyzer(tokenizer)
        self._trigram = analysis.is_trigram(tokenizer)
        self._text = analysis.analyzed_text(tokenizer)

    def terms(self, text: str) -> list[str]:
        return self._analyzer.analyze(self._text(text))

    # -- text ---------------------------------------------------------------

    def unit(self, unit: QueryUnit) -> Query | None:
        """A term or phrase over every text field, each boosted; None if it has no terms."""
        words = self.terms(unit.text)
        if not words:
            return None
        if len(words) == 1 and not self._trigram:
            return self._word(words[0], prefix=not unit.is_phrase)
        fields = []
        for name, weight in zip(analysis.TEXT_FIELDS, analysis.FIELD_WEIGHTS, strict=True):
            query = self._in_field(name, words, prefix=not unit.is_phrase)
            if query is not None:
                fields.append((Occur.Should, Query.boost_query(query, weight)))
        return Query.boolean_query(fields) if fields else None

    def _in_field(self, name: str, words: list[str], *, prefix: bool) -> Query | None:
        if self._trigram:
            if len(words) == 1:
                return Query.term_query(self._schema, name, words[0])
            return Query.boolean_query(
                [(Occur.Must, Query.term_query(self._schema, name, w)) for w in words]
            )
        if prefix:
            return Query.phrase_prefix_query(self._schema, name, list(words))
        return Query.phrase_query(self._schema, name, list(words))

    def _word(self, term: str, *, prefix: bool) -> Query | None:
        """One term (every word it begins, ``prefix``) over the text fields, weighed as FTS5 does.

        FTS5 gives a term one inverse document frequency, counted over whole
        documents, and counts every word a prefix expands to as that one
        term; tantivy weighs each word of each field by its own frequency in
        that field. Each word's score is rescaled to FTS5's weight (times
        the field's), so a rare expansion or a rare title word does not
        outweigh the term itself.
        """
        documents = self._searcher.num_docs
        found: list[tuple[str, float, list[tuple[str, int]]]] = []
        for name, weight in zip(analysis.TEXT_FIELDS, analysis.FIELD_WEIGHTS, strict=True):
            if prefix:
                words = self._searcher.terms_with_prefix(name, term, limit=PREFIX_TERMS)
            else:
                frequency = self._searcher.doc_freq(name, term)
                words = [(term, frequency)] if frequency else []
            if words:
                found.append((name, weight, words))
        if not found:
            return None
        pooled = max(_pooled(documents, [df for _, df in words]) for _, _, words in found)
        target = _fts5_idf(documents, pooled)
        fields = []
        for name, weight, words in found:
            clauses = [
                (
                    Occur.Should,
                    Query.boost_query(
                        Query.term_query(self._schema, name, word),
                        weight * target / _idf(documents, df),
                    ),
                )
                for word, df in words
            ]
            if prefix and len(words) >= PREFIX_TERMS:  # more exist: they match, unscored
                every = Query.regex_query(self._schema, name, regex_literal(term) + ".*")
                clauses.append((Occur.Should, Query.const_score_query(every, 0.0)))
            fields.append((Occur.Should, Query.boolean_query(clauses)))
        return Query.boolean_query(fields)

    def text(self, parsed: LexicalQuery, *, any_term: bool) -> list[tuple[Occur, Query]] | None:
        """The clauses of a parsed query: all positives (or any, ``any_term``), no negative.

        None when a required unit cannot match anything (so nothing can).
        """
        clauses: list[tuple[Occur, Query]] = []
        for unit in parsed.units:
            query = self.unit(unit)
            if unit.negated:
                if query is not None:
                    clauses.append((Occur.MustNot, query))
                continue
            if query is None:
                if not any_term:
                    return None
                continue
            clauses.append((Occur.Should if any_term else Occur.Must, query))
        if not any(occur != Occur.MustNot for occur, _ in clauses):
            return None
        return clauses

    def excluded(self, phrases: Sequence[str]) -> list[tuple[Occur, Query]]:
        """``exclude``: no document containing any of these exact phrases."""
        clauses = []
        for phrase in phrases:
            query = self.unit(QueryUnit(phrase, is_phrase=True, negated=True))
            if query is not None:
                clauses.append((Occur.MustNot, query))
        return clauses

    # -- filters ------------------------------------------------------------

    def _key(self, name: str, value: str) -> Query:
        return Query.term_query(self._schema, name, value)

    def _keys(self, name: str, values: Sequence[str]) -> Query:
        return Query.term_set_query(self._schema, name, list(values))

    def _starting(self, name: str, prefix: str) -> Query:
        return Query.regex_query(self._schema, name, regex_literal(prefix) + "(?s:.*)")

    def collection(self, name: str) -> Query:
        return self._key(analysis.COLLECTION_KEY, name)

    def uri_prefix(self, prefix: str) -> Query:
        return self._starting(analysis.URI_KEY, prefix)

    def tags_all(self, tags: Sequence[str]) -> list[Query]:
        return [self._key(analysis.TAG_KEY, tag) for tag in tags]

    def tags_any(self, tags: Sequence[str]) -> Query:
        return self._keys(analysis.TAG_KEY, tags)

    def categories(self, categories: Sequence[str]) -> Query:
        return self._keys(analysis.CATEGORY_KEY, categories)

    def author(self, fragment: str) -> Query:
        return Query.regex_query(
            self._schema, analysis.AUTHOR_KEY, "(?s:.*)" + regex_literal(fragment) + "(?s:.*)"
        )

    def language(self, lang: str) -> Query:
        return Query.boolean_query(
            [
                (Occur.Should, self._key(analysis.LANGUAGE_KEY, analysis.NO_LANGUAGE)),
                (Occur.Should, self._key(analysis.LANGUAGE_KEY, lang)),
                (Occur.Should, self._starting(analysis.LANGUAGE_KEY, lang + "-")),
            ]
        )

    def dated(self, low: float | None, high: float | None) -> Query:
        """Documents dated within the bounds, as julian days (the filters' SQL form compares
        dates so: :meth:`~gno_trio.engine.store.document_index.DocumentIndexStore.julian_days`)."""
        return Query.range_query(
            self._schema,
            analysis.DATE_KEY,
            tantivy.FieldType.Float,
            lower_bound=float(low) if low is not None else None,
            upper_bound=float(high) if high is not None else None,
        )

    def document(self, doc_id: int) -> Query:
        return Query.term_query(self._schema, analysis.ID_FIELD, doc_id)

    def documents(self, doc_ids: Sequence[int]) -> Query:
        return Query.term_set_query(self._schema, analysis.ID_FIELD, list(doc_ids))


def _idf(documents: int, frequency: int) -> float:
    """tantivy's BM25 inverse document frequency."""
    return math.log1p((documents - frequency + 0.5) / (frequency + 0.5))


def _fts5_idf(documents: int, frequency: int) -> float:
    """FTS5's: ``log((N - n + 0.5) / (n + 0.5))``, never below a millionth."""
    return max(1e-6, math.log((documents - frequency + 0.5) / (frequency + 0.5)))


def _pooled(documents: int, frequencies: Sequence[int]) -> int:
    """About how many documents hold any of several words (each held independently)."""
    if documents <= 0:
        return 0
    missing = 1.0
    for frequency in frequencies:
        missing *= max(0.0, 1.0 - frequency / documents)
    return round(documents * (1.0 - missing))


def unscored(query: Query) -> Query:
    """A filter: it decides what matches and adds nothing to the score."""
    return Query.const_score_query(query, 0.0)
