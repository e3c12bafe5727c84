"""PDF -> Markdown with PDFium (``pypdfium2``).

PDFium is the engine of Chrome's PDF viewer: it reads the PDFs people
actually have, is fast (about 1 ms a page here, against about 25 ms for the
pure-Python parsers) and ships inside its wheel. Being C, it runs only in a
sandboxed worker (see :mod:`.runner`).

The mirror:

- the document's metadata title, when it has a real one, as ``# Title``;
- each page's text line by line, preceded by a ``<!-- page N of M -->``
  marker so a reader of ``gno_get`` knows where a passage sits;
- a paragraph break where the gap to the next line is well over the
  page's usual line spacing;
- lines set markedly larger than the body text (and short, and not ending
  like a sentence) as ``##``/``###`` headings, so titles, heading anchors and
  chunk boundaries follow the document's own structure;
- a word hyphenated across a line break joined again, soft-hyphen markers
  inside words dropped, ligatures spelled out.

Pages without any text (scans) are reported in an ``UNSUPPORTED_FEATURE``
warning: their words need OCR, which is out of scope.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any, ClassVar, Final, NamedTuple

from gno_trio.engine.ingest.documents.base import DocumentConverter
from gno_trio.engine.ingest.documents.limits import Ticker
from gno_trio.engine.ingest.documents.markdown import MarkdownWriter, clean_inline
from gno_trio.engine.ingest.documents.reasons import CONVERSION_FAILED, ENCRYPTED, warning
from gno_trio.errors import GnoError

_PASSWORD_ERROR: Final = 4  # FPDF_ERR_PASSWORD
_HEADING_RATIO: Final = 1.2
_HEADING_MAX_CHARS: Final = 120
_PARAGRAPH_GAP: Final = 1.5  # a line gap this many times the usual one ends a paragraph
_JUNK_TITLE: Final = re.compile(
    r"^(?:untitled|microsoft (?:word|powerpoint|excel) - .*|.*\.(?:docx?|pptx?|xlsx?|pdf|tex))$",
    re.IGNORECASE,
)
# Typographic ligatures (ﬁ, ﬂ, ...) spelled out, so "file" matches a PDF's "ﬁle".
_LIGATURES: Final = str.maketrans(
    {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
     "\ufb05": "st", "\ufb06": "st"}
)  # fmt: skip
_SOFT_HYPHEN_BREAK: Final = re.compile(r"(\w)[\x02\u00ad\ufffe-]\n(\w)")
# PDFium reports a soft hyphen the layout did not break at as U+FFFE (a
# noncharacter) or U+00AD; either one inside "dan\ufffegerous" hides the word.
_SOFT_HYPHENS: Final = str.maketrans({"\ufffe": None, "\u00ad": None})


def _open(rel_path: str, data: bytes) -> Any:
    import pypdfium2 as pdfium  # imported in the worker, not by every engine user

    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == _PASSWORD_ERROR:
            raise GnoError(ENCRYPTED, f"{rel_path}: the PDF is password-protected") from None
        raise GnoError(CONVERSION_FAILED, f"{rel_path}: not a readable PDF ({exc})") from None


class _Line(NamedTuple):
    text: str
    size: float  # font size of the first character
    top: float  # top of the first character's box (PDF y grows upwards)


def _lines(textpage: Any) -> list[_Line]:
    """The page's text lines with the size and position of their first character."""
    import ctypes

    import pypdfium2.raw as pdfium_c

    text: str = textpage.get_text_range()
    lines: list[_Line] = []
    offset = 0
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    boxes = (ctypes.byref(left), ctypes.byref(right), ctypes.byref(bottom), ctypes.byref(top))
    for raw_line in text.split("\n"):
        line = raw_line.rstrip("\r")
        if line.strip():
            first = offset + (len(line) - len(line.lstrip()))
            size = float(pdfium_c.FPDFText_GetFontSize(textpage.raw, first))
            found = pdfium_c.FPDFText_GetCharBox(textpage.raw, first, *boxes)
            lines.append(_Line(line, size, top.value if found else 0.0))
        offset += len(raw_line) + 1
    return lines


