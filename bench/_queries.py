"""Varied queries that hit, shared by the search benchmarks.

Each query is drawn (seeded) from the headings of one indexed document, so
it is about something the corpus holds, in nine kinds taken in turn:

* one word; two words; three words (of one heading, so they co-occur);
* an exact phrase (two adjacent heading words, quoted);
* a word with a negation (``word -other``, the other word from elsewhere);
* a prefix (``auth*``-style: the first four letters of a word) and a word;
* a word with a filter: the collection, a URI prefix (the document's own
  folder), or an excluded phrase plus a ``since`` date.

Servers benchmarked over the wire take the first six kinds (their tool call
carries the query and the limit only). Every query is run once and kept only
if it finds something; :func:`check_uncached` refuses a set with fewer
distinct query strings than the parse cache holds, so a benchmark can never
time a cached parse.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from gno_trio.engine import Engine, Scope, SearchRequest
from gno_trio.engine.search.querygrammar import parse_query, wants_recency
from gno_trio.errors import GnoError

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{3,}")
TEXT_KINDS = ("one word", "two words", "phrase", "negation", "three words", "prefix")
KINDS = (*TEXT_KINDS, "collection filter", "uri prefix filter", "exclude + since")
DEFAULT_COUNT = 1200
"""More distinct queries than any cache on the search path holds (see :func:`check_uncached`)."""


def _draw(
    kind: str,
    rng: random.Random,
    heading: list[str],
    folder: str,
    vocabulary: list[str],
    collection: str,
    limit: int | None,
) -> SearchRequest | None:
    """One request of ``kind`` from one document's heading words, or None if it has too few."""
    limit = limit or rng.choice((5, 10))
    if kind in ("two words", "phrase", "prefix") and len(heading) < 2:
        return None
    if kind == "three words" and len(heading) < 3:
        return None
    first = rng.randrange(len(heading))
    word = heading[first]
    if kind == "one word":
        return SearchRequest(query=word, limit=limit)
    if kind == "two words":
        return SearchRequest(query=" ".join(rng.sample(heading, 2)), limit=limit)
    if kind == "three words":
        return SearchRequest(query=" ".join(rng.sample(heading, 3)), limit=limit)
    if kind == "phrase":
        start = rng.randrange(len(heading) - 1)
        return SearchRequest(query=f'"{heading[start]} {heading[start + 1]}"', limit=limit)
    if kind == "negation":
        other = rng.choice([w for w in vocabulary if w not in heading])
        return SearchRequest(query=f"{word} -{other}", limit=limit)
    if kind == "prefix":
        other = rng.choice([w for w in heading if w != word] or [word])
        return SearchRequest(query=f"{word[:4]} {other}", limit=limit)
    if kind == "collection filter":
        return SearchRequest(query=word, limit=limit, scope=Scope(collections=(collection,)))
    if kind == "uri prefix filter":
        return SearchRequest(
            query=word, limit=limit, scope=Scope(uri_prefix=f"gno://{collection}/{folder}")
        )
    other = rng.choice([w for w in vocabulary if w not in heading])
    return SearchRequest(query=word, limit=limit, scope=Scope(exclude=[other], since="2000-01-01"))


def build_queries(
    engine: Engine,
    count: int,
    *,
    collection: str,
    kinds: Sequence[str] = KINDS,
    limit: int | None = None,
    seed: int = 7,
) -> tuple[list[tuple[str, SearchRequest]], int]:
    """``count`` (kind, request) pairs, each query text different, each finding something.

    Also returns how many drawn queries found nothing and were replaced.

    ``limit`` fixes every request's limit (default: 5 or 10, drawn).
    """
    with engine.connection() as conn:
        documents = [
            (str(PurePosixPath(rel).parent), json.loads(headings))
            for rel, headings in conn.execute(
                "SELECT rel_path, headings_json FROM documents WHERE active = 1 ORDER BY rel_path"
            )
        ]
    headings = [
        (folder, words)
        for folder, heads in documents
        for head in heads
        if (words := list(dict.fromkeys(w.lower() for w in _WORD.findall(str(head)))))
    ]
    vocabulary = sorted({w for _, words in headings for w in words})
    rng = random.Random(seed)
    chosen: list[tuple[str, SearchRequest]] = []
    taken: set[str] = set()
    redrawn = attempts = 0
    while len(chosen) < count:
        attempts += 1
        if attempts > count * 50:
            raise SystemExit(f"the corpus yields only {len(chosen)} distinct queries that hit")
        kind = kinds[len(chosen) % len(kinds)]
        folder, words = rng.choice(headings)
        folder = "" if folder == "." else folder + "/"
        request = _draw(kind, rng, words, folder, vocabulary, collection, limit)
        if request is None or _key(request) in taken:
            continue
        try:
            found = engine.search.lexical(request)["results"]
        except GnoError:
            found = []
        if found:
            chosen.append((kind, request))
            taken.add(_key(request))
        else:
            redrawn += 1
    return chosen, redrawn


def _key(request: SearchRequest) -> str:
    """Requests are told apart by their query text: a repeated text would be a cached parse."""
    return request.query


def check_uncached(queries: Sequence[str]) -> int:
    """The number of distinct query strings; refuses fewer than the parse caches hold.

    Cycling through no more queries than an LRU cache holds would time the
    cached parse after the first lap, not the work a new query costs.
    """
    distinct = len(set(queries))
    for cached in (parse_query, wants_recency):
        held = cached.cache_info().maxsize or 0
        if distinct <= held:
            raise SystemExit(
                f"{distinct} distinct queries would be served from {cached.__name__}'s cache "
                f"of {held}: use more (--queries)"
            )
    return distinct
