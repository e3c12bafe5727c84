"""Seeded synthetic Markdown corpora for ``bench_scale.py``.

The words come from the mcp-docs fixture: a bigram chain is learnt from its
prose (front matter, code blocks and markup removed; the four generated
schema pages left out), so the vocabulary, the word frequencies and the
common word pairs are those of real documentation. A pool of sentences is
drawn from the chain once, then each document is put together from it:

* front matter with a title, one to three tags from a fixed set of 40 and
  a date;
* ``## `` headings, each followed by one to four paragraphs, with now and
  then a bullet list or a fenced code block;
* a size drawn from a log-normal law with a median of 3.5 KB (sigma 0.6,
  clipped to 0.3-64 KB), so a few documents are an order of magnitude
  larger than the median, as in a real notes folder.

Documents are written 1,000 to a folder. Everything is a pure function of
the seed, so two runs index the same bytes.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MEDIAN_BYTES = 3500
SIGMA = 0.6
MIN_BYTES = 300
MAX_BYTES = 64_000
PER_FOLDER = 1000

_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_TAG = re.compile(r"<[^>]{0,400}>")
_LINK = re.compile(r"\]\([^)]*\)")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9'-]*|[0-9]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n")
_END = "\x00"


@dataclass(frozen=True, slots=True)
class Model:
    """A bigram chain over the fixture's words, and the fixture's words by frequency."""

    starts: tuple[str, ...]
    successors: dict[str, tuple[str, ...]]
    words: tuple[str, ...]


def learn(corpus: Path, *, max_page_bytes: int = 200_000) -> Model:
    """Learn the chain from every Markdown page of ``corpus`` below ``max_page_bytes``."""
    starts: list[str] = []
    successors: dict[str, list[str]] = {}
    words: list[str] = []
    for path in sorted(corpus.rglob("*.md")):
        if path.stat().st_size > max_page_bytes:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        text = _FRONT_MATTER.sub("", text)
        text = _FENCE.sub("\n\n", text)
        text = _LINK.sub("]", _TAG.sub(" ", text))
        for sentence in _SENTENCE_END.split(text):
            tokens = _TOKEN.findall(sentence)
            if len(tokens) < 4:
                continue
            starts.append(tokens[0])
            words.extend(tokens)
            for first, second in zip(tokens, [*tokens[1:], _END], strict=True):
                successors.setdefault(first, []).append(second)
    return Model(
        starts=tuple(starts),
        successors={word: tuple(after) for word, after in successors.items()},
        words=tuple(words),
    )


def sentences(model: Model, rng: random.Random, count: int) -> list[str]:
    """``count`` sentences walked along the chain (4 to 40 words each)."""
    pool: list[str] = []
    choice = rng.choice
    while len(pool) < count:
        word = choice(model.starts)
        out = [word]
        while len(out) < 40:
            word = choice(model.successors.get(word, (_END,)))
            if word == _END:
                break
            out.append(word)
        if len(out) >= 4:
            pool.append(" ".join(out) + ".")
    return pool


_TAGS = (
    "api",
    "auth",
    "billing",
    "cache",
    "client",
    "config",
    "data",
    "deploy",
    "design",
    "docs",
    "draft",
    "errors",
    "events",
    "extensions",
    "guide",
    "http",
    "infra",
    "ideas",
    "internal",
    "meeting",
    "memory",
    "network",
    "notes",
    "ops",
    "plan",
    "protocol",
    "python",
    "release",
    "research",
    "review",
    "roadmap",
    "security",
    "server",
    "spec",
    "streaming",
    "testing",
    "tools",
    "transport",
    "ux",
)


def document(model: Model, pool: list[str], rng: random.Random, number: int) -> str:
    """One Markdown document of a log-normally drawn size."""
    target = int(min(MAX_BYTES, max(MIN_BYTES, MEDIAN_BYTES * math.exp(rng.gauss(0, SIGMA)))))
    title_words = rng.choice(pool).rstrip(".").split()[: rng.randint(3, 7)]
    tags = rng.sample(_TAGS, rng.randint(1, 3))
    day = 1 + number % 28
    month = 1 + (number // 28) % 12
    parts = [
        "---\n"
        f"title: {' '.join(title_words).capitalize()} {number}\n"
        f"tags: [{', '.join(tags)}]\n"
        f"date: 2024-{month:02d}-{day:02d}\n"
        "---\n"
    ]
    size = len(parts[0])
    # The last section overshoots the target by half a section on average.
    while size < target - 750 or len(parts) == 1:
        heading = rng.choice(pool).rstrip(".").split()[: rng.randint(2, 6)]
        block = [f"## {' '.join(heading).capitalize()}"]
        for _ in range(rng.randint(1, 4)):
            shape = rng.random()
            if shape < 0.12:
                block.append("\n".join(f"- {rng.choice(pool)}" for _ in range(rng.randint(2, 5))))
            elif shape < 0.18:
                words = rng.sample(model.words, 6)
                block.append(
                    "```python\n"
                    + "\n".join(
                        f"{a.lower()}_{b.lower()} = {c!r}"
                        for a, b, c in zip(words[::3], words[1::3], words[2::3], strict=True)
                    )
                    + "\n```"
                )
            else:
                block.append(" ".join(rng.choice(pool) for _ in range(rng.randint(2, 6))))
        text = "\n\n".join(block) + "\n\n"
        parts.append(text)
        size += len(text)
    return "".join(parts)


def relative_path(number: int) -> str:
    return f"d{number // PER_FOLDER:03d}/note-{number:06d}.md"


def generate(model: Model, root: Path, count: int, *, seed: int = 7) -> Iterator[int]:
    """Write ``count`` documents under ``root``; yields each one's size in bytes."""
    rng = random.Random(seed)
    pool = sentences(model, rng, max(20_000, min(400_000, count * 4)))
    for number in range(count):
        path = root / relative_path(number)
        if number % PER_FOLDER == 0:
            path.parent.mkdir(parents=True, exist_ok=True)
        data = document(model, pool, rng, number).encode()
        path.write_bytes(data)
        yield len(data)
