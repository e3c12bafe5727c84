"""Document conversion throughput over a generated mixed corpus.

The corpus (seeded, written to a temporary folder): 100 PDFs of 10 pages,
100 DOCX, 50 XLSX, 50 PPTX and 100 HTML pages, each with its own planted
word. Measured in one run, on the same bytes:

- the sandboxed runner with ``--workers`` processes (default 2), and with one;
- the floor: the same converters called in this process, serially, with no
  worker, no pipe and no bound (what the sandbox costs is the difference);
- files/s and PDF pages/s, peak RSS of this process and of the largest worker;
- the hit rate of the planted words in the mirrors (must be 100 %);
- ``update`` through the real engine (walk, convert, chunk, index) in
  files/s, a search for every planted word (the top hit must be its file),
  and the re-sync of the unchanged corpus (a stat per file).

Then, for each format of mail, calendars, subtitles and JSON Lines (written
by their own libraries: see ``tests/support/message_factory.py``): files/s and MB/s
in the sandboxed runner and the in-process floor, min / median / max over
rounds. Last, a mixed folder of about ``--mixed`` files built by
``bench/_mixed.py`` (every format, legacy encodings, workbooks declaring the
whole grid, broken and foreign files) indexed by the engine: its files/s,
its outcomes by reason code, and the timeouts, which must be none.

Usage: python bench/bench_convert.py [--workers N] [--scale F] [--mixed N]
       [--only office|formats|mixed] [--rounds N]
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import _mixed  # noqa: E402
from _common import Window, spread  # noqa: E402

from gno_trio.config.dirs import Dirs  # noqa: E402
from gno_trio.engine import Engine, SearchRequest  # noqa: E402
from gno_trio.engine.ingest.documents.registry import document_converter_for  # noqa: E402
from gno_trio.engine.ingest.documents.runner import (  # noqa: E402
    ConversionJob,
    ConversionRunner,
)
from tests.support import document_factory as make  # noqa: E402
from tests.support import message_factory as messages  # noqa: E402

FORMAT_FILES = {".eml": 60, ".mbox": 6, ".ics": 60, ".vtt": 60, ".srt": 60, ".jsonl": 60}
MBOX_MESSAGES = 500
MIX = {".pdf": 100, ".docx": 100, ".xlsx": 50, ".pptx": 50, ".html": 100}
PDF_PAGES = 10


def _word(rng: random.Random) -> str:
    return "zq" + "".join(rng.choice("bcdfghjklmnprstvwxz") for _ in range(10))


def build_corpus(root: Path, scale: float, seed: int) -> dict[str, str]:
    """Write the corpus; returns relative path -> planted word."""
    rng = random.Random(seed)
    planted: dict[str, str] = {}
    for ext, count in MIX.items():
        for index in range(max(1, round(count * scale))):
            word = _word(rng)
            rel = f"{ext[1:]}/doc-{index:03d}{ext}"
            data = (
                make.pdf_bytes(word, pages=PDF_PAGES) if ext == ".pdf" else make.WRITERS[ext](word)
            )
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            planted[rel] = word
    return planted


def _jobs(root: Path, planted: dict[str, str]) -> list[ConversionJob]:
    return [
        ConversionJob(rel, (root / rel).read_bytes(), key=word) for rel, word in planted.items()
    ]


def _peak_rss_mb(pid: int) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return float("nan")
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


WORKER_PEAKS: list[float] = []


def run_pool(jobs: list[ConversionJob], workers: int) -> tuple[float, float, int, int]:
    """(start-up seconds, conversion seconds, hits, failures) with a fresh pool."""
    hits = failures = 0
    with ConversionRunner(workers=workers) as pool:
        started = time.perf_counter()
        pool.convert("warm.html", b"<p>warm</p>")  # pay the worker start once, outside
        warm = time.perf_counter() - started
        started = time.perf_counter()
        for outcome in pool.run(jobs):
            if outcome.converted is None:
                failures += 1
            elif outcome.job.key in outcome.converted.markdown:
                hits += 1
        elapsed = time.perf_counter() - started
        WORKER_PEAKS.extend(_peak_rss_mb(pid) for pid in pool.worker_pids())
    return warm, elapsed, hits, failures


def run_in_process(jobs: list[ConversionJob]) -> tuple[float, int]:
    hits = 0
    started = time.perf_counter()
    for job in jobs:
        converter = document_converter_for(job.rel_path)
        assert converter is not None
        if job.key in converter.convert(job.rel_path, job.data).markdown:
            hits += 1
    return time.perf_counter() - started, hits


def run_index(root: Path, planted: dict[str, str], workers: int) -> dict[str, float]:
    """Index the corpus with the real engine, search every planted word, re-sync."""
    base = Path(tempfile.mkdtemp(prefix="gno-bench-convert-index-"))
    dirs = Dirs(config=base / "config", data=base / "data", cache=base / "cache")
    dirs.config.mkdir(parents=True)
    (dirs.config / "index.yml").write_text(f"conversion:\n  workers: {workers}\n", "utf-8")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(root), name="bench")
        started = time.perf_counter()
        (report,) = engine.sync()
        index_s = time.perf_counter() - started
        hits = 0
        for rel, word in planted.items():
            found = engine.search.lexical(SearchRequest(query=word, limit=3))["results"]
            hits += bool(found) and found[0]["source"]["relPath"] == rel
        started = time.perf_counter()
        (again,) = engine.sync()
        resync_s = time.perf_counter() - started
    shutil.rmtree(base, ignore_errors=True)
    return {
        "index_s": index_s,
        "indexed": report.added,
        "errors": len(report.errors),
        "hits": hits,
        "resync_s": resync_s,
        "resync_unchanged": again.unchanged,
    }


def format_jobs(ext: str, count: int, rng: random.Random) -> list[ConversionJob]:
    """``count`` files of one new format, each with its planted word (the job's key)."""
    jobs = []
    for index in range(count):
        word = _word(rng)
        if ext == ".mbox":
            data = messages.mbox_bytes(word, messages=MBOX_MESSAGES)
        else:
            data = messages.WRITERS[ext](word)
        jobs.append(ConversionJob(f"{ext[1:]}/f{index:03d}{ext}", data, key=word))
    return jobs


def run_formats(workers: int, rounds: int, seed: int) -> None:
    """Throughput of each new format: sandboxed runner and in-process floor, over rounds."""
    rng = random.Random(seed)
    print(f"new formats, {workers} workers, {rounds} rounds (min / median / max):")
    window = Window()
    with ConversionRunner(workers=workers) as pool:
        pool.convert("warm.html", b"<p>warm</p>")
        for ext, count in FORMAT_FILES.items():
            jobs = format_jobs(ext, count, rng)
            size_mb = sum(len(j.data) for j in jobs) / 1e6
            sandboxed, floor, hits = [], [], 0
            for _ in range(rounds):
                started = time.perf_counter()
                for outcome in pool.run(jobs):
                    converted = outcome.converted
                    hits += converted is not None and outcome.job.key in converted.markdown
                sandboxed.append(len(jobs) / (time.perf_counter() - started))
                floor.append(len(jobs) / run_in_process(jobs)[0])
            unit = f" ({MBOX_MESSAGES} messages each)" if ext == ".mbox" else ""
            median_mb = sorted(sandboxed)[len(sandboxed) // 2] * size_mb / len(jobs)
            print(
                f"  {ext:<6} {len(jobs):3d} files{unit}, {size_mb:5.1f} MB: sandboxed "
                f"{spread(sandboxed, 1)} files/s ({median_mb:.1f} MB/s), "
                f"floor {spread(floor, 1)} files/s; planted words "
                f"{100 * hits / (len(jobs) * rounds):.0f} %"
            )
    print(f"  {window.close().line()}")


def run_mixed(count: int, workers: int, seed: int) -> None:
    """Index a generated mixed folder with the engine; outcomes by code, timeouts must be 0."""
    with tempfile.TemporaryDirectory(prefix="gno-bench-mixed-") as tmp:
        root = Path(tmp) / "folder"
        started = time.perf_counter()
        expected = _mixed.build(root, count, seed)
        built_s = time.perf_counter() - started
        base = Path(tmp) / "index"
        dirs = Dirs(config=base / "config", data=base / "data", cache=base / "cache")
        dirs.config.mkdir(parents=True)
        (dirs.config / "index.yml").write_text(f"conversion:\n  workers: {workers}\n", "utf-8")
        window = Window()
        with Engine.open(dirs=dirs) as engine:
            engine.collections.add(str(root), name="mixed")
            started = time.perf_counter()
            (report,) = engine.sync()
            index_s = time.perf_counter() - started
            window.close()
            codes: dict[str, int] = {}
            for error in report.errors:
                codes[error["code"]] = codes.get(error["code"], 0) + 1
            wrong = [
                rel
                for rel, (outcome, word) in expected.items()
                if outcome == "indexed"
                and word
                and not any(
                    h["source"]["relPath"] == rel
                    for h in engine.search.lexical(SearchRequest(query=word, limit=3))["results"]
                )
            ]
        errors_expected = sum(1 for outcome, _ in expected.values() if outcome == "error")
        print(
            f"mixed folder: {len(expected)} files built in {built_s:.1f} s, indexed by update "
            f"with {workers} workers in {index_s:.1f} s = {len(expected) / index_s:.1f} files/s"
        )
        print(
            f"  {report.added} indexed, {report.skipped} skipped, {len(report.errors)} errors "
            f"({errors_expected} expected: locked or cut PDFs): "
            + ", ".join(f"{code} {n}" for code, n in sorted(codes.items()))
        )
        print(f"  CONVERSION_TIMEOUT: {codes.get('CONVERSION_TIMEOUT', 0)} (must be 0)")
        print(f"  planted words not found as the file's hit: {len(wrong)} {wrong[:5]}")
        print(f"  {window.line()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scale", type=float, default=1.0, help="corpus size factor")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--mixed", type=int, default=1000, help="files in the mixed folder")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the format figures")
    parser.add_argument("--only", choices=("office", "formats", "mixed"))
    args = parser.parse_args()
    if args.only in (None, "formats"):
        run_formats(args.workers, args.rounds, args.seed)
    if args.only in (None, "mixed"):
        run_mixed(args.mixed, args.workers, args.seed)
    if args.only not in (None, "office"):
        return
    with tempfile.TemporaryDirectory(prefix="gno-bench-convert-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        planted = build_corpus(root, args.scale, args.seed)
        print(f"corpus: {len(planted)} files generated in {time.perf_counter() - started:.1f} s")
        jobs = _jobs(root, planted)
        pdf_pages = sum(PDF_PAGES for j in jobs if j.rel_path.endswith(".pdf"))
        pdf_jobs = [j for j in jobs if j.rel_path.endswith(".pdf")]

        floor_s, floor_hits = run_in_process(jobs)
        rss_self_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        warm_1, one_s, hits_1, fail_1 = run_pool(jobs, 1)
        warm_n, many_s, hits_n, fail_n = run_pool(jobs, args.workers)
        _, pdf_s, _, _ = run_pool(pdf_jobs, args.workers)
        rss_worker_mb = max(WORKER_PEAKS, default=float("nan"))

        n, w = len(jobs), args.workers
        print(
            f"in-process floor (1 core, no sandbox): {n / floor_s:7.1f} files/s ({floor_s:.2f} s)"
        )
        print(f"sandboxed, 1 worker:                   {n / one_s:6.1f} files/s ({one_s:.2f} s)")
        print(
            f"sandboxed, {w} workers:                  {n / many_s:7.1f} files/s ({many_s:.2f} s)"
        )
        print(f"  PDF only, {w} workers:                 {pdf_pages / pdf_s:7.1f} pages/s")
        print(f"worker start-up (first file): 1 worker {warm_1:.2f} s, {w} workers {warm_n:.2f} s")
        print(f"ratio sandbox 1 worker / floor: {one_s / floor_s:.2f}x time")
        print(f"speed-up {args.workers} workers / 1 worker: {one_s / many_s:.2f}x")
        print(f"peak RSS: this process {rss_self_mb:.0f} MB, largest worker {rss_worker_mb:.0f} MB")
        idx = run_index(root, planted, w)
        print(
            f"update through the index, {w} workers: {n / idx['index_s']:6.1f} files/s "
            f"({idx['index_s']:.2f} s, {idx['indexed']:.0f} indexed, {idx['errors']:.0f} errors)"
        )
        print(
            f"re-sync of the unchanged corpus: {idx['resync_s'] * 1000:.0f} ms "
            f"({idx['resync_unchanged']:.0f} unchanged)"
        )
        print(
            f"search hit rate of the planted words (top hit is the file): "
            f"{100 * idx['hits'] / n:.1f} %"
        )
        for label, hits, fails in (
            ("floor", floor_hits, 0),
            ("1 worker", hits_1, fail_1),
            (f"{args.workers} workers", hits_n, fail_n),
        ):
            print(f"planted-word hit rate ({label}): {100 * hits / n:.1f} % ({fails} failed)")


if __name__ == "__main__":
    main()
