"""Speed and memory of the semantic half.

    python3 bench/bench_vectors.py embed          # chunks/s at 800-token chunks, 1 and 2 threads
    python3 bench/bench_vectors.py query-embed    # query embedding latency
    python3 bench/bench_vectors.py search-100k    # vector search at 100,000 synthetic chunks
    python3 bench/bench_vectors.py mcp-docs [--keep DIR]   # vsearch / query latency on mcp-docs

``embed`` runs each worker-thread count (``GNO_EMBED_THREADS``; each worker
runs BLAS on one thread) in its own process on real text: distinct
3,200-character slices (800 tokens at 4 characters per token, the chunker's
size) of the mcp-docs pages, never one chunk twice, through the same path as
``gno-trio embed`` (windows, title wording). The word memo starts empty (the
warm-up uses other text). The same windows then go through the model
package's own forward pass on the same threads: the same-run baseline.

``search-100k`` stores synthetic unit vectors for 100,000 chunks of 4
windows each (what full 800-token chunks get; a chunk's windows share a
random topic, as a document's passages share theirs) and searches them
with queries near stored windows; it prints the p50/p95, the memory the
in-memory copy holds, and the recall@10 against an exact float32 search.

``mcp-docs`` indexes and embeds the corpus (several minutes at this
machine's speed; ``--keep DIR`` reuses an index made before) and times
vector search and the hybrid query through the engine with varied queries,
each beside the query embedding alone on the same text (its floor); the
word memo is emptied before each of the two, so neither is timed on words
the other tokenized.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import FIXTURES, REPO, describe_ms

_WORD = re.compile(r"[A-Za-z][A-Za-z-]{3,}")


def corpus_text(limit_chars: int) -> str:
    parts: list[str] = []
    size = 0
    for path in sorted((FIXTURES / "mcp-docs" / "corpus").rglob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if len(text) > 200_000:  # the two schema pages are JSON-like, not prose
            continue
        parts.append(text)
        size += len(text)
        if size >= limit_chars:
            break
    return "\n".join(parts)


def _embed_worker(count: int) -> None:
    """In a child process: the embed path and the package's own pass on the same windows."""
    from gno_trio.engine.vectors import bundled
    from gno_trio.engine.vectors.embedder import document_text, windows

    text = corpus_text(3200 * (count + 14))
    chunks = [text[i : i + 3200] for i in range(0, 3200 * (count + 4), 3200)]
    warm, chunks = chunks[:4], chunks[4:]  # warm-up text is never measured

    def worded(batch: list[str]) -> list[str]:
        return [
            document_text(bundled.BUNDLED_URI, " ".join(chunk.split()[:4]), window)
            for chunk in batch
            for _, window in windows(chunk)
        ]

    backend = bundled.BundledEmbedder()
    started = time.perf_counter()
    backend.load()
    load_s = time.perf_counter() - started
    package = bundled.package_encode()
    backend.embed_texts(worded(warm))
    bundled.split_over_workers(package, worded(warm))
    bundled.forget_words()  # the word memo starts empty, as in a fresh process
    batches = [worded(chunks[start : start + 32]) for start in range(0, len(chunks), 32)]
    figures: dict[str, float | bool | int] = {
        "load_s": load_s,
        "fused": bundled.fused_pass_active(),
        "windows": sum(map(len, batches)),
    }
    for name, encode in (
        ("ours", backend.embed_texts),
        ("package", lambda texts: bundled.split_over_workers(package, texts)),
    ):
        started, started_cpu = time.perf_counter(), time.process_time()
        for batch in batches:
            encode(batch)
        figures[name] = len(chunks) / (time.perf_counter() - started)
        figures[name + "_cpu"] = len(chunks) / (time.process_time() - started_cpu)
        if name == "ours":
            figures["memo_words"] = bundled.memo_words()
    print(json.dumps(figures))


