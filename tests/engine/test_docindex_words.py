"""The tantivy index cuts text into the words FTS5's ``unicode61`` token characters make.

The index hands tantivy's whitespace tokenizer text whose separators Python
made spaces (:func:`analysis.words`); these tests hold it to a regular
expression over the same Unicode classes (letters, numbers, marks, private
use), run by tantivy itself, on text of every script and on the edge cases
(combining marks after NFC, private use, emoji, ideographs, digits).
"""

from __future__ import annotations

import tantivy
from hypothesis import given, settings
from hypothesis import strategies as st

from gno_trio.engine.search.docindex import analysis

TOKENIZERS = ("porter unicode61 remove_diacritics 2", "unicode61 remove_diacritics 2")


def reference(tokenizer: str) -> tantivy.TextAnalyzer:
    """The same filters after a tokenizer that keeps runs of the word classes."""
    builder = (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(r"[\p{L}\p{N}\p{M}\p{Co}]+"))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
    )
    if tokenizer.startswith("porter"):
        builder = builder.filter(tantivy.Filter.stemmer("english"))
    return builder.build()


def terms(tokenizer: str, text: str) -> list[str]:
    return analysis.analyzer(tokenizer).analyze(analysis.analyzed_text(tokenizer)(text))


# Pieces a note may hold: words of several scripts, marks that stay after NFC,
# separators of every kind, private-use and astral characters.
PIECES = st.sampled_from(
    [
        "running",
        "Tests",
        "node.js",
        "e-mail",
        "x_y",
        "café",
        "cafe\u0301",
        "naïve",
        "Straße",
        "東京都に住んでいます",
        "한국어",
        "हिन्दी",
        "क्षत्रिय",
        "العربية",
        "שָׁלוֹם",
        "Привет",
        "ÆØÅ",
        "42",
        "٣٤",
        "½",
        "Ⅻ",
        "\ue000\ue001",
        "\U000f0000",
        "😀",
        "🇫🇷",
        " ",
        "\t",
        "\n",
        "\u00a0",
        "\u2014",
        "\u201c",
        "\u2019",
        "...",
        "#",
        "@",
        "$",
        "\u200b",
    ]
)
TEXT = st.one_of(
    st.lists(PIECES, max_size=30).map("".join),
    st.text(st.characters(blacklist_categories=("Cs", "Cn")), max_size=200),
)


@settings(max_examples=400, deadline=None)
@given(TEXT, st.sampled_from(TOKENIZERS))
def test_the_words_are_the_word_class_runs_of_the_text(text: str, tokenizer: str) -> None:
    expected = reference(tokenizer).analyze(analysis.normalized(text))
    assert terms(tokenizer, text) == expected


def test_separators_split_and_word_characters_join() -> None:
    tokenizer = TOKENIZERS[1]
    assert terms(tokenizer, "node.js e-mail x_y") == ["node", "js", "e", "mail", "x", "y"]
    assert terms(tokenizer, "hi\u2014there \u201cquoted\u201d") == ["hi", "there", "quoted"]
    # A virama and vowel signs (marks) stay inside the Hindi word; NFC folds the accent.
    assert terms(tokenizer, "क्षत्रिय cafe\u0301") == ["क्षत्रिय", "cafe"]
    assert terms(tokenizer, "\ue000x 😀 東京") == ["\ue000x", "東京"]


def test_a_trigram_index_is_given_the_text_itself() -> None:
    assert analysis.analyzed_text("trigram")("a-b c") == "a-b c"
