"""Evidence-weighted fusion: each leg counts as much as the query gives it to work with.

Reciprocal rank fusion gives BM25 and vectors equal say whatever the query
is, and a shortcut that trusted a standout BM25 hit skipped the vector leg on
link-list and index pages. Here every candidate of either leg gets both
scores: its raw BM25 over the query's content words (words in most documents,
"what", "the", left out; 0 when the words miss it) and the cosine of its
chunk nearest the query. Each is min-max normalised over the candidates and
mixed with weight ``a`` for BM25 and ``1 - a`` for vectors, where

    a = LEXICAL_SHARE x coverage x strength

``coverage`` is the share of the query's words the index holds at all (CJK
text counted as bigrams, as unicode61 keeps a CJK run as one token), and
``strength`` how much of the content words' summed idf the best BM25
document collects, against BM25's ceiling of ``k1 + 1`` per word. A
question in Chinese over English notes has coverage 0 and ranks by meaning
alone; a known-item query whose words one page matches strongly leans on
them; a natural question whose words are spread thin over many pages leans
on meaning. ``term`` entries and a ``hyde`` passage add their own
normalised evidence at fixed small weights.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from gno_trio.engine.search.querygrammar import LexicalQuery
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import DEFAULT_TOKENIZE, Connection, stored_tokenizer
from gno_trio.engine.store.scratch_fulltext import index_terms

LEXICAL_SHARE: Final = 0.6
"""BM25's weight at full coverage (vectors keep the rest)."""
SATURATION: Final = 2.2
"""Top BM25 over the content words' summed idf at which they count as fully answered:
``k1 + 1``, the most one word can give a document."""
COMMON_SHARE: Final = 0.5
"""A word in more than this share of documents tells none apart (not content)."""
EVIDENCE_DEPTH: Final = 100
"""How many documents' BM25 of the content words is read (the rest score 0)."""
WEIGHT_TERM: Final = 0.25
"""What the caller's ``term`` entries add (their BM25, normalised, averaged)."""
SENTENCE_SHARE: Final = 0.3
"""A rescored candidate's best sentence-window cosine's share of its vector evidence
(its chunk cosine keeps the rest; see :mod:`.finevectors`)."""
WEIGHT_HYDE: Final = 0.25
"""What the ``hyde`` passage's cosine adds (normalised)."""

_WORD = re.compile(r"[^\W_]+")
_CJK = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\u1100-\u11ff\u3130-\u318f]+"
)


