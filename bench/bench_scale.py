"""Indexing and search at scale: gno-trio against an FTS5 floor, in the same run.

Generates a seeded synthetic corpus (``--docs`` Markdown documents, median
3.5 KB, words from the mcp-docs fixture; see ``_synthetic.py``) in a
temporary folder, measures, and removes everything it wrote:

* **index from scratch**: ``Engine.open`` + ``add_collection`` + ``sync`` of
  the whole corpus (the work ``gno-trio init`` + ``update`` does, full-text
  merge included), in a child process;
* **the floor**, in another child: the same files walked and read, front
  matter split off, inserted into one FTS5 table that stores the text (so
  it can cut snippets) with the same tokenizer and prefix indexes as
  gno-trio's document index, then merged (``optimize``) as gno-trio merges
  after a bulk sync. It stores nothing else: no chunks, no metadata;
* **peak tree RSS** of each indexing process: its whole process tree (the
  process and any workers), summed and sampled every 50 ms from ``/proc``
  by this process, beside the main process's high-water mark (``VmHWM``);
* **no-change re-sync** in a fresh process (the time of ``sync`` alone),
  ``--resyncs`` times, each beside a **stat floor** in another fresh
  process: every folder listed and every file ``lstat``-ed by the shortest
  Python loop, no database;
* **database size** (file + WAL, plus the tantivy document index beside it
  when tantivy ranks) against the text size, and the floor's;
* **search**: ``--queries`` varied queries (one, two and three words of one
  sentence of a random document, exact phrases, prefixes, negations, and a
  tag and a folder filter), each checked to find something in gno-trio
  before timing; gno-trio's ``Engine.search`` (ranking, snippets, line
  anchors) and the floors, in an order rotated query by query: the FTS5
  ranking statement with the same MATCH strings (the strict form, then the
  any-term form when the strict one finds fewer than the limit, as
  gno-trio does), the same with a ``snippet()`` of each hit's body, and,
  where tantivy ranks gno-trio's documents (large indexes), tantivy alone
  ranking on gno-trio's own tantivy index. The floors have no document
  table, so they ignore the two filters;
* **search as served**: the unfiltered queries through a warm ``gno-trio
  mcp`` (stdio) and a warm ``gno-trio serve`` (HTTP, on the fixed port
  range of the harness), ``--served-rounds`` rounds with fresh servers,
  interleaved in rotating blocks, wall p50/p99, the server tree's CPU
  per call and the most its tree held meanwhile (warm tree RSS, sampled
  every 0.25 s); and the CLI one-shot (``gno-trio search``, a fresh process per
  query).

Ratios to the floors are printed with the load average and the cores other
work used; nothing is asserted about time. Disk use is
bounded: the run refuses to start unless the working folder's disk has ten
times the expected text size free.

    python3 bench/bench_scale.py [--docs 10000] [--queries 1200] [--rounds 3]
                                 [--workdir DIR] [--keep]

A folder kept with ``--keep`` can be searched again without rebuilding
(100,000 documents take a quarter of an hour to index): ``--reuse FOLDER``
runs the re-syncs and the search step alone, in fresh processes, over that
folder's index and floor (``--docs`` must be the count it was built with).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import itertools
import json
import os
import random
import re
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import _synthetic  # noqa: E402
from _common import (  # noqa: E402
    DEFAULT_ROUNDS,
    RssSampler,
    Window,
    free_port,
    percentile,
    reap,
    spread,
    tree_cpu_s,
)
from _floor import RankingFloor, SnippetFloor, TantivyFloor  # noqa: E402
from _queries import check_uncached  # noqa: E402

from gno_trio.config.dirs import Dirs  # noqa: E402
from gno_trio.engine import Engine, Scope, SearchRequest  # noqa: E402
from gno_trio.engine.store.database import DEFAULT_TOKENIZE  # noqa: E402
from gno_trio.errors import GnoError  # noqa: E402

FIXTURES = Path(os.environ.get("GNO_FIXTURES", REPO.parent / "shared" / "fixtures"))
MODEL_CORPUS = FIXTURES / "mcp-docs" / "corpus"
COLLECTION = "scale"
FLOOR_BATCH = 1000
_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)
_TITLE = re.compile(r"^title:\s*(.*)$", re.M)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{3,}")
STOP = frozenset(
    [
        "also",
        "been",
        "from",
        "have",
        "into",
        "more",
        "must",
        "that",
        "than",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "when",
        "where",
        "which",
        "while",
        "will",
        "with",
        "would",
        "your",
        "what",
        "only",
        "each",
        "such",
    ]
)
KINDS = (
    "one word",
    "two words",
    "phrase",
    "three words",
    "prefix",
    "negation",
    "tag filter",
    "folder filter",
)
FILTERED = frozenset({"tag filter", "folder filter"})
GNO = (sys.executable, "-m", "gno_trio")


# -- child processes ----------------------------------------------------------------------


def gno_dirs(work: Path) -> Dirs:
    base = work / "gno"
    return Dirs(config=base / "config", data=base / "data", cache=base / "cache")


def peak_rss_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def child_gno_index(work: Path) -> dict[str, Any]:
    started = time.perf_counter()
    with Engine.open(dirs=gno_dirs(work)) as engine:
        engine.collections.add(str(work / "corpus"), name=COLLECTION)
        (report,) = engine.sync()
    return {
        "seconds": time.perf_counter() - started,
        "added": report.added,
        "errors": len(report.errors),
    }


def child_gno_resync(work: Path) -> dict[str, Any]:
    with Engine.open(dirs=gno_dirs(work), create=False) as engine:
        started, cpu = time.perf_counter(), time.process_time()
        (report,) = engine.sync()
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {
        "seconds": seconds,
        "sync_cpu_s": cpu,
        "unchanged": report.unchanged,
        "changed": report.changed,
    }


def child_stat_floor(work: Path) -> dict[str, Any]:
    """The least a no-change re-sync must do: list every folder and ``lstat`` every file.

    No database, no comparison: the system calls and the Python loop around
    them, as compactly as Python can make them.
    """
    started, cpu = time.perf_counter(), time.process_time()
    seen: list[tuple[str, int, int]] = []
    stack = [str(work / "corpus")]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    st = os.lstat(entry.path)
                    seen.append((entry.path, st.st_size, st.st_mtime_ns))
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {"seconds": seconds, "sync_cpu_s": cpu, "files": len(seen)}


def floor_path(work: Path) -> Path:
    return work / "floor" / "floor.sqlite"


def child_floor_index(work: Path) -> dict[str, Any]:
    started = time.perf_counter()
    path = floor_path(work)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute(
        "CREATE VIRTUAL TABLE f USING fts5(filepath, title, body, "
        f"prefix='3 4', tokenize='{DEFAULT_TOKENIZE}')"
    )
    root = work / "corpus"
    batch: list[tuple[int, str, str, str]] = []
    rowid = 0

    def flush() -> None:
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO f(rowid, filepath, title, body) VALUES (?, ?, ?, ?)", batch)
        conn.execute("COMMIT")
        batch.clear()

    for folder, subfolders, files in os.walk(root):
        subfolders.sort()
        for name in sorted(files):
            full = os.path.join(folder, name)
            with open(full, "rb") as handle:
                text = handle.read().decode("utf-8", errors="replace")
            title = ""
            front = _FRONT.match(text)
            if front:
                found = _TITLE.search(front.group(1))
                title = found.group(1) if found else ""
                text = text[front.end() :]
            rowid += 1
            batch.append((rowid, os.path.relpath(full, root), title, text))
            if len(batch) >= FLOOR_BATCH:
                flush()
    if batch:
        flush()
    conn.execute("INSERT INTO f(f) VALUES ('optimize')")
    conn.close()
    return {"seconds": time.perf_counter() - started, "added": rowid}


def _queries(engine: Engine, work: Path, docs: int, count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` varied queries drawn from random documents, each finding something.

    Every query text is different (a repeated one would be a cached parse).
    """
    rng = random.Random(seed)
    root = work / "corpus"
    chosen: list[dict[str, Any]] = []
    taken: set[str] = set()
    redrawn = 0
    while len(chosen) < count:
        kind = KINDS[len(chosen) % len(KINDS)]
        number = rng.randrange(docs)
        text = (root / _synthetic.relative_path(number)).read_text(encoding="utf-8")
        front = _FRONT.match(text)
        tags = (
            re.findall(r"[a-z]+", front.group(1).split("tags:")[1].split("\n")[0]) if front else []
        )
        body = text[front.end() :] if front else text
        sentence = rng.choice([s for s in re.split(r"(?<=\.)\s", body) if len(s) > 40] or [body])
        words = [w.lower() for w in _WORD.findall(sentence) if w.lower() not in STOP]
        words = list(dict.fromkeys(words))
        if len(words) < 3:
            continue
        word = rng.choice(words)
        request: dict[str, Any] = {"limit": rng.choice((5, 10))}
        if kind == "one word":
            request["query"] = word
        elif kind == "two words":
            request["query"] = " ".join(rng.sample(words, 2))
        elif kind == "three words":
            request["query"] = " ".join(rng.sample(words, 3))
        elif kind == "phrase":
            pairs = re.findall(r"(?=\b([A-Za-z]{3,} [A-Za-z]{3,})\b)", sentence)
            if not pairs:
                continue
            request["query"] = f'"{rng.choice(pairs).lower()}"'
        elif kind == "prefix":
            request["query"] = f"{word[:4]} {rng.choice([w for w in words if w != word])}"
        elif kind == "negation":
            other = rng.choice(
                _WORD.findall(
                    (root / _synthetic.relative_path(rng.randrange(docs))).read_text(
                        encoding="utf-8"
                    )
                )
            ).lower()
            if other in words:
                continue
            request["query"] = f"{word} -{other}"
        elif kind == "tag filter":
            request.update(query=word, scope=Scope(tags_any=[rng.choice(tags)] if tags else []))
        else:
            folder = _synthetic.relative_path(number).split("/")[0]
            request.update(query=word, scope=Scope(uri_prefix=f"gno://{COLLECTION}/{folder}/"))
        if request["query"] in taken:
            continue
        try:
            found = engine.search.lexical(SearchRequest(**request))["results"]
        except GnoError:
            found = []
        if not found:
            redrawn += 1
            continue
        taken.add(request["query"])
        chosen.append({"kind": kind, **request})
    chosen.append({"redrawn": redrawn})
    return chosen