def _paragraph_breaks(lines: list[_Line]) -> set[int]:
    """Indexes of lines that start a new paragraph: a gap well over the usual line spacing."""
    gaps = [a.top - b.top for a, b in itertools.pairwise(lines)]
    usual = sorted(g for g in gaps if g > 0)
    if not usual:
        return set()
    spacing = usual[len(usual) // 2]
    return {i + 1 for i, gap in enumerate(gaps) if gap > spacing * _PARAGRAPH_GAP or gap < 0}


def _heading_levels(pages: list[list[_Line]]) -> tuple[float, dict[float, int]]:
    """The body font size and a heading level for each larger size in use."""
    weights: Counter[float] = Counter()
    for page in pages:
        for line in page:
            weights[round(line.size, 1)] += len(line.text)
    if not weights:
        return 0.0, {}
    body = weights.most_common(1)[0][0]
    larger = sorted({s for s in weights if s >= body * _HEADING_RATIO}, reverse=True)
    return body, {size: min(2 + rank, 4) for rank, size in enumerate(larger)}


def _is_heading(line: str, size: float, levels: dict[float, int]) -> int:
    text = line.strip()
    if round(size, 1) not in levels or len(text) > _HEADING_MAX_CHARS:
        return 0
    if text.endswith((".", ",", ";", ":")) or not any(ch.isalpha() for ch in text):
        return 0
    return levels[round(size, 1)]


class PdfConverter(DocumentConverter):
    id = "document/pdf"
    render_version = "2"  # 2: soft-hyphen markers dropped inside words
    library = "pypdfium2"
    mimes: ClassVar[Mapping[str, str]] = {".pdf": "application/pdf"}

    def render(self, rel_path: str, data: bytes, out: MarkdownWriter) -> list[str]:
        document = _open(rel_path, data)
        try:
            return self._render_open(document, out)
        finally:
            document.close()

    def _render_open(self, document: Any, out: MarkdownWriter) -> list[str]:
        total = len(document)
        ticker = Ticker(total)
        title = clean_inline(str(document.get_metadata_dict().get("Title") or ""))
        pages: list[list[_Line]] = []
        for index in range(total):
            page = document[index]
            textpage = page.get_textpage()
            try:
                pages.append(_lines(textpage))
            finally:
                textpage.close()
                page.close()
            ticker.tick(index + 1)
        _, levels = _heading_levels(pages)
        if title and not _JUNK_TITLE.match(title):
            out.heading(1, title)
        empty = 0
        for number, lines in enumerate(pages, 1):
            if total > 1:
                out.comment(f"page {number} of {total}")
            if not lines:
                empty += 1
                continue
            self._emit_page(lines, levels, out)
        warnings = []
        if empty:
            scope = "the document" if empty == total else f"{empty} of {total} pages"
            warnings.append(
                warning(
                    "UNSUPPORTED_FEATURE", f"{scope} has no text layer (scanned pages need OCR)"
                )
            )
        return warnings

    @staticmethod
    def _emit_page(lines: list[_Line], levels: dict[float, int], out: MarkdownWriter) -> None:
        body: list[str] = []
        breaks = _paragraph_breaks(lines)

        def flush() -> None:
            if body:
                joined = _SOFT_HYPHEN_BREAK.sub(r"\1\2", "\n".join(body))
                out.paragraph(joined.translate(_SOFT_HYPHENS))
                body.clear()

        for index, line in enumerate(lines):
            level = _is_heading(line.text, line.size, levels)
            if level:
                flush()
                out.heading(level, line.text.translate(_LIGATURES).translate(_SOFT_HYPHENS))
                continue
            if index in breaks:
                flush()
            body.append(line.text.replace("\x02", "-").translate(_LIGATURES))
        flush()