def bench_embed(args: argparse.Namespace) -> None:
    print(
        f"embedding {args.chunks} distinct chunks of 3,200 characters (800 tokens) of mcp-docs "
        "pages as the embed job does (windows, title); the word memo starts empty"
    )
    for threads in (1, 2):
        env = dict(
            os.environ,
            PYTHONPATH=str(REPO),
            GNO_EMBED_THREADS=str(threads),
        )
        out = subprocess.run(
            [sys.executable, __file__, "_embed-worker", "--chunks", str(args.chunks)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        got = json.loads(out.strip().splitlines()[-1])
        print(
            f"threads={threads}: embed path {got['ours']:.1f} chunks/s, the package's own pass "
            f"on the same {got['windows']} windows {got['package']:.1f} chunks/s "
            f"(x{got['ours'] / got['package']:.2f}); per CPU-second of the process: "
            f"{got['ours_cpu']:.1f} vs {got['package_cpu']:.1f} chunks; fused pass "
            f"{'on' if got['fused'] else 'OFF'}; {got['memo_words']} words memoised; "
            f"model load {got['load_s']:.2f} s"
        )


def bench_query_embed(args: argparse.Namespace) -> None:
    from gno_trio.engine.vectors import bundled
    from gno_trio.engine.vectors.embedder import embed_query, query_text

    backend = bundled.BundledEmbedder()
    backend.load()
    package = bundled.package_encode()
    rng = random.Random(3)
    words = sorted({w.lower() for w in _WORD.findall(corpus_text(200_000))})
    queries = [" ".join(rng.sample(words, rng.randint(2, 8))) for _ in range(args.queries)]
    queries += [
        "wie konfiguriere ich die Authentifizierung",
        "如何设置会话超时",
        "セッションの再開",
    ]
    for q in queries[:5]:
        embed_query(backend, q)
        package([query_text(bundled.BUNDLED_URI, q)])
    bundled.forget_words()
    samples: list[float] = []
    cpu: list[float] = []
    floor: list[float] = []
    for q in queries:
        # Interleaved with the package's own pass on the same text: the same-run baseline.
        started_cpu = time.process_time()
        package([query_text(bundled.BUNDLED_URI, q)])
        floor.append(time.process_time() - started_cpu)
        started, started_cpu = time.perf_counter(), time.process_time()
        embed_query(backend, q)
        samples.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    print(describe_ms("query embedding", samples))
    print(describe_ms("query embedding CPU time", cpu))
    print(describe_ms("the package's own pass on the same queries, CPU time", floor))


def bench_search_100k(args: argparse.Namespace) -> None:
    import numpy as np

    from gno_trio.engine.store.database import connect, migrate
    from gno_trio.engine.vectors.cache import matrix_for
    from gno_trio.engine.vectors.embedder import ModelIdentity
    from gno_trio.engine.vectors.storage import register_model, store

    rng = np.random.default_rng(11)
    chunks = args.chunks
    per_chunk = args.windows
    dim = 512
    base = Path(tempfile.mkdtemp(prefix="gno-bench-vec-"))
    conn = connect(base / "index.sqlite")
    migrate(conn)
    identity = ModelIdentity("bench:random", "1", dim)
    started = time.perf_counter()
    conn.execute("BEGIN IMMEDIATE")
    model = register_model(conn, identity, dim)
    batch = 20_000
    total = 0
    keys_all = [(f"{i:064x}", 0, p) for i in range(chunks) for p in range(per_chunk)]
    per_batch = batch // per_chunk
    for first in range(0, chunks, per_batch):
        count = min(per_batch, chunks - first)
        # Windows of one chunk share a topic, as a document's passages do.
        topics = rng.standard_normal((count, 1, dim), dtype=np.float32)
        noise = rng.standard_normal((count, per_chunk, dim), dtype=np.float32)
        vectors = (topics + 0.6 * noise).reshape(-1, dim)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        keys = keys_all[first * per_chunk : (first + count) * per_chunk]
        # Vectors are only stored for chunks that exist.
        conn.executemany(
            "INSERT INTO content_chunks (mirror_hash, seq, pos, length, start_line, end_line, "
            "token_count) VALUES (?, 0, 0, 0, 1, 1, 0)",
            [(f"{i:064x}",) for i in range(first, first + count)],
        )
        total += store(conn, model, keys, vectors)
    conn.execute("COMMIT")
    print(
        f"stored {total} vectors ({chunks} chunks x {per_chunk}) in "
        f"{time.perf_counter() - started:.1f} s"
    )
    started = time.perf_counter()
    matrix = matrix_for(conn, model)
    print(
        f"loaded into memory in {time.perf_counter() - started:.2f} s; "
        f"{matrix.size} rows hold {matrix.nbytes / 1e6:.1f} MB "
        f"({matrix.nbytes / max(1, chunks):.0f} bytes per chunk)"
    )
    picks = rng.integers(0, matrix.size, args.queries)
    # Queries near stored windows, as real queries are near their answers.
    queries = matrix.vectors(picks) + 0.9 * rng.standard_normal(
        (args.queries, dim), dtype=np.float32
    ) / np.sqrt(dim)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    samples = []
    cpu = []
    answers = []
    for q in queries:
        started, started_cpu = time.perf_counter(), time.process_time()
        found = matrix.nearest(q, 40)
        samples.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
        answers.append({row for row, _ in found[:10]})
    print(describe_ms(f"vector search, {matrix.size} rows", samples))
    print(describe_ms("vector search CPU time", cpu))
    recall = 0.0
    for q, answer in zip(queries, answers, strict=True):
        scores = np.concatenate(
            [
                matrix.vectors(np.arange(start, min(matrix.size, start + 50_000))) @ q
                for start in range(0, matrix.size, 50_000)
            ]
        )
        recall += len(set(np.argsort(-scores)[:10].tolist()) & answer) / 10
    print(f"recall@10 vs exact float32: {recall / len(queries):.3f}")
    conn.close()


def bench_mcp_docs(args: argparse.Namespace) -> None:
    from _common import temp_engine

    from gno_trio.config.dirs import Dirs
    from gno_trio.engine import Engine, QueryOptions, SearchRequest
    from gno_trio.engine.vectors import bundled
    from gno_trio.engine.vectors.embedder import embed_query

    corpus = FIXTURES / "mcp-docs" / "corpus"
    if args.keep:
        keep = Path(args.keep)
        engine = Engine.open(dirs=Dirs(config=keep / "c", data=keep / "d", cache=keep / "x"))
    else:
        engine = temp_engine(corpus)
    if engine.config.collection("docs") is None:
        engine.collections.add(str(corpus), name="docs")
    engine.sync()
    with engine.connection() as conn:
        started = time.perf_counter()
        report = engine.vectors.embed(
            progress=lambda d, t: print(f"\rembedding {d}/{t}", end="", flush=True)
        )
        print()
        if report.embedded:
            elapsed = time.perf_counter() - started
            print(
                f"embedded {report.embedded} chunks in {elapsed:.0f} s "
                f"({report.embedded / elapsed:.1f} chunks/s)"
            )
        headings = [
            r[0] for r in conn.execute("SELECT title FROM documents WHERE title IS NOT NULL")
        ]
        rng = random.Random(5)
        words = sorted({w.lower() for h in headings for w in _WORD.findall(h)})
        texts = [" ".join(rng.sample(words, rng.randint(1, 4))) for _ in range(args.queries)]
        texts[:4] = [
            "how does a client resume a session after reconnecting",
            "streamable http session",
            "wie meldet sich ein Client mit OAuth an",
            "服务器如何通知客户端资源变化",
        ]
        engine.search.vector(SearchRequest(query="warm up"))  # loads the model and vectors
        backend = engine.vectors.backend()
        floor = []  # the query embedding alone: work no vector search can skip
        for mode in ("vsearch", "query"):
            samples = []
            cpu = []
            for text in texts:
                request = SearchRequest(query=text, limit=5)
                # Interleaved, so the machine's load weighs on floor and call alike.
                # Each starts with an empty word memo: the floor's pass over the same
                # text must not tokenize the words the timed call then reuses for free.
                bundled.forget_words()
                started_cpu = time.process_time()
                embed_query(backend, text)
                floor.append(time.process_time() - started_cpu)
                bundled.forget_words()
                started, started_cpu = time.perf_counter(), time.process_time()
                if mode == "vsearch":
                    engine.search.vector(request)
                else:
                    engine.search.query(request, QueryOptions())
                samples.append(time.perf_counter() - started)
                cpu.append(time.process_time() - started_cpu)
            print(describe_ms(f"{mode} (engine API, mcp-docs)", samples))
            # CPU time of this process: what a quiet machine's wall time would be.
            print(describe_ms(f"{mode} CPU time", cpu))
            embed_p50 = sorted(floor)[len(floor) // 2]
            call_p50 = sorted(cpu)[len(cpu) // 2]
            print(
                f"{mode}: query embedding alone (same run) CPU p50 {embed_p50 * 1000:.3f} ms; "
                f"{mode} / embedding = {call_p50 / embed_p50:.2f}x; "
                f"beyond the embedding {(call_p50 - embed_p50) * 1000:.3f} ms"
            )
            floor.clear()
        rows = conn.execute("SELECT COUNT(*) FROM content_vectors").fetchone()[0]
        chunks = conn.execute("SELECT COUNT(*) FROM content_chunks").fetchone()[0]
        from gno_trio.engine.vectors.available import stored_vectors

        distinct = stored_vectors(conn, engine.vectors.backend())[1].dense_rows
        print(f"{chunks} chunks, {rows} vectors ({distinct or 'no'} distinct float32 rows scored)")
        sketch_recall(conn, engine.vectors.backend(), texts)
    engine.close()


def sketch_recall(conn: object, backend: object, texts: list[str]) -> None:
    """Recall@10 of the sketch shortlist on these real vectors (as a large index uses it)."""
    import numpy as np

    from gno_trio.engine.vectors.available import stored_vectors
    from gno_trio.engine.vectors.embedder import embed_query

    _, matrix = stored_vectors(conn, backend)  # type: ignore[arg-type]
    everything = np.arange(matrix.size)
    exact = matrix.vectors(everything)
    recall = 0.0
    for text in texts:
        q = embed_query(backend, text)  # type: ignore[arg-type]
        truth = set(np.argsort(-(exact @ q))[:10].tolist())
        # The large-index path, forced here: 1/32 of the chunks (at least 16 per result).
        rows = matrix._shortlist(q, 10, None, minimum=max(1, matrix.chunks // 32))
        best = rows[np.argsort(-(exact[rows] @ q))[:10]]
        recall += len(truth & set(best.tolist())) / 10
    print(
        f"chunk-sketch shortlist (1/32 of {matrix.chunks} chunks): recall@10 "
        f"{recall / len(texts):.3f} on real vectors"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "what", choices=["embed", "query-embed", "search-100k", "mcp-docs", "_embed-worker"]
    )
    parser.add_argument("--chunks", type=int, default=None)
    parser.add_argument("--windows", type=int, default=4)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--keep", default=None)
    args = parser.parse_args()
    if args.what == "_embed-worker":
        _embed_worker(args.chunks or 64)
    elif args.what == "embed":
        args.chunks = args.chunks or 64
        bench_embed(args)
    elif args.what == "query-embed":
        bench_query_embed(args)
    elif args.what == "search-100k":
        args.chunks = args.chunks or 100_000
        bench_search_100k(args)
    else:
        bench_mcp_docs(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