def child_search(work: Path, docs: int, count: int, rounds: int, seed: int) -> dict[str, Any]:
    floor_conn = sqlite3.connect(f"file:{floor_path(work)}?mode=ro", uri=True)
    floors: dict[str, Any] = {
        "ranking": RankingFloor(floor_conn),
        "snippet": SnippetFloor(floor_conn),
    }

    with Engine.open(dirs=gno_dirs(work), create=False) as engine:
        drawn = _queries(engine, work, docs, count, seed)
        redrawn = drawn.pop()["redrawn"]
        check_uncached([spec["query"] for spec in drawn])
        with engine.connection() as conn:
            backend = conn.execute(
                "SELECT value FROM schema_meta WHERE key = 'document_index'"
            ).fetchone()
        sides: dict[str, dict[str, list[float]]] = {"gno": defaultdict(list)}
        sides.update({name: defaultdict(list) for name in floors})
        empty = 0
        with engine.connection() as conn:
            if backend and backend[0] == "tantivy":
                floors["tantivy"] = TantivyFloor(conn)
                sides["tantivy"] = defaultdict(list)
            names = list(sides)
            for round_no in range(rounds):
                for index, spec in enumerate(drawn):
                    kind = spec["kind"]
                    request = SearchRequest(**{k: v for k, v in spec.items() if k != "kind"})
                    shift = (index + round_no) % len(names)
                    for side in names[shift:] + names[:shift]:
                        started = time.perf_counter()
                        if side == "gno":
                            hits = len(engine.search.lexical(request)["results"])
                            empty += not hits
                        else:
                            floors[side].search(request.query, request.limit)
                        elapsed = (time.perf_counter() - started) * 1000
                        if round_no:  # the first round warms the caches
                            sides[side][kind].append(elapsed)
    floor_conn.close()
    return {
        "sides": {name: dict(kinds) for name, kinds in sides.items()},
        "served_queries": [spec["query"] for spec in drawn if spec["kind"] not in FILTERED],
        "redrawn": redrawn,
        "empty": empty,
        "queries": len(drawn),
        "backend": backend[0] if backend else "fts5",
    }


