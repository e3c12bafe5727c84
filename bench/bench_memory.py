"""Memory recall latency, quality and scope isolation through the engine API.

Builds a throwaway memory-managed collection of 2,000 facts spread over 20
scopes (100 each). The fact files are rendered and written the way remember
writes them, then indexed with one ``Engine.sync``; a separate phase times
``MemoryService.remember`` itself (adds, then supersedes) one call at a time.

Then 200 recalls run through ``MemoryService.recall``. Each query is three
content words of one target fact, reordered (no paraphrase), and asks for
one to three scopes including the target's. Reported:

* recall latency p50 / p95 / p99 (target: p95 under 10 ms; GNO's release
  gate is 25 ms);
* recall@5: the share of queries whose target fact is among the first five
  returned (target: at least 0.9);
* cross-scope leaks: returned facts sharing no scope with the request
  (target: zero), and superseded facts returned (also zero).

    python3 bench/bench_memory.py [--facts 2000] [--scopes 20] [--queries 200]
                                  [--remember 300] [--strict]

``--strict`` exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import describe_ms, percentile

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.engine.facts import (
    FactRecord,
    content_hash,
    record_id_for,
    rel_path_for,
    render,
    write_new_file,
)
from gno_trio.engine.memory.identity import Identity
from gno_trio.engine.memory.recall import now_iso
from gno_trio.engine.memory.service import MemoryService

WHO = Identity(caller="bench", session="bench-session")
_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z")
_VOWELS = ("a", "e", "i", "o", "u")
TEMPLATES = (
    "The {0} service keeps its {1} cache next to the {2} queue of {3} and {4}.",
    "Team {0} decided that {1} replaces {2} for every {3} {4} job.",
    "Deploys of {0} wait for the {1} check, then {2} {3} runs before {4}.",
    "The {0} dashboard shows {1} latency from {2} while {3} tracks {4}.",
)


def vocabulary(size: int, rng: random.Random) -> list[str]:
    """Pronounceable made-up words, so no English stemming folds two of them together."""
    words: set[str] = set()
    while len(words) < size:
        syllables = rng.randint(2, 3)
        words.add("".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(syllables)))
    return sorted(words)


def fact_texts(count: int, words: list[str], rng: random.Random) -> list[tuple[str, list[str]]]:
    """(text, content words) per fact; each text is unique."""
    out: list[tuple[str, list[str]]] = []
    seen: set[str] = set()
    while len(out) < count:
        picked = rng.sample(words, 5)
        text = rng.choice(TEMPLATES).format(*picked)
        if text not in seen:
            seen.add(text)
            out.append((text, picked))
    return out


def seed_files(root: Path, facts: list[tuple[str, list[str]]], scopes: list[str]) -> list[str]:
    """Write every fact file as remember would; returns each fact's scope."""
    owners = []
    for index, (text, _) in enumerate(facts):
        scope = scopes[index % len(scopes)]
        created = now_iso()
        digest = content_hash(text)
        record = FactRecord(
            record_id=record_id_for(digest, created, WHO.caller, WHO.session),
            text=text,
            scopes=(scope,),
            caller=WHO.caller,
            session=WHO.session,
            created_at=created,
            content_hash=digest,
            supersedes=(),
        )
        write_new_file(root / rel_path_for(record), render(record))
        owners.append(scope)
    return owners


