"""The sandboxed conversion runner: bounded, parallel, isolating, reporting, cancellable."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator

import pytest

from gno_trio.engine.ingest.documents.limits import MIB, ConversionLimits
from gno_trio.engine.ingest.documents.runner import (
    ConversionJob,
    ConversionOutcome,
    ConversionRunner,
)
from gno_trio.errors import GnoError
from tests.support import document_factory as make

WORD = "wombatique"


def _big_html(paragraphs: int = 40_000) -> bytes:
    """A page whose conversion takes a while (many progress ticks): about 0.35 s per
    40,000 paragraphs on a two-core runner, so less on a faster one."""
    return b"<p>paragraph of ordinary words</p>" * paragraphs + f"<p>{WORD}</p>".encode()


FAST_TICKS = ConversionLimits(progress_interval_s=0.01)


@pytest.fixture
def runner() -> Iterator[ConversionRunner]:
    with ConversionRunner(FAST_TICKS, workers=2) as pool:
        yield pool


def _by_path(outcomes: list[ConversionOutcome]) -> dict[str, ConversionOutcome]:
    return {o.job.rel_path: o for o in outcomes}


def test_every_job_gets_one_outcome_and_bad_files_fail_alone(runner: ConversionRunner) -> None:
    jobs = [ConversionJob(f"ok{ext}", write(WORD), key=ext) for ext, write in make.WRITERS.items()]
    jobs += [
        ConversionJob("cut.pdf", make.pdf_bytes(WORD)[:500]),
        ConversionJob("bomb.xlsx", make.zip_bomb_like(make.xlsx_bytes(WORD), inflated_mb=32)),
        ConversionJob("noise.xyz", make.random_bytes()),
    ]
    outcomes = list(runner.run(jobs))
    assert sorted(o.job.rel_path for o in outcomes) == sorted(j.rel_path for j in jobs)
    found = _by_path(outcomes)
    for ext in make.WRITERS:
        outcome = found[f"ok{ext}"]
        assert outcome.error is None and outcome.converted is not None
        assert WORD in outcome.converted.markdown
        assert outcome.job.key == ext
    codes = {path: o.error.code for path, o in found.items() if o.error is not None}
    assert codes == {
        "cut.pdf": "CONVERSION_FAILED",
        "bomb.xlsx": "TOO_LARGE",
        "noise.xyz": "BINARY_FILE",
    }
    assert [p for p, o in found.items() if o.unsupported] == ["noise.xyz"]


def test_text_converts_inline_and_unknown_types_are_routed_by_content(
    runner: ConversionRunner,
) -> None:
    jobs = [
        ConversionJob("note.md", f"# Note\n\n{WORD}\n".encode()),
        ConversionJob("old.txt", f"café {WORD}\n".encode("latin-1")),
        ConversionJob("download", make.pdf_bytes(WORD)),  # a PDF saved without its extension
        ConversionJob("schema.proto", b'syntax = "proto3";\n'),
    ]
    found = _by_path(list(runner.run(jobs, ordered=True)))
    note = found["note.md"].converted
    assert note is not None and note.converter_id == "native/markdown"
    download = found["download"].converted
    assert download is not None and WORD in download.markdown
    assert download.mime == "application/pdf"
    jsonl = found["schema.proto"]
    assert jsonl.error is not None and jsonl.error.code == "UNSUPPORTED_TYPE" and jsonl.unsupported


def test_ordered_runs_keep_the_input_order(runner: ConversionRunner) -> None:
    jobs = [ConversionJob(f"{n}.html", f"<p>page {n}</p>".encode()) for n in range(12)]
    assert [o.job.rel_path for o in runner.run(jobs, ordered=True)] == [j.rel_path for j in jobs]


def test_workers_are_reused_and_run_in_parallel(runner: ConversionRunner) -> None:
    jobs = [ConversionJob(f"{n}.pdf", make.pdf_bytes(WORD, pages=3)) for n in range(6)]
    seen: set[int] = set()
    for _ in runner.run(jobs):
        seen.update(runner.worker_pids())
    assert len(seen) == 2
    list(runner.run(jobs))
    assert set(runner.worker_pids()) == seen  # no new processes for the second batch


def test_too_large_files_are_refused_without_a_worker() -> None:
    with ConversionRunner(ConversionLimits(max_bytes=1000), workers=1) as pool:
        outcome = next(pool.run([ConversionJob("big.pdf", make.pdf_bytes(WORD, pages=5))]))
        assert outcome.error is not None and outcome.error.code == "TOO_LARGE"
        assert pool.worker_pids() == []


def test_a_slow_conversion_is_stopped_at_the_time_limit_and_the_next_file_converts() -> None:
    with ConversionRunner(ConversionLimits(timeout_s=0.3), workers=1) as pool:
        # Ten times the limit here: still well over it on a machine several times faster.
        slow_page = _big_html(400_000)
        jobs = [ConversionJob("slow.html", slow_page), ConversionJob("quick.html", b"<p>x</p>")]
        found = _by_path(list(pool.run(jobs)))
    slow = found["slow.html"].error
    assert slow is not None and slow.code == "CONVERSION_TIMEOUT"
    assert "0.3 s" in slow.message
    assert found["quick.html"].converted is not None


def test_a_crashing_worker_fails_only_its_file() -> None:
    with ConversionRunner(FAST_TICKS, workers=1) as pool:
        killed: list[int] = []

        def crash(job: ConversionJob, done: int, total: int) -> None:
            if job.rel_path == "crash.html" and not killed:
                killed.extend(pool.worker_pids())
                os.kill(killed[0], signal.SIGSEGV)

        jobs = [
            ConversionJob("crash.html", _big_html()),
            ConversionJob("after.pdf", make.pdf_bytes(WORD)),
        ]
        found = _by_path(list(pool.run(jobs, on_progress=crash)))
    error = found["crash.html"].error
    assert error is not None and error.code == "CONVERSION_FAILED"
    assert "SIGSEGV" in error.message
    converted = found["after.pdf"].converted
    assert converted is not None and WORD in converted.markdown


def test_memory_exhaustion_fails_the_file_not_the_run() -> None:
    # The zip guard is relaxed so the parser itself meets the address-space limit.
    limits = ConversionLimits(
        max_memory_bytes=320 * MIB, max_zip_ratio=10**6, max_unpacked_bytes=4096 * MIB
    )
    bomb = make.zip_bomb_like(make.docx_bytes(WORD), inflated_mb=200, part="word/styles.xml")
    with ConversionRunner(limits, workers=1) as pool:
        jobs = [ConversionJob("huge.docx", bomb), ConversionJob("fine.docx", make.docx_bytes(WORD))]
        found = _by_path(list(pool.run(jobs)))
    error = found["huge.docx"].error
    assert error is not None and error.code == "CONVERSION_FAILED"
    assert "memory" in error.message or "crashed" in error.message
    assert found["fine.docx"].converted is not None


def test_progress_moves_during_one_big_file(runner: ConversionRunner) -> None:
    events: list[tuple[int, int]] = []
    outcome = next(
        runner.run(
            [ConversionJob("big.html", _big_html())],
            on_progress=lambda _job, done, total: events.append((done, total)),
        )
    )
    assert outcome.converted is not None and WORD in outcome.converted.markdown
    assert len(events) >= 2
    assert [done for done, _ in events] == sorted(done for done, _ in events)
    assert events[0][0] < events[0][1] and events[-1][0] == events[-1][1]


def test_cancel_from_another_thread_stops_the_run_and_its_worker() -> None:
    with ConversionRunner(workers=1) as pool:
        pool.convert("warm.html", b"<p>warm</p>")
        pid = pool.worker_pids()[0]
        timer = threading.Timer(0.3, pool.cancel)
        timer.start()
        with pytest.raises(GnoError) as info:
            list(pool.run([ConversionJob("big.html", _big_html(400_000))]))
        assert info.value.code == "CANCELLED"
        assert pid not in pool.worker_pids()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


class _Stop(Exception):
    pass


def test_a_progress_callback_can_stop_the_run(runner: ConversionRunner) -> None:
    def stop(_job: ConversionJob, _done: int, _total: int) -> None:
        raise _Stop

    with pytest.raises(_Stop):
        list(runner.run([ConversionJob("big.html", _big_html())], on_progress=stop))
    # The runner stays usable.
    assert WORD in runner.convert("after.html", f"<p>{WORD}</p>".encode()).markdown


def test_one_shot_convert_raises_the_files_error(runner: ConversionRunner) -> None:
    with pytest.raises(GnoError) as info:
        runner.convert("locked.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 64)
    assert info.value.code == "CONVERSION_FAILED"