CHILDREN = {
    "gno-index": child_gno_index,
    "gno-resync": child_gno_resync,
    "stat-floor": child_stat_floor,
    "floor-index": child_floor_index,
}


def child_main(kind: str, work: Path, extra: list[str]) -> int:
    if kind == "search":
        docs, count, rounds, seed = (int(value) for value in extra)
        result = child_search(work, docs, count, rounds, seed)
    else:
        result = CHILDREN[kind](work)
    result["vm_hwm_kib"] = peak_rss_kib()
    # CPU of every thread, and of the worker processes it waited for (a large sync
    # prepares files in workers): the floor runs on one core, gno-trio may use more.
    result["cpu_s"] = time.process_time()
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    result["workers_cpu_s"] = workers.ru_utime + workers.ru_stime
    result["workers_max_rss_kib"] = workers.ru_maxrss
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


# -- the parent ---------------------------------------------------------------------------


def run_child(kind: str, work: Path, *extra: str) -> dict[str, Any]:
    """Run one measured step in a fresh process, sampling its memory from ``/proc``."""
    process = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--child", kind, str(work), *extra],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    with RssSampler([process.pid]) as sampler:
        out, err = process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"{kind} failed ({process.returncode}):\n{err.decode()[-3000:]}")
    result: dict[str, Any] = json.loads(out)
    result["peak_tree_kib"] = sampler.peak_kib
    return result


