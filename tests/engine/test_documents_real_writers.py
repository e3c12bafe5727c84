"""Files as real writers leave them: declared sizes that lie, part names in another case,
soft hyphens in PDFs, reST documents titled by their adorned title."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from fpdf import FPDF

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, SearchRequest
from gno_trio.engine.ingest.documents.limits import ConversionLimits
from gno_trio.engine.ingest.documents.registry import document_converter_for
from gno_trio.engine.ingest.documents.runner import ConversionRunner
from tests.support import document_factory as make


def test_a_workbook_declaring_the_whole_grid_converts_its_real_rows_in_time() -> None:
    # LibreOffice, Gnumeric and whole-column formats declare A1:XFD1048576.
    data = make.excel_workbook(rewrite={"xl/worksheets/sheet1.xml"})
    assert b"XFD1048576" in zipfile.ZipFile(io.BytesIO(data)).read("xl/worksheets/sheet1.xml")
    with ConversionRunner(ConversionLimits(timeout_s=20.0), workers=1) as runner:
        converted = runner.convert("survey.xlsx", data)
    table = [line for line in converted.markdown.splitlines() if line.startswith("|")]
    assert table[0] == "| Species | Count | Site |"
    assert len(table) == 2 + 4  # header, rule, four data rows: no padding rows
    assert "| heron 3 | 9 | pond 3 |" in table
    assert max(len(line) for line in table) < 40  # no 16,384 padded columns


def test_a_shared_strings_part_stored_with_a_capital_s_is_read() -> None:
    data = make.excel_workbook(rename={"xl/sharedStrings.xml": "xl/SharedStrings.xml"})
    assert "xl/SharedStrings.xml" in zipfile.ZipFile(io.BytesIO(data)).namelist()
    converter = document_converter_for("survey.xlsx")
    assert converter is not None
    markdown = converter.convert("survey.xlsx", data).markdown
    assert "| heron 2 | 6 | pond 2 |" in markdown


def _soft_hyphen_pdf() -> bytes:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.multi_cell(
        60,
        8,
        "Extraordinary com\u00adpre\u00adhen\u00adsive docu\u00admen\u00adta\u00adtion "
        "about dan\u00adger\u00adous ma\u00adte\u00adri\u00adals and their stor\u00adage.",
    )
    return bytes(pdf.output())


def test_pdf_words_with_soft_hyphens_are_whole_and_found(dirs: Dirs, tmp_path: Path) -> None:
    data = _soft_hyphen_pdf()
    import pypdfium2 as pdfium

    raw = pdfium.PdfDocument(data)[0].get_textpage().get_text_range()
    assert "\ufffe" in raw  # PDFium marks the soft hyphens it did not break at
    converter = document_converter_for("guide.pdf")
    assert converter is not None
    markdown = converter.convert("guide.pdf", data).markdown
    assert "\ufffe" not in markdown and "\u00ad" not in markdown
    for word in ("comprehensive", "documentation", "dangerous", "materials"):
        assert word in markdown
    root = tmp_path / "papers"
    root.mkdir()
    (root / "guide.pdf").write_bytes(data)
    dirs.config.mkdir(parents=True, exist_ok=True)
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(root), name="papers")
        engine.sync()
        hits = engine.search.lexical(SearchRequest(query="dangerous"))["results"]
        assert [h["source"]["relPath"] for h in hits] == ["guide.pdf"]


SPHINX_PAGE = """\
:orphan:

.. _topics-http-urls:

==============
URL dispatcher
==============

A clean, elegant URL scheme is an important detail in a web application.

Overview
========

To design URLs for an app, you create a module informally called a URLconf.
"""

UNDERLINED_ONLY = """\
.. highlight:: python

Writing ``async`` views
-----------------------

Views may be coroutines.
"""


def test_rest_documents_are_titled_by_their_adorned_title(dirs: Dirs, tmp_path: Path) -> None:
    root = tmp_path / "docs"
    (root / "topics").mkdir(parents=True)
    (root / "topics" / "http-urls.txt").write_text(SPHINX_PAGE, "utf-8")
    (root / "async-views.rst").write_text(UNDERLINED_ONLY, "utf-8")
    (root / "plain.txt").write_text("just some words about herons\n", "utf-8")
    dirs.config.mkdir(parents=True, exist_ok=True)
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(root), name="docs")
        engine.sync()
        titles = {
            h["source"]["relPath"]: h["title"]
            for query in ("URLconf", "coroutines", "herons")
            for h in engine.search.lexical(SearchRequest(query=query))["results"]
        }
    assert titles == {
        "topics/http-urls.txt": "URL dispatcher",
        "async-views.rst": "Writing async views",
        "plain.txt": "plain",
    }
