"""Legacy-encoded text is decoded, not refused; binary data is named as such."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gno_trio.engine.ingest.documents.encoding import decode_text, looks_binary
from gno_trio.engine.ingest.documents.reasons import parse_warning
from gno_trio.errors import GnoError
from tests.support.document_factory import random_bytes

FRENCH = "Le café de Zoë était fermé; naïve résumé à Zürich, garçon.\nmotunique\n"
SAMPLES = [
    ("latin-1", FRENCH),
    ("cp1252", "He said “hello” – it’s €5 for the café.\n"),
    ("latin-1", "¿Qué tal? El niño comió piñata.\n"),
    ("shift_jis", "日本語のテキストです。東京で会議があります。ユニーク単語。\n"),
    ("gb18030", "这是一个中文文本文件，包含一些独特的词语。北京欢迎你。\n"),
    ("cp1251", "Привет, как дела? Это русский текст в кодировке.\n"),
    ("cp1250", "Zażółć gęślą jaźń, to jest polski tekst o rzece.\n"),
]


@pytest.mark.parametrize(("encoding", "text"), SAMPLES)
def test_legacy_encodings_are_decoded(encoding: str, text: str) -> None:
    decoded, warnings = decode_text("old.txt", text.encode(encoding))
    assert decoded == text
    assert [parse_warning(w)["code"] for w in warnings] == ["LOW_CONFIDENCE"]


@pytest.mark.parametrize(
    ("bom", "encoding"),
    [
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
        (codecs.BOM_UTF32_LE, "utf-32-le"),
        (codecs.BOM_UTF32_BE, "utf-32-be"),
    ],
)
def test_byte_order_marks_name_the_encoding(bom: bytes, encoding: str) -> None:
    text = "Grüße aus Köln\r\nzweite Zeile\n"
    decoded, warnings = decode_text("bom.txt", bom + text.encode(encoding))
    assert decoded == "Grüße aus Köln\nzweite Zeile\n"
    assert warnings == ()


def test_utf16_without_a_mark_is_recognised() -> None:
    decoded, _ = decode_text("w.txt", "Windows notepad wrote this\n".encode("utf-16-le"))
    assert decoded == "Windows notepad wrote this\n"


def test_utf8_with_a_few_stray_bytes_stays_utf8() -> None:
    data = "Grüße aus Köln, schöne Straße ".encode() + b"caf\xe9\n"
    decoded, warnings = decode_text("mixed.txt", data)
    assert decoded.startswith("Grüße aus Köln, schöne Straße caf")
    assert [parse_warning(w)["code"] for w in warnings] == ["LOSSY"]


@pytest.mark.parametrize("size", [16, 64, 4096, 100_000])
def test_random_bytes_are_binary(size: int) -> None:
    with pytest.raises(GnoError) as info:
        decode_text("noise.xyz", random_bytes(size))
    assert info.value.code == "BINARY_FILE"


def test_images_and_executables_are_binary() -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + random_bytes(200)
    elf = b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + random_bytes(500)
    for data in (png, elf):
        assert looks_binary(data)
        with pytest.raises(GnoError) as info:
            decode_text("x.md", data)
        assert info.value.code == "BINARY_FILE"


def test_broken_utf16_after_a_mark_is_binary() -> None:
    with pytest.raises(GnoError) as info:
        decode_text("odd.txt", codecs.BOM_UTF16_LE + b"a")
    assert info.value.code == "BINARY_FILE"


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2048))
def test_any_bytes_decode_or_are_binary(data: bytes) -> None:
    try:
        text, warnings = decode_text("fuzz.txt", data)
    except GnoError as error:
        assert error.code == "BINARY_FILE"
        return
    assert "\r" not in text and "\x00" not in text
    assert all(parse_warning(w)["code"] in {"LOSSY", "LOW_CONFIDENCE"} for w in warnings)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=500))
def test_any_utf8_text_round_trips(text: str) -> None:
    if "\x00" in text or text.startswith("\ufeff"):
        return  # NUL means binary; a leading BOM is dropped by design
    decoded, warnings = decode_text("t.txt", text.encode("utf-8"))
    assert decoded == text.replace("\r\n", "\n").replace("\r", "\n")
    assert warnings == ()
