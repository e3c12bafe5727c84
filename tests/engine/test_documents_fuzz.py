"""Damaged documents: any mutation of a real file converts or fails with a reason code.

Python-level parsers (Office, HTML) are fuzzed in-process with hypothesis;
PDFium is C, so mutated PDFs go through the sandboxed runner in one batch
(a crash there must cost one file, never the test process).
"""

from __future__ import annotations

import random
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gno_trio.engine.ingest.documents.reasons import SKIP_REASONS
from gno_trio.engine.ingest.documents.registry import document_converter_for
from gno_trio.engine.ingest.documents.runner import ConversionJob, ConversionRunner
from gno_trio.errors import GnoError
from tests.support import document_factory as make

WORD = "fuzzword"


@cache
def _original(ext: str) -> bytes:
    return make.WRITERS[ext](WORD)


def _mutate(data: bytes, rng: random.Random) -> bytes:
    """Flip bytes, cut the tail, or splice a block of noise in."""
    buffer = bytearray(data)
    choice = rng.randrange(3)
    if choice == 0:
        for _ in range(rng.randint(1, 16)):
            buffer[rng.randrange(len(buffer))] = rng.randrange(256)
    elif choice == 1:
        del buffer[rng.randrange(1, len(buffer)) :]
    else:
        at = rng.randrange(len(buffer))
        buffer[at:at] = rng.randbytes(rng.randint(1, 256))
    return bytes(buffer)


def _assert_converts_or_fails_with_a_code(rel_path: str, data: bytes) -> None:
    converter = document_converter_for(rel_path)
    assert converter is not None
    try:
        result = converter.convert(rel_path, data)
    except GnoError as error:
        assert error.code in SKIP_REASONS, error
        return
    assert "\r" not in result.markdown


@pytest.mark.parametrize("ext", [".docx", ".xlsx", ".pptx", ".html"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_mutated_documents_convert_or_fail_with_a_code(ext: str, seed: int) -> None:
    data = _mutate(_original(ext), random.Random(seed))
    _assert_converts_or_fails_with_a_code(f"fuzz{ext}", data)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="<>/ab=\"'!-&;#x \n", max_size=400))
def test_tag_soup_converts(html: str) -> None:
    _assert_converts_or_fails_with_a_code("soup.html", html.encode())


def test_mutated_pdfs_fail_one_at_a_time_in_the_sandbox() -> None:
    rng = random.Random(1313)
    original = make.pdf_bytes(WORD, pages=3)
    jobs = [ConversionJob(f"m{n}.pdf", _mutate(original, rng)) for n in range(60)]
    jobs.append(ConversionJob("intact.pdf", original))
    with ConversionRunner(workers=2) as pool:
        outcomes = {o.job.rel_path: o for o in pool.run(jobs)}
    assert len(outcomes) == len(jobs)
    for outcome in outcomes.values():
        if outcome.error is not None:
            assert outcome.error.code in SKIP_REASONS, outcome.error
    intact = outcomes["intact.pdf"].converted
    assert intact is not None and WORD in intact.markdown
