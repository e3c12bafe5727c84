"""Chunking: sizes, break points, code declarations, exact line ranges."""

from __future__ import annotations

import inspect
import itertools
import json.decoder
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gno_trio.engine.ingest.chunker import Chunk, chunk_text
from tests.support.shared import MCP_DOCS, required

DEFAULT_MAX = 3200  # 800 tokens x 4 chars
DEFAULT_WINDOW = 320  # +/-10 %
DEFAULT_OVERLAP = 480  # 15 %


def check_invariants(
    text: str, chunks: list[Chunk], max_chars: int, chars_per_token: int = 4
) -> None:
    """Properties every chunking must have, whatever the text."""
    if not text:
        assert chunks == []
        return
    assert chunks[0].pos == 0
    assert chunks[-1].pos + len(chunks[-1].text) == len(text)
    for index, chunk in enumerate(chunks):
        assert chunk.seq == index
        assert chunk.text, "chunks are never empty"
        assert text[chunk.pos : chunk.pos + len(chunk.text)] == chunk.text
        assert chunk.start_line == text.count("\n", 0, chunk.pos) + 1
        last_char = chunk.pos + len(chunk.text) - 1
        assert chunk.end_line == text.count("\n", 0, last_char) + 1
        assert chunk.token_count == -(-len(chunk.text) // chars_per_token)
        assert len(chunk.text) <= max_chars + max_chars // 10
    for previous, current in itertools.pairwise(chunks):
        assert previous.pos < current.pos, "progress"
        assert current.pos <= previous.pos + len(previous.text), "no gap: every char is covered"


def paragraphs(count: int, words: int = 60) -> str:
    sentence = "The quick brown fox jumps over the lazy dog near the river bank. "
    body = (sentence * (words // 12)).strip()
    return "\n\n".join(f"Paragraph {i}. {body}" for i in range(count))


def test_empty_text_has_no_chunks() -> None:
    assert chunk_text("") == []
    assert chunk_text("", code=True) == []


def test_short_text_is_one_chunk_with_its_line_range() -> None:
    text = "first line\nsecond line\nthird"
    [chunk] = chunk_text(text)
    assert chunk == Chunk(seq=0, pos=0, text=text, start_line=1, end_line=3, token_count=7)


def test_trailing_newline_belongs_to_the_line_it_ends() -> None:
    [chunk] = chunk_text("a\nb\n")
    assert (chunk.start_line, chunk.end_line) == (1, 2)


def test_text_just_over_the_target_is_not_split_into_a_tiny_tail() -> None:
    text = "word " * ((DEFAULT_MAX + DEFAULT_WINDOW) // 5)
    assert len(chunk_text(text)) == 1


def test_prose_chunks_are_about_3200_chars_overlap_and_end_on_paragraphs() -> None:
    text = paragraphs(80)
    chunks = chunk_text(text)
    check_invariants(text, chunks, DEFAULT_MAX)
    assert len(chunks) > 5
    for previous, current in itertools.pairwise(chunks):
        assert DEFAULT_MAX - DEFAULT_WINDOW <= len(previous.text) <= DEFAULT_MAX + DEFAULT_WINDOW
        assert previous.text.endswith("\n\n"), "paragraph break preferred"
        overlap = previous.pos + len(previous.text) - current.pos
        assert DEFAULT_OVERLAP // 2 <= overlap <= DEFAULT_OVERLAP
        # the overlap is nudged to a word start, never mid-word
        assert text[current.pos - 1] in " \n"


def test_sentence_end_is_preferred_over_newline_and_space() -> None:
    sentence = "Alpha beta gamma delta epsilon zeta eta theta iota kappa. "
    text = (sentence * 120).strip()
    first = chunk_text(text)[0]
    assert first.text.endswith(". ")
    assert DEFAULT_MAX - DEFAULT_WINDOW <= len(first.text) <= DEFAULT_MAX + DEFAULT_WINDOW


def test_newline_is_preferred_over_space() -> None:
    text = "\n".join("no sentence end here just words" for _ in range(300))
    first = chunk_text(text)[0]
    assert first.text.endswith("\n")


def test_text_without_any_break_is_cut_at_the_target() -> None:
    text = "x" * 10_000
    chunks = chunk_text(text)
    check_invariants(text, chunks, DEFAULT_MAX)
    assert len(chunks[0].text) == DEFAULT_MAX
    assert chunks[1].pos == DEFAULT_MAX - DEFAULT_OVERLAP


def test_smaller_budget_and_no_overlap() -> None:
    text = paragraphs(10, words=12)
    chunks = chunk_text(text, max_tokens=50, overlap=0.0)
    check_invariants(text, chunks, 200)
    for previous, current in itertools.pairwise(chunks):
        assert current.pos == previous.pos + len(previous.text)


@pytest.mark.parametrize(
    "kwargs",
    [{"max_tokens": 0}, {"chars_per_token": 0}, {"overlap": -0.1}, {"overlap": 0.9}],
)
def test_nonsense_parameters_are_rejected(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        chunk_text("text", **kwargs)  # type: ignore[arg-type]


def _python_module(functions: int) -> str:
    parts = ['"""A generated module."""\n\nimport os\n']
    for i in range(functions):
        parts.append(
            f"\n\n# helper number {i}\n@decorator({i})\n"
            f"def function_{i}(argument):\n"
            + "".join(f"    value_{j} = argument + {j}  # arithmetic\n" for j in range(12))
            + "    return value_0\n"
        )
    return "".join(parts)


DECLARATION = re.compile(r"[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]")
ATTACHED = re.compile(r"[ \t]*(?:@|#)")


def _first_code_line(chunk_text_value: str) -> str:
    for line in chunk_text_value.split("\n"):
        if line.strip() and not ATTACHED.match(line):
            return line
    return ""


def test_code_breaks_before_declarations_keeping_decorators_and_comments() -> None:
    text = _python_module(30)
    chunks = chunk_text(text, code=True)
    check_invariants(text, chunks, DEFAULT_MAX)
    assert len(chunks) > 3
    for previous, current in itertools.pairwise(chunks):
        assert current.pos == previous.pos + len(previous.text), "no overlap at declarations"
        assert current.text.startswith("# helper number"), "comment and decorator stay attached"
        assert _first_code_line(current.text).startswith("def function_")


def test_code_chunking_on_a_real_python_file() -> None:
    source = inspect.getsource(json.decoder)  # ~12 KB, a few long functions and classes
    chunks = chunk_text(source, code=True)
    check_invariants(source, chunks, DEFAULT_MAX)
    assert len(chunks) >= 3
    cuts = chunks[1:]
    at_declaration = [c for c in cuts if DECLARATION.match(_first_code_line(c.text))]
    assert len(at_declaration) >= len(cuts) * 3 // 4, "cuts land on def/class lines"
    lines = source.split("\n")
    for chunk in at_declaration:
        assert chunk.text.startswith(lines[chunk.start_line - 1])


def test_code_without_declarations_falls_back_to_line_breaks_with_overlap() -> None:
    text = "".join(f"echo step {i}\n" for i in range(1000))
    chunks = chunk_text(text, code=True)
    check_invariants(text, chunks, DEFAULT_MAX)
    for previous, current in itertools.pairwise(chunks):
        assert previous.text.endswith("\n")
        assert current.pos < previous.pos + len(previous.text)


@pytest.mark.parametrize(
    "line",
    [
        "export function handler(req) {",
        "export default class Store {",
        "pub fn parse(input: &str) -> Result<()> {",
        "func (s *Server) Serve() error {",
        "impl<T> Display for Wrapper<T> {",
        "interface Props {",
        "type Alias = string;",
        "async def fetch(url):",
        "class Widget(Base):",
    ],
)
def test_declaration_keywords_of_several_languages(line: str) -> None:
    filler = "".join(f"    statement_{i}();\n" for i in range(100))
    text = filler + line + "\n" + filler
    chunks = chunk_text(text, code=True, max_tokens=len(filler) // 4 + 20)
    assert len(chunks) == 2
    assert chunks[1].text.startswith(line)


def test_real_large_pages_chunk_exactly() -> None:
    pages = sorted(required(MCP_DOCS, "the shared mcp-docs fixture corpus").rglob("schema.md"))
    assert pages, "the mcp-docs corpus has no schema pages"
    for page in pages:
        text = page.read_text(encoding="utf-8")
        check_invariants(text, chunk_text(text), DEFAULT_MAX)


@pytest.mark.benchmark
def test_chunking_is_linear_on_a_large_text() -> None:
    text = paragraphs(4000)  # about 1.5 MB
    started = time.perf_counter()
    chunks = chunk_text(text)
    elapsed = time.perf_counter() - started
    assert len(chunks) > 400
    assert elapsed < 5, f"took {elapsed:.2f}s"


TEXT_ALPHABET = st.sampled_from(
    [*list("ab c.!?\n\n\t日é"), "\n\n", "def ", "class ", "@x\n", "# c\n"]
)


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(TEXT_ALPHABET, max_size=300).map("".join),
    max_tokens=st.integers(min_value=1, max_value=40),
    overlap=st.floats(min_value=0.0, max_value=0.5),
    chars_per_token=st.integers(min_value=1, max_value=6),
    code=st.booleans(),
)
def test_chunking_invariants_hold_for_random_texts(
    text: str, max_tokens: int, overlap: float, chars_per_token: int, code: bool
) -> None:
    chunks = chunk_text(
        text, code=code, max_tokens=max_tokens, overlap=overlap, chars_per_token=chars_per_token
    )
    check_invariants(text, chunks, max_tokens * chars_per_token, chars_per_token)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=2000), st.booleans())
def test_chunking_invariants_hold_for_arbitrary_unicode(text: str, code: bool) -> None:
    check_invariants(text, chunk_text(text, code=code, max_tokens=30), 120)
