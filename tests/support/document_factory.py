"""Real office documents written at test time, each carrying a planted word.

The converters are judged on files made by the same libraries people's tools
use (python-docx, openpyxl, python-pptx write what Word, Excel and PowerPoint
read; fpdf2 writes ordinary PDFs), so nothing binary is checked in. Every
writer takes the word to plant and returns the bytes; the word lands in body
text, not only in metadata, so a search for it proves the body was read.

Also here: hostile inputs (a zip bomb inside a valid-looking OOXML container,
truncated PDFs, deeply nested HTML) and legacy-encoded text.
"""

from __future__ import annotations

import io
import random
import re
import zipfile
from collections.abc import Callable

import xlsxwriter  # type: ignore[import-untyped]
from docx import Document
from docx.enum.text import WD_BREAK
from fpdf import FPDF
from fpdf.enums import EncryptionMethod
from openpyxl import Workbook
from pptx import Presentation
from pptx.util import Inches


def pdf_bytes(word: str, *, pages: int = 2, title: str = "Quarterly Field Report") -> bytes:
    """A text PDF of ``pages`` pages; the planted word is on the last page."""
    pdf = FPDF()
    pdf.set_title(title)
    pdf.set_auto_page_break(auto=False)
    for page in range(1, pages + 1):
        pdf.add_page()
        pdf.set_font("Helvetica", "B", 20)
        pdf.cell(0, 12, f"Section {page} overview", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=11)
        for line in range(1, 16):
            text = f"Page {page} line {line}: observations about rivers and soil samples."
            if page == pages and line == 7:
                text = f"The crew recorded {word} near the northern ridge."
            pdf.cell(0, 7, text, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def locked_pdf_bytes() -> bytes:
    """A PDF that opens only with its user password."""
    pdf = FPDF()
    pdf.set_encryption(
        owner_password="owner", user_password="user", encryption_method=EncryptionMethod.RC4
    )
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.cell(0, 10, "secret words")
    return bytes(pdf.output())


def docx_bytes(word: str, *, paragraphs: int = 6) -> bytes:
    """A Word document with a title, headings, lists, a table and a link-like line."""
    doc = Document()
    doc.add_heading("Project Charter", level=1)
    doc.add_paragraph("This charter explains the scope of the migration.")
    doc.add_heading("Goals", level=2)
    doc.add_paragraph("Move the archive", style="List Bullet")
    doc.add_paragraph("Keep every record", style="List Bullet")
    doc.add_paragraph("First step", style="List Number")
    doc.add_paragraph("Second step", style="List Number")
    for index in range(paragraphs):
        para = doc.add_paragraph(f"Paragraph {index} talks about schedules and ")
        para.add_run("budgets").bold = True
        para.add_run(" in detail.")
    doc.add_heading("Risks", level=2)
    table = doc.add_table(rows=3, cols=2)
    for row, (risk, owner) in enumerate([("Risk", "Owner"), ("Delay", "Ana"), (word, "Bo")]):
        table.cell(row, 0).text = risk
        table.cell(row, 1).text = owner
    doc.paragraphs[-1].add_run().add_break(WD_BREAK.LINE)
    buffer = io.BytesIO()
    doc.save(buffer)
    return buffer.getvalue()


def xlsx_bytes(word: str, *, rows: int = 20) -> bytes:
    """A workbook of two sheets; the planted word is a cell of the second one."""
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Budget"
    sheet.append(["Item", "Cost", "Quarter"])
    for index in range(rows):
        sheet.append([f"item {index}", index * 10.5, f"Q{index % 4 + 1}"])
    people = book.create_sheet("People")
    people.append(["Name", "Role"])
    people.append(["Ana", "lead"])
    people.append([word, "auditor"])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


WORKBOOK_ROWS = [
    ("Species", "Count", "Site"),
    *[(f"heron {n}", n * 3, f"pond {n}") for n in range(4)],
]


def whole_grid(sheet_xml: bytes) -> bytes:
    """The sheet as LibreOffice stores whole-column formatting: the dimension declares the
    whole grid and formatted empty rows run down to the last row of the sheet."""
    styled = b"".join(
        b'<row r="%d" s="1" customFormat="1"><c r="A%d" s="1"/><c r="B%d" s="1"/></row>' % (n, n, n)
        for n in (*range(6, 1500), 1048576)
    )
    sheet_xml = re.sub(rb'<dimension ref="[^"]*"/>', b'<dimension ref="A1:XFD1048576"/>', sheet_xml)
    return sheet_xml.replace(b"</sheetData>", styled + b"</sheetData>")


def excel_workbook(
    *, rewrite: set[str] | None = None, rename: dict[str, str] | None = None
) -> bytes:
    """A five-row workbook as Excel's own format writes it (XlsxWriter: shared strings),
    then parts edited as another writer would store them."""
    buffer = io.BytesIO()
    book = xlsxwriter.Workbook(buffer, {"in_memory": True})
    sheet = book.add_worksheet("Survey")
    for number, row in enumerate(WORKBOOK_ROWS):
        sheet.write_row(number, 0, row)
    book.close()
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for item in source.infolist():
            body = source.read(item.filename)
            if item.filename in (rewrite or {}):
                body = whole_grid(body)
            target.writestr((rename or {}).get(item.filename, item.filename), body)
    return out.getvalue()


def pptx_bytes(word: str, *, slides: int = 3) -> bytes:
    """A deck with titled slides, bullet text, notes and a table."""
    deck = Presentation()
    for index in range(1, slides + 1):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        assert slide.shapes.title is not None
        slide.shapes.title.text = f"Slide {index} agenda"
        body = slide.placeholders[1].text_frame  # type: ignore[attr-defined]
        body.text = f"Topic {index} opening"
        extra = body.add_paragraph()
        extra.text = "Nested detail"
        extra.level = 1
        slide.notes_slide.notes_text_frame.text = f"Speaker notes for slide {index}"
    last = deck.slides.add_slide(deck.slide_layouts[5])
    assert last.shapes.title is not None
    last.shapes.title.text = "Numbers"
    shape = last.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1))
    shape.table.cell(0, 0).text = "Metric"
    shape.table.cell(0, 1).text = "Value"
    shape.table.cell(1, 0).text = word
    shape.table.cell(1, 1).text = "42"
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