def file_bytes(path: Path) -> int:
    return sum(
        Path(f"{path}{suffix}").stat().st_size
        for suffix in ("", "-wal")
        if Path(f"{path}{suffix}").exists()
    )


def tree_bytes(path: Path) -> int:
    """Every file under ``path`` (the tantivy document index beside the database)."""
    return sum(entry.stat().st_size for entry in path.rglob("*") if entry.is_file())


def table_sizes(path: Path, top: int = 8) -> list[tuple[str, float]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT ?", (top,)
        ).fetchall()
    except sqlite3.Error:
        rows = []
    conn.close()
    return [(str(name), int(size) / 1e6) for name, size in rows]


def pct(values: list[float], at: float) -> float:
    return percentile(values, at)


def summary(values: list[float]) -> str:
    return (
        f"p50 {pct(values, 50):7.2f}  p99 {pct(values, 99):7.2f}  max {max(values):7.2f} ms"
        f"  (n={len(values)})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=10_000, help="documents (default 10000)")
    parser.add_argument(
        "--queries",
        type=int,
        default=1200,
        help="varied queries, more than the parse cache holds (default 1200)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="search rounds; the first warms up")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", help="where the temporary folder goes (default: TMPDIR)")
    parser.add_argument("--keep", action="store_true", help="keep the folder (its path is printed)")
    parser.add_argument(
        "--resyncs", type=int, default=1, help="no-change re-syncs, each beside a stat floor"
    )
    parser.add_argument(
        "--reuse",
        metavar="FOLDER",
        help="re-sync and search a folder kept by --keep again (no rebuild)",
    )
    parser.add_argument(
        "--served-rounds",
        type=int,
        default=DEFAULT_ROUNDS,
        help="rounds of search through a warm `gno-trio mcp` and `serve` (0: skip)",
    )
    parser.add_argument(
        "--served-calls", type=int, default=300, help="timed calls per server and round"
    )
    parser.add_argument("--cli-calls", type=int, default=10, help="CLI one-shot searches")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        kind, work, *extra = options.child
        return child_main(kind, Path(work), extra)
    if options.reuse:
        return search_again(Path(options.reuse), options)

    expected_text = options.docs * 4300
    base = Path(options.workdir or tempfile.gettempdir())
    base.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(base).free
    if free < 10 * expected_text:
        print(
            f"need {10 * expected_text / 1e9:.1f} GB free under {base}, have {free / 1e9:.1f} GB",
            file=sys.stderr,
        )
        return 2
    work = Path(tempfile.mkdtemp(prefix="gno-bench-scale-", dir=base))
    try:
        started = time.perf_counter()
        model = _synthetic.learn(MODEL_CORPUS)
        sizes = list(_synthetic.generate(model, work / "corpus", options.docs, seed=options.seed))
        text = sum(sizes)
        print(
            f"corpus: {options.docs:,} documents, {text / 1e6:,.1f} MB (median "
            f"{statistics.median(sizes) / 1000:.1f} KB, largest {max(sizes) / 1000:.1f} KB), "
            f"generated in {time.perf_counter() - started:.1f} s under {work}"
        )
        whole = Window()
        gno = run_child("gno-index", work)
        floor = run_child("floor-index", work)
        resyncs = run_resyncs(work, options.resyncs)
        db = gno_dirs(work).data / "index-default.sqlite"
        terms_size = tree_bytes(db.with_suffix(".terms"))
        gno_size = file_bytes(db) + terms_size
        floor_size = file_bytes(floor_path(work))
        parts = table_sizes(db)
        print(whole.close().line())
        print_index(gno, floor, text, gno_size, floor_size, terms_size, resyncs, parts)
        if options.keep:  # said before searching: a failure there leaves the folder to --reuse
            print(f"kept: {work}", flush=True)
        search = run_search(work, options)
        print_search(search, options)
        if options.served_rounds:
            print(served_search(work, search["served_queries"], options))
    finally:
        if not options.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def print_index(
    gno: dict[str, Any],
    floor: dict[str, Any],
    text: int,
    gno_size: int,
    floor_size: int,
    terms_size: int,
    resyncs: list[tuple[dict[str, Any], dict[str, Any]]],
    parts: list[tuple[str, float]],
) -> None:
    """The indexing figures beside the floor's (printed as soon as they are known)."""

    def mib(kib: int) -> str:
        return f"{kib / 1024:,.0f} MiB"

    print(f"\n{'':<28} {'gno-trio':>14} {'floor':>14} {'ratio':>8}")
    print(
        f"{'index from scratch':<28} {gno['seconds']:>12.1f} s {floor['seconds']:>12.1f} s "
        f"{gno['seconds'] / floor['seconds']:>7.2f}x   (target <= 1.5x)"
    )
    print(
        f"{'  main process (VmHWM)':<28} {mib(gno['vm_hwm_kib']):>14} "
        f"{mib(floor['vm_hwm_kib']):>14}"
    )
    print(
        f"{'peak tree RSS (sampled)':<28} {mib(gno['peak_tree_kib']):>14} "
        f"{mib(floor['peak_tree_kib']):>14} "
        f"{gno['peak_tree_kib'] / floor['peak_tree_kib']:>7.2f}x   (target <= 300 MiB; the "
        "process and its workers, summed, every 50 ms)"
    )
    print(
        f"{'  largest worker (VmHWM)':<28} {mib(gno['workers_max_rss_kib']):>14} "
        f"{'':>14}   (preparing workers, separate processes)"
    )
    gno_cpu = gno["cpu_s"] + gno["workers_cpu_s"]
    print(
        f"{'CPU time, index':<28} {gno_cpu:>12.1f} s {floor['cpu_s']:>12.1f} s "
        f"{gno_cpu / floor['cpu_s']:>7.2f}x   (all threads; workers {gno['workers_cpu_s']:.1f} s)"
    )
    print(
        f"{'database (file + WAL)':<28} {gno_size / 1e6:>11,.0f} MB {floor_size / 1e6:>11,.0f} MB "
        f"{gno_size / floor_size:>7.2f}x   (gno-trio: with its tantivy index, "
        f"{terms_size / 1e6:,.0f} MB)"
    )
    print(
        f"{'database / text':<28} {gno_size / text:>13.2f}x {floor_size / text:>13.2f}x "
        f"{'':>8}   (target <= 2.5x)"
    )
    print_resyncs(resyncs)
    print(f"  index: {gno['added']:,} added, {gno['errors']} errors; floor {floor['added']:,} rows")
    print(
        "  largest parts of the gno-trio database: "
        + ", ".join(f"{name} {size:,.0f} MB" for name, size in parts),
        flush=True,
    )


def run_resyncs(work: Path, count: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``count`` no-change re-syncs, each followed by a stat floor (fresh processes)."""
    return [(run_child("gno-resync", work), run_child("stat-floor", work)) for _ in range(count)]


def print_resyncs(runs: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    for resync, floor in runs:
        print(
            f"{'no-change re-sync':<28} {resync['seconds']:>12.3f} s {floor['seconds']:>12.3f} s "
            f"{resync['seconds'] / floor['seconds']:>7.2f}x   ({resync['unchanged']:,} unchanged; "
            f"CPU {resync['sync_cpu_s']:.3f} s vs {floor['sync_cpu_s']:.3f} s; "
            "target <= 1.0 s at 100k; floor: list + lstat)"
        )
    if len(runs) > 1:
        walls = [resync["seconds"] for resync, _ in runs]
        cpus = [resync["sync_cpu_s"] for resync, _ in runs]
        floors = [floor["seconds"] for _, floor in runs]
        print(
            f"{'  median of ' + str(len(runs)):<28} {statistics.median(walls):>12.3f} s "
            f"{statistics.median(floors):>12.3f} s {'':>8}   (CPU {statistics.median(cpus):.3f} s)"
        )


def run_search(work: Path, options: argparse.Namespace) -> dict[str, Any]:
    return run_child(
        "search",
        work,
        str(options.docs),
        str(options.queries),
        str(options.rounds),
        str(options.seed),
    )


def search_again(work: Path, options: argparse.Namespace) -> int:
    """The re-syncs and the search step alone, over a folder an earlier ``--keep`` run left."""
    corpus = work / "corpus"
    if not (corpus / _synthetic.relative_path(options.docs - 1)).is_file():
        print(f"{work} holds no kept corpus of {options.docs} documents", file=sys.stderr)
        return 2
    print(f"reusing {work} ({options.docs:,} documents)")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs (shared machine)")
    print_resyncs(run_resyncs(work, options.resyncs))
    print(f"load average {os.getloadavg()[0]:.2f}")
    if options.queries > 0:
        search = run_search(work, options)
        print_search(search, options)
        if options.served_rounds:
            print(served_search(work, search["served_queries"], options))
    return 0


SIDES = {
    "ranking": "FTS5 floor, ranking only",
    "snippet": "FTS5 floor + snippet()",
    "tantivy": "tantivy alone (ranking)",
}


def print_search(search: dict[str, Any], options: argparse.Namespace) -> None:
    print(
        f"search: {search['queries']} varied queries that hit ({search['redrawn']} drawn "
        f"that found nothing were replaced), {options.rounds - 1} timed rounds; "
        f"{search['empty']} empty answers while timing; documents ranked by "
        f"{search['backend']}; in-process, the sides in an order rotated per query"
    )
    sides = search["sides"]
    gno_all = [v for vs in sides["gno"].values() for v in vs]
    plain = {
        name: [v for kind, vs in kinds.items() if kind not in FILTERED for v in vs]
        for name, kinds in sides.items()
    }
    print(f"  gno-trio Engine.search, all kinds   {summary(gno_all)}")
    print(f"  gno-trio Engine.search, unfiltered  {summary(plain['gno'])}")
    for name, label in SIDES.items():
        if name in plain:
            print(f"  {label:<35} {summary(plain[name])}")
    for name, label in SIDES.items():
        if name in plain:
            print(
                f"  gno-trio vs {label}: p50 {pct(plain['gno'], 50) / pct(plain[name], 50):.2f}x, "
                f"p99 {pct(plain['gno'], 99) / pct(plain[name], 99):.2f}x (unfiltered queries)"
            )
    for kind in KINDS:
        values = sides["gno"].get(kind, [])
        floor_values = sides["snippet"].get(kind, [])
        if values:
            print(
                f"    {kind:<14} gno {summary(values)}   FTS5+snippet p50 "
                f"{pct(floor_values, 50):.2f} ms"
            )


# -- search as users meet it: a warm MCP child, the HTTP gateway, the CLI ----------------


class GatewayPeer:
    """``gno_search`` over one keep-alive connection to ``gno-trio serve`` (modern era),
    timed like the stdio peers (same interface as ``bench_stdio_search.Peer``)."""

    def __init__(self, env: dict[str, str], queries: list[str], port: int) -> None:
        self.label = "gno-trio serve"
        self.samples_ms: list[float] = []
        self.cpu_s = 0.0
        self.cycle = len(queries)
        self._queries = itertools.cycle(queries)
        self._process = subprocess.Popen(
            [*GNO, "serve", "--json", "--no-embed", "--port", str(port)],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self._process.stdout is not None
        if not self._process.stdout.readline():
            raise RuntimeError("gno-trio serve did not start")
        self._http = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def searches(self, count: int, *, timed: bool) -> None:
        from bench_http import modern_headers, tool_call

        before = tree_cpu_s([self._process.pid])
        for _ in range(count):
            body = tool_call("gno_search", {"query": next(self._queries), "limit": 5})
            for attempt in (1, 2):
                started = time.perf_counter_ns()
                try:
                    self._http.request(
                        "POST", "/mcp", body=body, headers=modern_headers("gno_search")
                    )
                    response = self._http.getresponse()
                    answer = response.read()
                    break
                except (http.client.RemoteDisconnected, ConnectionError):
                    # The server closed the kept-alive connection while the other
                    # peer's block ran (its idle timeout): the call is timed again
                    # on a new connection.
                    self._http.close()
                    if attempt == 2:
                        raise
            elapsed = time.perf_counter_ns() - started
            if response.status != 200 or b"structuredContent" not in answer:
                raise RuntimeError(f"serve answered {response.status}: {answer[:300]!r}")
            if timed:
                self.samples_ms.append(elapsed / 1e6)
        if timed:
            self.cpu_s += tree_cpu_s([self._process.pid]) - before

    def close(self) -> None:
        self._http.close()
        self._process.terminate()
        reap(self._process)


def served_search(work: Path, queries: list[str], options: argparse.Namespace) -> str:
    """Search timed through a warm ``gno-trio mcp`` and a warm ``serve`` (fresh servers each
    round, interleaved in rotating blocks), beside the CLI one-shot."""
    from bench_stdio_search import Peer, interleaved

    dirs = gno_dirs(work)
    env = {
        **{k: v for k, v in os.environ.items() if k != "GNO_MCP_ENABLE_WRITE"},
        "GNO_CONFIG_DIR": str(dirs.config),
        "GNO_DATA_DIR": str(dirs.data),
        "GNO_CACHE_DIR": str(dirs.cache),
    }
    config = dirs.config_file
    if "maxRequestsPerMinute" not in (config.read_text("utf-8") if config.exists() else ""):
        with open(config, "a", encoding="utf-8") as handle:
            handle.write("gateway:\n  limits:\n    maxRequestsPerMinute: 1000000000\n")
    calls = min(len(queries), options.served_calls)
    figures: dict[str, list[tuple[float, float, float, float]]] = defaultdict(list)
    window = Window()
    for round_no in range(options.served_rounds):
        peers: list[Any] = [
            Peer("gno-trio mcp", [*GNO, "mcp"], env, "modern", queries, 5),
            GatewayPeer(env, queries, free_port("bench_scale")),
        ]
        if round_no % 2:
            peers.reverse()
        # Warm: the most each server's tree held while it answered (sampled every
        # 0.25 s), before its rest gives back what the calls left resident.
        samplers = {peer.label: RssSampler([peer._process.pid], interval=0.25) for peer in peers}
        try:
            with contextlib.ExitStack() as sampling:
                for sampler in samplers.values():
                    sampling.enter_context(sampler)
                interleaved(peers, calls, len(queries), 50, 3.0)
        finally:
            for peer in peers:
                peer.close()
        for peer in peers:
            figures[peer.label].append(
                (
                    percentile(peer.samples_ms, 50),
                    percentile(peer.samples_ms, 99),
                    peer.cpu_s * 1000 / len(peer.samples_ms),
                    samplers[peer.label].peak_kib / 1024,
                )
            )
    one_shot = []
    for query in queries[: options.cli_calls]:
        started = time.perf_counter()
        subprocess.run(
            [*GNO, "search", query, "--json", "-n", "5"],
            cwd=REPO,
            env=env,
            check=True,
            capture_output=True,
            timeout=600,
        )
        one_shot.append((time.perf_counter() - started) * 1000)
    window.close()
    lines = [
        f"\nsearch as served: {options.served_rounds} rounds with fresh servers, {calls} timed "
        "unfiltered queries (limit 5) per server and round after every query once, one in "
        "flight, rotating blocks of 50; median (min-max) over rounds"
    ]
    for label, runs in figures.items():
        lines.append(
            f"  {label:<16} p50 {spread([r[0] for r in runs], 2, ' ms'):<26} "
            f"p99 {spread([r[1] for r in runs], 2, ' ms'):<26} "
            f"CPU/call (server tree) {spread([r[2] for r in runs], 2, ' ms')}  "
            f"tree RSS warm (peak) {spread([r[3] for r in runs], 0, ' MiB')}"
        )
    lines.append(
        f"  CLI one-shot     p50 {pct(one_shot, 50):.0f} ms  max {max(one_shot):.0f} ms  "
        f"(n={len(one_shot)}, `gno-trio search --json`, a fresh process each)"
    )
    lines.append(f"  {window.line()}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
