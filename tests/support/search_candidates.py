"""Several hundred seeded search requests over the mcp-docs corpus, in every form a user types.

The in-memory rankers (chunk memory, document memory) are held to identity
with FTS5 over the same requests; the requests are built here once so both
comparisons cover the very same ground.
"""

from __future__ import annotations

import random
import re
from typing import Any

from tests.support.shared import MCP_DOCS

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{2,}")
_TOKEN = re.compile(r"[^\W_]+")
_GLUED = re.compile(r"[A-Za-z]{2,}(?:[-'][A-Za-z]{2,})+")


def _lines() -> list[str]:
    lines: list[str] = []
    for path in sorted(MCP_DOCS.rglob("*.md")):
        for line in path.read_text("utf-8", errors="replace").splitlines():
            if len(_WORD.findall(line)) >= 3:
                lines.append(line)
    return lines


def varied_requests() -> list[dict[str, Any]]:
    """Seeded requests in every form a user types: words, several words, quoted
    phrases, explicit prefixes, negations, glued words, steering intents, the
    corpus's commonest words (many instances per chunk, long pages), words of
    file paths (a hit whose chunks hold none of them) and a few non-ASCII
    words; every third asks for 20 hits."""
    lines = _lines()
    paths = [
        named
        for path in sorted(MCP_DOCS.rglob("*.md"))
        if (named := _WORD.findall(str(path.relative_to(MCP_DOCS).with_suffix(""))))
    ]
    rng = random.Random(20_240_611)
    counts: dict[str, int] = {}
    for line in lines:
        for word in _WORD.findall(line):
            counts[word.lower()] = counts.get(word.lower(), 0) + 1
    common = sorted(counts, key=lambda word: (-counts[word], word))[:40]
    queries: list[dict[str, Any]] = [{"query": q} for q in ("世界", "日本語", "→ tool")]
    # The schema pages' rendered signatures: hundreds of instances in one chunk.
    queries += [{"query": q} for q in ("span", "span class", '"span class"', "tsd signature")]
    queries.append({"query": "span", "intent": "class signature symbol", "limit": 20})
    kinds = 10
    for number in range(kinds * 50):
        line = rng.choice(lines)
        words = _WORD.findall(line)
        tokens = _TOKEN.findall(line)
        other = rng.choice(_WORD.findall(rng.choice(lines)))
        kind = number % kinds
        request: dict[str, Any] = {}
        if kind == 0:
            request["query"] = rng.choice(words)
        elif kind == 1:
            request["query"] = " ".join(rng.sample(words, 2))
        elif kind == 2:
            request["query"] = " ".join(rng.sample(words, 3))
        elif kind == 3 and len(tokens) >= 2:
            start = rng.randrange(len(tokens) - 1)
            request["query"] = f'"{tokens[start]} {tokens[start + 1]}"'
        elif kind == 4:
            word = rng.choice(words)
            request["query"] = f"{word[: rng.randint(3, 5)]}*"
        elif kind == 5:
            request["query"] = f"{rng.choice(words)} -{other}"
        elif kind == 6:
            request["query"] = rng.choice(words)
            request["intent"] = " ".join(rng.sample(_WORD.findall(rng.choice(lines)), 2))
        elif kind == 7:
            request["query"] = " ".join(rng.sample(common, rng.randint(1, 3)))
            if rng.random() < 0.5:
                request["intent"] = " ".join(rng.sample(common[:10], 2))
        elif kind == 8:
            request["query"] = rng.choice(rng.choice(paths))
        else:
            glued = _GLUED.findall(line)
            request["query"] = rng.choice(glued) if glued else f"{rng.choice(words)} {other}"
        if not request:
            request["query"] = rng.choice(words)
        request["limit"] = 20 if number % 3 == 0 else 10
        queries.append(request)
    return queries
