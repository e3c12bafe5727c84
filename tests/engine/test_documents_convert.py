"""Document converters on real files: every planted word found, structure kept, refusals coded."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import pytest
from fpdf import FPDF

from gno_trio.engine.ingest.convert import Converted
from gno_trio.engine.ingest.documents.limits import ConversionLimits, applied
from gno_trio.engine.ingest.documents.reasons import parse_warning
from gno_trio.engine.ingest.documents.registry import (
    document_converter_for,
    document_extensions,
    sniff,
)
from gno_trio.engine.ingest.frontmatter import extract_meta
from gno_trio.errors import GnoError
from tests.support import document_factory as make

WORD = "quokkaberry"


def _convert(rel_path: str, data: bytes) -> Converted:
    converter = document_converter_for(rel_path)
    assert converter is not None, rel_path
    return converter.convert(rel_path, data)


def _code(rel_path: str, data: bytes, limits: ConversionLimits | None = None) -> str:
    with applied(limits or ConversionLimits()), pytest.raises(GnoError) as info:
        _convert(rel_path, data)
    return info.value.code


@pytest.mark.parametrize("ext", sorted(make.WRITERS))
def test_each_format_yields_markdown_holding_the_planted_word(ext: str) -> None:
    result = _convert(f"docs/sample{ext}", make.WRITERS[ext](WORD))
    assert WORD in result.markdown
    assert result.ext == ext
    assert result.converter_id.startswith("document/")
    assert result.converter_version[0].isdigit()
    assert result.mime != "application/octet-stream"
    assert result.is_code is False
    assert result.markdown.endswith("\n") and "\r" not in result.markdown
    assert all(line == line.rstrip() for line in result.markdown.split("\n"))


@pytest.mark.parametrize("ext", sorted(make.MACRO_ENABLED))
def test_macro_enabled_office_files_are_read_too(ext: str) -> None:
    result = _convert(f"tools{ext}", make.macro_enabled_bytes(ext, WORD))
    assert WORD in result.markdown
    assert "macroEnabled" in result.mime


def test_converter_versions_name_the_parsing_library() -> None:
    assert _convert("a.pdf", make.pdf_bytes(WORD)).converter_version.startswith("2+pypdfium2.")
    assert _convert("a.docx", make.docx_bytes(WORD)).converter_version.startswith("1+python-docx.")


def test_pdf_pages_are_marked_and_large_lines_become_headings() -> None:
    result = _convert("report.pdf", make.pdf_bytes(WORD, pages=3))
    lines = result.markdown.split("\n")
    assert lines[0] == "# Quarterly Field Report"  # the metadata title
    markers = [ln for ln in lines if ln.startswith("<!-- page ")]
    assert markers == [f"<!-- page {n} of 3 -->" for n in (1, 2, 3)]
    assert "## Section 2 overview" in lines
    # The planted word sits after the last page's marker.
    assert result.markdown.index(WORD) > result.markdown.index("<!-- page 3 of 3 -->")
    assert extract_meta(result.markdown, "report.pdf").title == "Quarterly Field Report"


def test_pdf_line_gaps_become_paragraph_breaks() -> None:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    for paragraph in range(3):
        for line in range(2):
            pdf.cell(0, 6, f"para {paragraph} line {line}", new_x="LMARGIN", new_y="NEXT")
        pdf.ln(8)
    markdown = _convert("paras.pdf", bytes(pdf.output())).markdown
    assert markdown == (
        "para 0 line 0\npara 0 line 1\n\npara 1 line 0\npara 1 line 1\n\n"
        "para 2 line 0\npara 2 line 1\n"
    )


_DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


@pytest.mark.skipif(not _DEJAVU.exists(), reason="needs a Unicode TrueType font (fonts-dejavu)")
def test_pdf_ligatures_are_spelled_out() -> None:
    pdf = FPDF()
    pdf.add_page()
    pdf.add_font("DejaVu", fname=str(_DEJAVU))
    pdf.set_font("DejaVu", size=12)
    pdf.cell(0, 10, "the \ufb01le was \ufb02agged")
    assert "the file was flagged" in _convert("lig.pdf", bytes(pdf.output())).markdown


def test_pdf_without_text_says_it_needs_ocr() -> None:
    pdf = FPDF()
    pdf.add_page()
    pdf.rect(10, 10, 50, 50, style="F")
    result = _convert("scan.pdf", bytes(pdf.output()))
    assert [parse_warning(w)["code"] for w in result.warnings] == ["UNSUPPORTED_FEATURE"]
    assert "OCR" in result.warnings[0]


def test_password_protected_pdf_is_encrypted() -> None:
    assert _code("locked.pdf", make.locked_pdf_bytes()) == "ENCRYPTED"


@pytest.mark.parametrize("keep", [0, 100, 1000, 3000])
def test_truncated_pdf_fails_alone_with_a_code(keep: int) -> None:
    data = make.pdf_bytes(WORD, pages=4)[:keep]
    assert _code("cut.pdf", data) == "CONVERSION_FAILED"


def test_docx_keeps_headings_lists_emphasis_and_tables() -> None:
    markdown = _convert("charter.docx", make.docx_bytes(WORD)).markdown
    assert markdown.startswith("# Project Charter\n")
    assert "\n## Goals\n" in markdown and "\n## Risks\n" in markdown
    assert "- Move the archive\n- Keep every record" in markdown
    assert "1. First step\n2. Second step" in markdown
    assert "**budgets**" in markdown
    assert f"| {WORD} | Bo |" in markdown
    assert "| Risk | Owner |\n| --- | --- |" in markdown


def test_docx_hyperlinks_become_markdown_links() -> None:
    from docx import Document
    from docx.opc.constants import RELATIONSHIP_TYPE
    from docx.oxml.ns import qn
    from docx.oxml.parser import OxmlElement

    doc = Document()
    para = doc.add_paragraph("See ")
    rel_id = para.part.relate_to(
        "https://example.org/spec", RELATIONSHIP_TYPE.HYPERLINK, is_external=True
    )
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), rel_id)
    run = OxmlElement("w:r")
    text = OxmlElement("w:t")
    text.text = "the spec"
    run.append(text)
    link.append(run)
    para._p.append(link)
    buffer = io.BytesIO()
    doc.save(buffer)
    markdown = _convert("links.docx", buffer.getvalue()).markdown
    assert "See [the spec](https://example.org/spec)" in markdown


def test_docx_content_controls_and_footnotes_are_read() -> None:
    from docx import Document
    from docx.opc.constants import CONTENT_TYPE, RELATIONSHIP_TYPE
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part
    from docx.oxml.parser import OxmlElement

    doc = Document()
    doc.add_paragraph("Body text")
    control, content = OxmlElement("w:sdt"), OxmlElement("w:sdtContent")
    inner = doc.add_paragraph("Abstract inside a content control with kiwifruit")._p
    content.append(inner)  # moves the paragraph into the control
    control.append(content)
    doc.element.body.insert(0, control)
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    notes_xml = (
        f'<w:footnotes xmlns:w="{w}">'
        '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:t>---</w:t></w:r></w:p>'
        "</w:footnote>"
        '<w:footnote w:id="1"><w:p><w:r><w:t>A footnote naming pomegranate.</w:t></w:r></w:p>'
        "</w:footnote></w:footnotes>"
    ).encode()
    uri = PackURI("/word/footnotes.xml")
    part = Part(uri, CONTENT_TYPE.WML_FOOTNOTES, notes_xml, doc.part.package)
    doc.part.relate_to(part, RELATIONSHIP_TYPE.FOOTNOTES)
    buffer = io.BytesIO()
    doc.save(buffer)
    markdown = _convert("paper.docx", buffer.getvalue()).markdown
    assert markdown.index("kiwifruit") < markdown.index("Body text")
    assert markdown.endswith("## Notes\n\n1. A footnote naming pomegranate.\n")
    assert "---" not in markdown


def test_xlsx_sheets_become_headed_tables() -> None:
    markdown = _convert("budget.xlsx", make.xlsx_bytes(WORD, rows=3)).markdown
    assert markdown.startswith("# budget\n")  # no document title: the file name
    assert "## Budget\n\n| Item | Cost | Quarter |\n| --- | --- | --- |\n| item 0 | 0 | Q1 |" in (
        markdown
    )
    assert "| item 1 | 10.5 | Q2 |" in markdown
    assert f"## People\n\n| Name | Role |\n| --- | --- |\n| Ana | lead |\n| {WORD} | auditor |" in (
        markdown
    )


def test_long_sheets_repeat_the_header_in_each_slice() -> None:
    markdown = _convert("long.xlsx", make.xlsx_bytes(WORD, rows=1200)).markdown
    assert markdown.count("| Item | Cost | Quarter |") == 3  # 1200 rows in slices of 500


def test_pptx_slides_titles_bullets_tables_and_notes() -> None:
    markdown = _convert("deck.pptx", make.pptx_bytes(WORD, slides=2)).markdown
    assert markdown.startswith("<!-- slide 1 of 3 -->\n\n## Slide 1 agenda\n")
    assert "- Topic 1 opening\n  - Nested detail" in markdown
    assert "### Notes\n\nSpeaker notes for slide 2" in markdown
    assert f"| {WORD} | 42 |" in markdown
    assert extract_meta(markdown, "deck.pptx").title == "Slide 1 agenda"


def test_html_keeps_structure_and_drops_scripts_and_navigation() -> None:
    markdown = _convert("guide.html", make.html_bytes(WORD)).markdown
    assert markdown.startswith("# Field Guide\n")
    assert "An **introduction** to [birds](https://example.org/birds)." in markdown
    assert "- first point\n- second point\n  - inner" in markdown
    assert f"| {WORD} | 3 |" in markdown
    assert "scriptword" not in markdown and "color: red" not in markdown
    assert "Home" not in markdown  # the <nav> bar


def test_html_title_is_used_when_the_page_has_no_h1() -> None:
    page = b"<html><head><title>Trip Notes</title></head><body><p>Day one</p></body></html>"
    assert _convert("trip.htm", page).markdown == "# Trip Notes\n\nDay one\n"


def test_html_charset_from_meta_tag() -> None:
    page = '<meta charset="windows-1252"><p>Café “déjà vu”</p>'.encode("cp1252")
    assert "Café “déjà vu”" in _convert("old.html", page).markdown


def test_html_body_text_cannot_forge_headings_or_frontmatter() -> None:
    page = b"<p># not a heading</p><p>---</p><pre>code</pre>"
    markdown = _convert("x.html", page).markdown
    assert "\\# not a heading" in markdown
    assert not markdown.startswith("---")
    assert "```\ncode\n```" in markdown


def test_deeply_nested_html_converts_in_bounded_depth() -> None:
    result = _convert("deep.html", make.nested_html(100_000))
    assert "deepword" in result.markdown
    assert [parse_warning(w)["code"] for w in result.warnings] == ["LOSSY"]


def test_output_past_the_character_limit_is_cut_with_a_warning() -> None:
    with applied(ConversionLimits(max_chars=2_000)):
        result = _convert("long.pdf", make.pdf_bytes(WORD, pages=10))
    assert len(result.markdown) <= 2_001
    assert [parse_warning(w)["code"] for w in result.warnings] == ["TRUNCATED"]


def test_zip_bomb_in_an_office_file_is_refused_before_parsing() -> None:
    bomb = make.zip_bomb_like(make.docx_bytes(WORD), inflated_mb=64)
    assert len(bomb) < 200_000
    assert _code("bomb.docx", bomb) == "TOO_LARGE"


def test_total_unpacked_size_is_bounded() -> None:
    limits = ConversionLimits(max_unpacked_bytes=10_000)
    assert _code("book.xlsx", make.xlsx_bytes(WORD), limits) == "TOO_LARGE"


@pytest.mark.parametrize("ext", [".docx", ".xlsx", ".pptx"])
def test_broken_office_containers_fail_with_a_code(ext: str) -> None:
    good = make.WRITERS[ext](WORD)
    assert _code(f"cut{ext}", good[: len(good) // 2]) == "CONVERSION_FAILED"
    assert _code(f"random{ext}", make.random_bytes()) == "CONVERSION_FAILED"
    plain_zip = io.BytesIO()
    with zipfile.ZipFile(plain_zip, "w") as archive:
        archive.writestr("hello.txt", "hi")
    assert _code(f"plain{ext}", plain_zip.getvalue()) == "CONVERSION_FAILED"


def test_password_protected_office_file_is_encrypted() -> None:
    # An encrypted OOXML file is an OLE compound file with an EncryptedPackage stream.
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 504 + "EncryptedPackage".encode("utf-16-le")
    assert _code("secret.docx", ole + b"\0" * 1024) == "ENCRYPTED"
    assert _code("old.doc.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 2048) == (
        "CONVERSION_FAILED"
    )


def test_sniffing_recognises_documents_without_their_extension() -> None:
    assert sniff(make.pdf_bytes(WORD)) == ".pdf"
    assert sniff(make.docx_bytes(WORD)) == ".docx"
    assert sniff(make.xlsx_bytes(WORD)) == ".xlsx"
    assert sniff(make.pptx_bytes(WORD)) == ".pptx"
    assert sniff(b"<!DOCTYPE html><html>") == ".html"
    assert sniff(make.random_bytes()) is None


def test_document_extensions_cover_the_issue_formats() -> None:
    assert {".pdf", ".docx", ".xlsx", ".pptx", ".html", ".htm"} <= document_extensions()
    assert document_converter_for("A/B/REPORT.PDF") is not None
    assert document_converter_for("notes.md") is None


def test_headings_in_every_format_feed_the_title_rule() -> None:
    for ext, title in [(".docx", "Project Charter"), (".html", "Field Guide")]:
        markdown = _convert(f"x{ext}", make.WRITERS[ext](WORD)).markdown
        assert extract_meta(markdown, f"x{ext}").title == title
        assert re.search(r"^# ", markdown, re.MULTILINE)