def time_remember(
    service: MemoryService, count: int, words: list[str], rng: random.Random
) -> list[dict[str, Any]]:
    """Adds through the real service (lease, atomic file, one-file sync), then supersedes.

    Returns the records that were superseded.
    """
    adds: list[float] = []
    added: list[dict[str, Any]] = []
    for text, _ in fact_texts(count, words, rng):
        started = time.perf_counter()
        result = service.remember(
            text=f"Extra: {text}", collection="mem", scopes=["extra"], identity=WHO, decision="add"
        )
        adds.append(time.perf_counter() - started)
        added.append(result["record"])
    print(describe_ms("remember add (one call, file + sync)", adds))
    supersedes: list[float] = []
    for index, record in enumerate(added[: max(1, count // 3)]):
        started = time.perf_counter()
        service.remember(
            text=f"Revised {index}: {record['text']}",
            collection="mem",
            scopes=["extra"],
            identity=WHO,
            decision="supersede",
            predecessor_uri=record["uri"],
            predecessor_hash=record["contentHash"],
        )
        supersedes.append(time.perf_counter() - started)
    print(describe_ms("remember supersede", supersedes))
    return added[: len(supersedes)]


def superseded_returned(service: MemoryService, replaced: list[dict[str, Any]]) -> int:
    """Recall each replaced fact by its own words; count how often it still comes back."""
    gone = {record["uri"] for record in replaced}
    found = 0
    for record in replaced:
        words = [w for w in record["text"].rstrip(".").split() if len(w) > 3][:4]
        answer = service.recall(
            query=" ".join(words), collection="mem", scopes=["extra"], identity=WHO
        )
        found += sum(1 for fact in answer["facts"] if fact["uri"] in gone)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--facts", type=int, default=2000)
    parser.add_argument("--scopes", type=int, default=20)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--remember", type=int, default=300)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    base = Path(tempfile.mkdtemp(prefix="gno-bench-memory-"))
    try:
        return run(args, rng, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def run(args: argparse.Namespace, rng: random.Random, base: Path) -> int:
    root = base / "facts"
    root.mkdir()
    engine = Engine.open(
        dirs=Dirs(config=base / "config", data=base / "data", cache=base / "cache")
    )
    engine.collections.add(str(root), name="mem", memory_managed=True)
    words = vocabulary(600, rng)
    scopes = [f"team:{i:02d}" for i in range(args.scopes)]
    facts = fact_texts(args.facts, words, rng)

    started = time.perf_counter()
    owners = seed_files(root, facts, scopes)
    written = time.perf_counter() - started
    started = time.perf_counter()
    (report,) = engine.sync()
    indexed = time.perf_counter() - started
    print(
        f"seed: {len(facts)} facts over {len(scopes)} scopes written in {written:.2f} s, "
        f"indexed by one sync in {indexed:.2f} s (added={report.added}, "
        f"errors={len(report.errors)})"
    )

    service = MemoryService(engine)
    replaced = time_remember(service, args.remember, words, rng)

    targets = rng.sample(range(len(facts)), args.queries)
    latencies: list[float] = []
    hits = 0
    leaks = 0
    stale = 0
    returned = 0
    for target in targets:
        text, content = facts[target]
        query = " ".join(rng.sample(content, 3))
        others = [s for s in scopes if s != owners[target]]
        asked = [owners[target], *rng.sample(others, rng.randint(0, 2))]
        started = time.perf_counter()
        answer = service.recall(
            query=query, collection="mem", scopes=asked, identity=WHO, max_facts=8
        )
        latencies.append(time.perf_counter() - started)
        texts = [fact["text"] for fact in answer["facts"]]
        hits += text in texts[:5]
        returned += len(texts)
        leaks += sum(1 for fact in answer["facts"] if not set(fact["scopes"]) & set(asked))
        stale += sum(1 for fact in answer["facts"] if fact["scopes"] == ["extra"])
    print(describe_ms(f"recall ({len(targets)} calls, engine API)", latencies))
    p95_ms = percentile([s * 1000 for s in latencies], 95)
    recall_at_5 = hits / len(targets)
    print(f"recall@5: {recall_at_5:.3f} ({hits}/{len(targets)}), facts returned: {returned}")
    resurfaced = superseded_returned(service, replaced)
    print(
        f"cross-scope leaks: {leaks} (of which from the remember phase's scope: {stale}); "
        f"superseded facts returned: {resurfaced} over {len(replaced)} recalls"
    )
    engine.close()
    verdicts = {
        "recall p95 < 10 ms": p95_ms < 10.0,
        "recall@5 >= 0.9": recall_at_5 >= 0.9,
        "zero cross-scope leaks": leaks == 0,
        "zero superseded facts returned": resurfaced == 0,
    }
    for name, ok in verdicts.items():
        print(f"{'PASS' if ok else 'MISS'} {name}")
    return 1 if args.strict and not all(verdicts.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