def html_bytes(word: str, *, sections: int = 3) -> bytes:
    """A web page with navigation chrome, headings, a list, a table and a link."""
    parts = [
        "<!doctype html><html><head><title>Field Guide</title>",
        "<style>body { color: red }</style><script>var hidden = 'scriptword';</script>",
        "</head><body><nav><a href='/'>Home</a></nav><main>",
        "<h1>Field Guide</h1><p>An <strong>introduction</strong> to "
        "<a href='https://example.org/birds'>birds</a>.</p>",
    ]
    for index in range(sections):
        parts.append(f"<h2>Part {index}</h2><p>Notes on habitat number {index}.</p>")
        parts.append("<ul><li>first point</li><li>second point<ul><li>inner</li></ul></li></ul>")
    parts.append(
        "<table><tr><th>Bird</th><th>Count</th></tr>"
        f"<tr><td>{word}</td><td>3</td></tr><tr><td>heron</td><td>5</td></tr></table>"
    )
    parts.append("</main></body></html>")
    return "".join(parts).encode("utf-8")


WRITERS: dict[str, Callable[[str], bytes]] = {
    ".pdf": pdf_bytes,
    ".docx": docx_bytes,
    ".xlsx": xlsx_bytes,
    ".pptx": pptx_bytes,
    ".html": html_bytes,
}


MACRO_ENABLED = {
    ".docm": (
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
        "application/vnd.ms-word.document.macroEnabled.main+xml",
        ".docx",
    ),
    ".xlsm": (
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
        "application/vnd.ms-excel.sheet.macroEnabled.main+xml",
        ".xlsx",
    ),
    ".pptm": (
        "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml",
        "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml",
        ".pptx",
    ),
}


def macro_enabled_bytes(ext: str, word: str) -> bytes:
    """A ``.docm``/``.xlsm``/``.pptm``: the plain file with its main part retyped (no macros)."""
    plain_type, macro_type, plain_ext = MACRO_ENABLED[ext]
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(WRITERS[plain_ext](word))) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for item in source.infolist():
            body = source.read(item.filename)
            if item.filename == "[Content_Types].xml":
                assert plain_type.encode() in body
                body = body.replace(plain_type.encode(), macro_type.encode())
            target.writestr(item, body)
    return out.getvalue()


def zip_bomb_like(template: bytes, *, inflated_mb: int = 400, part: str | None = None) -> bytes:
    """An OOXML container (copied from ``template``) with hundreds of megabytes packed small.

    Without ``part``, a new unreferenced entry of zeros is added (a parser
    may never read it; the size check must still refuse the file). With
    ``part``, that existing XML part is padded with trailing whitespace, so a
    parser that reads the part really inflates it.
    """
    out = io.BytesIO()
    chunk = (b"\0" if part is None else b" ") * (1024 * 1024)
    with (
        zipfile.ZipFile(io.BytesIO(template)) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as target,
    ):
        for item in source.infolist():
            if item.filename != part:
                target.writestr(item, source.read(item.filename))
        with target.open(part or "word/media/padding.bin", "w", force_zip64=True) as handle:
            if part is not None:
                handle.write(source.read(part))
            for _ in range(inflated_mb):
                handle.write(chunk)
    return out.getvalue()


def nested_html(depth: int = 100_000) -> bytes:
    """A page of ``depth`` nested elements (breaks recursive HTML libraries)."""
    return (b"<div>" * depth) + b"deepword" + (b"</div>" * depth)


def random_bytes(size: int = 4096, *, seed: int = 7) -> bytes:
    return random.Random(seed).randbytes(size)
