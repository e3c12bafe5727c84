"""Source bytes -> text mirror: formats, decoding, refusals."""

from __future__ import annotations

import codecs
from pathlib import PurePosixPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gno_trio.engine.ingest import convert as convert_module
from gno_trio.engine.ingest.convert import (
    MAX_SOURCE_BYTES,
    REGISTRY,
    Converted,
    convert,
    converter_for,
    extension_of,
    supported_extensions,
)
from gno_trio.errors import GnoError


def _error_code(rel_path: str, data: bytes, **kwargs: int) -> str:
    with pytest.raises(GnoError) as info:
        convert(rel_path, data, **kwargs)
    return info.value.code


@pytest.mark.parametrize("rel_path", ["notes/a.md", "A.MD", "x.markdown", "docs/page.mdx"])
def test_markdown_files_use_the_markdown_converter(rel_path: str) -> None:
    result = convert(rel_path, b"# Title\n\nBody\n")
    assert result.converter_id == "native/markdown"
    assert result.converter_version == "1"
    assert result.mime == "text/markdown"
    assert result.ext == rel_path[rel_path.rindex(".") :].lower()
    assert result.markdown == "# Title\n\nBody\n"
    assert result.is_code is False
    assert result.language is None
    assert result.warnings == ()


@pytest.mark.parametrize(
    ("rel_path", "mime"),
    [
        ("a.txt", "text/plain"),
        ("a.rst", "text/x-rst"),
        ("a.org", "text/org"),
        ("conf/settings.json", "application/json"),
        ("ci.yml", "application/yaml"),
        ("pyproject.toml", "application/toml"),
    ],
)
def test_prose_and_config_files_are_plain_text(rel_path: str, mime: str) -> None:
    result = convert(rel_path, b"key = 1\n")
    assert result.converter_id == "native/plaintext"
    assert result.mime == mime
    assert result.is_code is False
    assert result.language is None


@pytest.mark.parametrize(
    ("rel_path", "language", "mime"),
    [
        ("src/app.py", "python", "text/x-python"),
        ("web/index.ts", "typescript", "text/x-typescript"),
        ("web/App.TSX", "tsx", "text/x-typescript"),
        ("lib/util.mjs", "javascript", "text/javascript"),
        ("main.go", "go", "text/x-go"),
        ("lib.rs", "rust", "text/x-rust"),
        ("kernel.h", "c", "text/x-c"),
        ("Main.java", "java", "text/x-java"),
        ("deploy.sh", "shell", "text/x-shellscript"),
        ("schema.sql", "sql", "text/x-sql"),
    ],
)
def test_source_files_are_code_with_a_language(rel_path: str, language: str, mime: str) -> None:
    result = convert(rel_path, b"def main():\n    pass\n")
    assert result.converter_id == "native/code"
    assert result.is_code is True
    assert result.language == language
    assert result.mime == mime
    assert result.markdown == "def main():\n    pass\n"


@pytest.mark.parametrize(
    "rel_path", ["image.png", "archive.zip", "Makefile", ".env", "server.log", "report.pdf"]
)
def test_unsupported_files_have_no_converter_and_are_refused(rel_path: str) -> None:
    assert converter_for(rel_path) is None
    assert _error_code(rel_path, b"whatever") == "UNSUPPORTED_TYPE"


def test_registry_claims_each_extension_once_and_lookup_agrees() -> None:
    claimed = [ext for converter in REGISTRY for ext in converter.extensions]
    assert len(claimed) == len(set(claimed))
    assert set(claimed) == supported_extensions()
    for ext in claimed:
        assert ext == ext.lower() and ext.startswith(".")
        converter = converter_for(f"dir/file{ext.upper()}")
        assert converter is not None and ext in converter.extensions


def test_crlf_and_lone_cr_become_newlines() -> None:
    result = convert("win.md", b"line one\r\nline two\rline three\r\n")
    assert result.markdown == "line one\nline two\nline three\n"


def test_utf8_bom_is_dropped() -> None:
    result = convert("bom.md", codecs.BOM_UTF8 + "# Überschrift\n".encode())
    assert result.markdown == "# Überschrift\n"
    assert result.warnings == ()


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_with_bom_is_decoded(encoding: str) -> None:
    bom = codecs.BOM_UTF16_LE if encoding.endswith("le") else codecs.BOM_UTF16_BE
    result = convert("notepad.txt", bom + "héllo\r\nworld".encode(encoding))
    assert result.markdown == "héllo\nworld"
    assert result.warnings == ()  # a byte-order mark is certain: nothing to warn about


def test_nul_bytes_mean_binary() -> None:
    png_header = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
    assert _error_code("disguised.md", png_header) == "BINARY_FILE"
    assert _error_code("a.txt", b"text\x00more") == "BINARY_FILE"


def test_legacy_encoded_text_is_decoded_with_a_low_confidence_warning() -> None:
    result = convert("latin1.txt", "café crème".encode("latin-1"))
    assert result.markdown == "café crème"
    assert result.warnings == ("LOW_CONFIDENCE: decoded as Windows-1252 (detected)",)


def test_invalid_utf16_after_bom_means_binary() -> None:
    assert _error_code("odd.txt", codecs.BOM_UTF16_LE + b"a") == "BINARY_FILE"


def test_default_size_limit_is_100_mib() -> None:
    assert MAX_SOURCE_BYTES == 100 * 1024 * 1024


def test_size_limit_is_inclusive_and_checked_before_decoding() -> None:
    assert convert("ok.md", b"x" * 10, max_bytes=10).markdown == "x" * 10
    with pytest.raises(GnoError) as info:
        convert("big.md", b"\x00" * 11, max_bytes=10)
    assert info.value.code == "TOO_LARGE"
    assert info.value.details == {"size": 11, "limit": 10}


def test_size_limit_follows_the_module_constant(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(convert_module, "MAX_SOURCE_BYTES", 8)
    assert _error_code("big.txt", b"123456789") == "TOO_LARGE"
    assert convert("small.txt", b"12345678").markdown == "12345678"


@settings(deadline=None)  # a legacy-encoding guess may take a while on a busy machine
@given(st.binary(max_size=200))
def test_arbitrary_bytes_convert_or_are_refused_as_binary(data: bytes) -> None:
    try:
        result = convert("fuzz.md", data)
    except GnoError as exc:
        assert exc.code == "BINARY_FILE"
        return
    assert isinstance(result, Converted)
    assert "\r" not in result.markdown
    assert "\x00" not in result.markdown


@given(st.text(alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00")))
def test_utf8_text_round_trips_up_to_newline_normalisation(text: str) -> None:
    result = convert("fuzz.txt", text.encode("utf-8"))
    expected = text[1:] if text.startswith("\ufeff") else text
    assert result.markdown == expected.replace("\r\n", "\n").replace("\r", "\n")


@given(st.text(alphabet=st.sampled_from(list("ab./\\ .MD_-é")), max_size=14))
def test_the_extension_is_the_one_pathlib_gives(rel_path: str) -> None:
    """The string cut the walker relies on agrees with pathlib on any name."""
    expected = PurePosixPath(rel_path.replace("\\", "/")).suffix.lower()
    assert extension_of(rel_path) == expected
