"""Which document converter reads which file, by extension or by content.

The registry is ordered like the text converters' one: the first converter
claiming an extension wins. :func:`sniff` recognises a PDF, an Office file or
an HTML page whose name does not say so (a download saved without its
extension), so such a file is converted instead of being listed as
unsupported.
"""

from __future__ import annotations

import io
import zipfile
from typing import Final

from gno_trio.engine.ingest.convert import extension_of
from gno_trio.engine.ingest.documents.base import DocumentConverter
from gno_trio.engine.ingest.documents.excel import ExcelConverter
from gno_trio.engine.ingest.documents.pdf import PdfConverter
from gno_trio.engine.ingest.documents.powerpoint import PowerPointConverter
from gno_trio.engine.ingest.documents.webpage import HtmlConverter
from gno_trio.engine.ingest.documents.word import WordConverter

PDF: Final = PdfConverter()
WORD: Final = WordConverter()
EXCEL: Final = ExcelConverter()
POWERPOINT: Final = PowerPointConverter()
HTML: Final = HtmlConverter()

DOCUMENT_CONVERTERS: Final[tuple[DocumentConverter, ...]] = (PDF, WORD, EXCEL, POWERPOINT, HTML)
"""Every document converter; all of them run in the sandboxed worker processes."""

_BY_ID: Final = {c.id: c for c in DOCUMENT_CONVERTERS}
_BY_EXTENSION: Final = {ext: c for c in reversed(DOCUMENT_CONVERTERS) for ext in c.extensions}
_OOXML_MAIN_PART: Final = (("word/", ".docx"), ("xl/", ".xlsx"), ("ppt/", ".pptx"))


def document_extensions() -> frozenset[str]:
    return frozenset(_BY_EXTENSION)


def document_converter_for(rel_path: str) -> DocumentConverter | None:
    """The document converter for this path's extension, or ``None``."""
    return _BY_EXTENSION.get(extension_of(rel_path))


def converter_by_id(converter_id: str) -> DocumentConverter | None:
    return _BY_ID.get(converter_id)


def sniff(head: bytes) -> str | None:
    """The extension a file's first bytes reveal (``.pdf``, ``.docx``...), or ``None``.

    ``head`` should be the whole file for zip containers (their directory is
    at the end); for the other formats the first kilobyte is enough.
    """
    if b"%PDF-" in head[:1024]:  # the header may follow up to 1 KiB of junk
        return ".pdf"
    if head.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(io.BytesIO(head)) as archive:
                names = archive.namelist()
        except (zipfile.BadZipFile, ValueError, EOFError):
            return None
        if "[Content_Types].xml" in names:
            for prefix, ext in _OOXML_MAIN_PART:
                if any(name.startswith(prefix) for name in names):
                    return ext
        return None
    start = head[:1024].lstrip().lower()
    if start.startswith((b"<!doctype html", b"<html")):
        return ".html"
    return None
