"""Which document converter reads which file, by extension or by content.

The registry is ordered like the text converters' one: the first converter
claiming an extension wins. :func:`sniff` recognises a PDF, an Office file or
an HTML page whose name does not say so (a download saved without its
extension), so such a file is converted instead of being listed as
unsupported.
"""

from __future__ import annotations

import functools
import io
import zipfile
from collections.abc import Mapping
from typing import Final

from gno_trio.engine.ingest.convert import REGISTRY, Converter, converter_for, extension_of
from gno_trio.engine.ingest.documents.base import DocumentConverter
from gno_trio.engine.ingest.documents.calendar_events import CalendarConverter
from gno_trio.engine.ingest.documents.excel import ExcelConverter
from gno_trio.engine.ingest.documents.json_lines import JsonLinesConverter
from gno_trio.engine.ingest.documents.mail import EmailConverter, MailboxConverter
from gno_trio.engine.ingest.documents.pdf import PdfConverter
from gno_trio.engine.ingest.documents.powerpoint import PowerPointConverter
from gno_trio.engine.ingest.documents.subtitles import SubtitleConverter
from gno_trio.engine.ingest.documents.webpage import HtmlConverter
from gno_trio.engine.ingest.documents.word import WordConverter

PDF: Final = PdfConverter()
WORD: Final = WordConverter()
EXCEL: Final = ExcelConverter()
POWERPOINT: Final = PowerPointConverter()
HTML: Final = HtmlConverter()


def attachment_converter(name: str) -> Converter | None:
    """The converter of a mail attachment named ``name``: a document or text type we index.

    Mail itself is left out: a forwarded message is written as a message.
    """
    found = _BY_EXTENSION.get(extension_of(name))
    if found is not None:
        return None if found.id in (EMAIL.id, MAILBOX.id) else found
    return converter_for(name)


EMAIL: Final = EmailConverter(attachment_converter)
MAILBOX: Final = MailboxConverter()
CALENDAR: Final = CalendarConverter()
SUBTITLES: Final = SubtitleConverter()
JSON_LINES: Final = JsonLinesConverter()

DOCUMENT_CONVERTERS: Final[tuple[DocumentConverter, ...]] = (
    PDF,
    WORD,
    EXCEL,
    POWERPOINT,
    HTML,
    EMAIL,
    MAILBOX,
    CALENDAR,
    SUBTITLES,
    JSON_LINES,
)
"""Every document converter; all of them run in the sandboxed worker processes.

Mail, calendars, subtitles and JSON Lines are text, but their parsers are
large and their input is untrusted, so they run there too, under the same
time and memory bounds."""

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


@functools.cache
def converter_versions() -> Mapping[str, str]:
    """Each converter's id -> the version it stamps on what it converts today.

    A document stamped with another version (a converter's rendering changed,
    or its parsing library was upgraded), or by a converter that is gone, is
    converted again by the next sync even though its file did not change.
    """
    return {c.id: c.version for c in (*REGISTRY, *DOCUMENT_CONVERTERS)}


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