def query_tokens(lexical: LexicalQuery) -> list[tuple[str, bool]]:
    """The words of the query's positive terms and phrases, lower-cased, each once.

    Each is (token, cjk): a run of CJK characters gives its bigrams (a single
    character stands alone), everything else its unicode61-like words.
    """
    seen: dict[str, bool] = {}
    for text in (*lexical.positive_terms, *lexical.phrases):
        for word in _WORD.findall(text.lower()):
            rest = _CJK.sub(" ", word)
            for other in rest.split():
                seen.setdefault(other, False)
            for run in _CJK.findall(word):
                grams = [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
                for gram in grams:
                    seen.setdefault(gram, True)
    return list(seen.items())


@dataclass(frozen=True, slots=True)
class LexicalEvidence:
    """What the index holds of the query's words.

    ``coverage``: share of the tokens some document holds. ``content``: the
    held tokens that are not in most documents (the words that tell
    documents apart; all held ones when every one is common), and ``idf``
    their summed inverse document frequency, the most BM25 evidence one
    document could collect from them at a term frequency of one.
    """

    coverage: float
    content: tuple[str, ...]
    idf: float


def lexical_evidence(conn: Connection, lexical: LexicalQuery) -> LexicalEvidence:
    """The query's tokens looked up in the document index's own vocabulary.

    Each token is tokenized by the index's tokenizer (its stem, folded
    diacritics) and counted as BM25 searches it: as a prefix, over every
    indexed word it begins (an upper bound of its document frequency).
    """
    tokens = query_tokens(lexical)
    if not tokens:
        return LexicalEvidence(1.0, (), 0.0)
    terms = index_terms(stored_tokenizer(conn) or DEFAULT_TOKENIZE, [t for t, _ in tokens])
    total = SQLITE_STORES.counts(conn).active_documents()
    found = SQLITE_STORES.document_matches(conn).documents_beginning(
        [term for term in terms if term]
    )
    counts = []
    for (token, _), term in zip(tokens, terms, strict=True):
        docs = found.get(term, 0) if term else 0
        if docs:
            counts.append((token, min(int(docs), max(1, int(total)))))
    held = len(counts)
    content = [(t, d) for t, d in counts if d <= COMMON_SHARE * total] or counts
    return LexicalEvidence(
        held / len(tokens),
        tuple(t for t, _ in content),
        sum(idf(d, int(total)) for _, d in content),
    )


def idf(docs: int, total: int) -> float:
    """BM25's inverse document frequency of a word in ``docs`` of ``total`` documents."""
    return math.log((total - docs + 0.5) / (docs + 0.5) + 1.0)


def strength(top_bm25: float, evidence: LexicalEvidence) -> float:
    """How much of the query's content evidence the best BM25 document collects (0-1)."""
    if evidence.idf <= 0:
        return 0.0
    return min(1.0, top_bm25 / (SATURATION * evidence.idf))


def lexical_weight(evidence: LexicalEvidence, top_bm25: float) -> float:
    """BM25's weight in the fusion: full share only for a query whose words the index
    holds and whose best document matches them strongly."""
    return LEXICAL_SHARE * evidence.coverage * strength(top_bm25, evidence)


def min_max(values: Sequence[float | None], *, floor: float | None = None) -> list[float]:
    """Each value scaled to [0, 1] over the known ones; an unknown one scores 0.

    ``floor`` fixes the low end (BM25: 0, a document the words miss), else it
    is the lowest known value. All equal: each known one scores 1.
    """
    known = [v for v in values if v is not None]
    if not known:
        return [0.0 for _ in values]
    high = max(known)
    low = floor if floor is not None else min(known)
    if high - low <= 1e-12:
        return [0.0 if v is None else 1.0 for v in values]
    return [0.0 if v is None else max(0.0, (v - low) / (high - low)) for v in values]


@dataclass(slots=True)
class Evidence:
    """What the legs said of one candidate, raw and normalised, and its fused score."""

    bm25: float | None = None
    cosine: float | None = None
    term: float = 0.0
    hyde: float | None = None
    sentence: float | None = None  # best sentence-window cosine (low-coverage queries only)
    bm25_norm: float = 0.0
    vector_norm: float = 0.0
    score: float = 0.0


def vector_evidence(e: Evidence) -> float | None:
    """The candidate's vector evidence: its chunk cosine, mixed with its best sentence
    window's when it was rescored (the better of the two alone favours long pages,
    whose many windows give more chances of one close match)."""
    if e.sentence is None or e.cosine is None:
        return e.cosine
    return (1.0 - SENTENCE_SHARE) * e.cosine + SENTENCE_SHARE * e.sentence


def weigh(evidence: Iterable[Evidence], a: float, terms: int) -> None:
    """Normalise each leg over the candidates and set each one's fused score."""
    items = list(evidence)
    bm25 = min_max([e.bm25 for e in items], floor=0.0)
    cosine = min_max([vector_evidence(e) for e in items])
    term = min_max([e.term if terms else None for e in items], floor=0.0)
    hyde = min_max([e.hyde for e in items])
    for e, b, v, t, h in zip(items, bm25, cosine, term, hyde, strict=True):
        e.bm25_norm, e.vector_norm = b, v
        e.score = a * b + (1.0 - a) * v + WEIGHT_TERM * t + WEIGHT_HYDE * h


__all__ = [
    "EVIDENCE_DEPTH",
    "LEXICAL_SHARE",
    "Evidence",
    "LexicalEvidence",
    "lexical_evidence",
    "lexical_weight",
    "min_max",
    "query_tokens",
    "vector_evidence",
    "weigh",
]
