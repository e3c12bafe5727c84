"""E-mail (``.eml``) and mailboxes (``.mbox``) -> Markdown with the standard library's parser.

A message becomes its subject as a heading, its From/To/Cc/Date as a field
list (so a search for a correspondent's name finds the mail), its text body
(or its HTML body converted when it has no text alternative), and its
attachments: listed with their type and size, and in an ``.eml`` converted
inline under an ``Attachment:`` heading when their type is one we index (a
PDF, a spreadsheet, a note), headings moved below the mail's. A message
attached to a message is written the same way, one level deeper.

A mailbox is one document with a section per message (``## Subject`` after a
``<!-- message N of M -->`` marker), not one document per message: a
document here is a file, so a section keeps every message reachable by a
line anchor into the file, the heading outline and chunk boundaries follow
the messages, and moving or deleting the mailbox stays one change. Its
messages are cut from the bytes one at a time and parsed, written and
dropped in turn, so memory holds one message (and the mirror), whatever
the count. Attachments of a mailbox are listed but not converted: an archive
of thousands of messages would spend its time limit in them.
"""

from __future__ import annotations

import codecs
import contextlib
import email.header
import email.message
import email.policy
import email.utils
import re
from collections.abc import Callable, Iterator, Mapping
from email.errors import HeaderParseError
from email.parser import BytesParser
from typing import ClassVar, Final

from gno_trio.engine.ingest.convert import Converter
from gno_trio.engine.ingest.documents.base import DocumentConverter, file_stem
from gno_trio.engine.ingest.documents.encoding import decode_text
from gno_trio.engine.ingest.documents.limits import Ticker
from gno_trio.engine.ingest.documents.markdown import MarkdownWriter
from gno_trio.engine.ingest.documents.reasons import CONVERSION_FAILED, warning
from gno_trio.errors import GnoError

_MAX_NESTING: Final = 3
"""Messages attached inside messages, deeper than this, are listed only."""
_MAIL_HEADERS: Final = ("from", "to", "subject", "date", "message-id", "received")
_MBOX_ESCAPE: Final = re.compile(rb"^>(>*From )", re.MULTILINE)
# compat32 keeps headers as strings until asked: the default policy builds a
# structured object per header, which cost about 8 ms a message here, 80 s
# for a mailbox of 10,000.
_PARSER: Final = BytesParser(policy=email.policy.compat32)
Message = email.message.Message


def _header(message: Message, name: str) -> str:
    """A header's text, RFC 2047 encoded words decoded (``=?utf-8?q?...?=``)."""
    raw = message.get(name)
    if raw is None:
        return ""
    text = str(raw)
    if "=?" in text:
        with contextlib.suppress(LookupError, UnicodeError, ValueError, HeaderParseError):
            text = str(email.header.make_header(email.header.decode_header(text)))
    return " ".join(text.split())


def _date(message: Message) -> str:
    raw = _header(message, "date")
    try:
        return email.utils.parsedate_to_datetime(raw).isoformat(sep=" ") if raw else ""
    except (TypeError, ValueError, IndexError):
        return raw


def _size(count: int) -> str:
    return f"{count:,} bytes" if count < 10_000 else f"{count // 1024:,} KiB"


def _part_text(part: Message) -> str:
    """A text part's content in its declared charset, else in the charset its bytes show."""
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    charset = part.get_content_charset()
    if charset:
        try:
            return payload.decode(codecs.lookup(charset).name, "replace")
        except LookupError:
            pass
    try:
        return decode_text("part.txt", payload)[0]
    except GnoError:
        return ""


def _is_attachment(part: Message) -> bool:
    return part.get_content_disposition() == "attachment" or (
        part.get_filename() is not None and part.get_content_maintype() != "multipart"
    )


def _body_and_attachments(message: Message) -> tuple[Message | None, list[Message]]:
    """The part to read as the body (plain text first, else HTML) and the attachments."""
    plain: Message | None = None
    html: Message | None = None
    attachments: list[Message] = []
    stack = [message]
    while stack:
        part = stack.pop()
        forwarded = part.get_content_type() == "message/rfc822"
        if part is not message and (forwarded or _is_attachment(part)):
            attachments.append(part)
            continue
        if part.is_multipart():
            inner = part.get_payload()
            if isinstance(inner, list):
                stack.extend(p for p in reversed(inner) if isinstance(p, Message))
        elif part.get_content_type() == "text/plain":
            plain = plain or part
        elif part.get_content_type() == "text/html":
            html = html or part
        elif part is not message:
            attachments.append(part)
    return plain or html, attachments


AttachmentConverters = Callable[[str], Converter | None]
"""The converter of an attachment by its file name (the registry's, for an ``.eml``)."""


class _MessageWriter:
    """Writes messages into one mirror; with ``converter_for``, attachments converted too."""

    def __init__(self, out: MarkdownWriter, converter_for: AttachmentConverters | None) -> None:
        self.out = out
        self.converter_for = converter_for
        self.warnings: list[str] = []

    def message(self, message: Message, level: int, depth: int = 0) -> None:
        out = self.out
        out.heading(level, _header(message, "subject") or "(no subject)")
        out.fields(
            [
                ("From", _header(message, "from")),
                ("To", _header(message, "to")),
                ("Cc", _header(message, "cc")),
                ("Date", _date(message)),
            ]
        )
        body, attachments = _body_and_attachments(message)
        if body is not None:
            self._body(body)
        if attachments:
            self._attachments(attachments, level, depth)

    def _body(self, body: Message) -> None:
        text = _part_text(body)
        if body.get_content_subtype() == "html":
            from gno_trio.engine.ingest.documents.webpage import write_html

            self.warnings += write_html(text, self.out)
            return
        for paragraph in re.split(r"\n[ \t]*\n", text.replace("\r\n", "\n")):
            self.out.paragraph(paragraph)

    def _attachments(self, parts: list[Message], level: int, depth: int) -> None:
        listed: list[tuple[int, bool, str]] = []
        names = [_header_name(part, number) for number, part in enumerate(parts, 1)]
        for name, part in zip(names, parts, strict=True):
            payload = part.get_payload(decode=True)
            size = f", {_size(len(payload))}" if isinstance(payload, bytes) else ""
            listed.append((0, False, f"{name} ({part.get_content_type()}{size})"))
        self.out.heading(level + 1, "Attachments")
        self.out.list_items(listed)
        for name, part in zip(names, parts, strict=True):
            if part.get_content_type() == "message/rfc822":
                inner = part.get_payload()
                if depth < _MAX_NESTING and isinstance(inner, list):
                    for forwarded in (m for m in inner if isinstance(m, Message)):
                        self.out.heading(level + 1, f"Attachment: {name}")
                        self.message(forwarded, min(level + 2, 6), depth + 1)
            elif self.converter_for is not None:
                self._converted(part, name, level)

    def _converted(self, part: Message, name: str, level: int) -> None:
        """An attachment of a type we index, converted into the mail's mirror."""
        converter = self.converter_for(name) if self.converter_for is not None else None
        payload = part.get_payload(decode=True)
        if converter is None or not isinstance(payload, bytes) or not payload:
            return
        try:
            converted = converter.convert(name, payload)
        except GnoError as error:
            self.warnings.append(
                warning("PARTIAL", f"attachment {name} was not converted ({error.code})")
            )
            return
        self.out.heading(level + 1, f"Attachment: {name}")
        if converted.mime == "text/markdown" or converted.converter_id.startswith("document/"):
            self.out.demoted(converted.markdown, level + 1)
        else:  # plain text or code: its lines must not read as Markdown headings
            for paragraph in converted.markdown.split("\n\n"):
                self.out.paragraph(paragraph)


def _header_name(part: Message, number: int) -> str:
    name = part.get_filename()
    if name and "=?" in name:
        name = str(email.header.make_header(email.header.decode_header(name)))
    return " ".join(str(name).split()) if name else f"attachment {number}"


def _parse(data: bytes) -> Message:
    return _PARSER.parsebytes(data)


class EmailConverter(DocumentConverter):
    id = "document/eml"
    mimes: ClassVar[Mapping[str, str]] = {".eml": "message/rfc822"}

    def __init__(self, attachments: AttachmentConverters) -> None:
        self.attachments = attachments

    def render(self, rel_path: str, data: bytes, out: MarkdownWriter) -> list[str]:
        message = _parse(data)
        if not any(name in message for name in _MAIL_HEADERS):
            raise GnoError(
                CONVERSION_FAILED,
                f"{rel_path}: not an e-mail message (no From, To, Subject or Date header)",
            )
        writer = _MessageWriter(out, self.attachments)
        writer.message(message, 1)
        return writer.warnings


def _messages(data: bytes) -> Iterator[bytes]:
    """Each message of an mbox, its ``From `` line taken off and ``>From`` unquoted."""
    start = data.find(b"\n") + 1 if data.startswith(b"From ") else -1
    while start > 0:
        end = data.find(b"\nFrom ", start)
        piece = data[start : end + 1 if end >= 0 else len(data)]
        yield _MBOX_ESCAPE.sub(rb"\1", piece) if b">From " in piece else piece
        if end < 0:
            return
        line_end = data.find(b"\n", end + 1)
        start = line_end + 1 if line_end >= 0 else -1


class MailboxConverter(DocumentConverter):
    id = "document/mbox"
    mimes: ClassVar[Mapping[str, str]] = {".mbox": "application/mbox"}

    def render(self, rel_path: str, data: bytes, out: MarkdownWriter) -> list[str]:
        data = data.lstrip(b"\r\n")
        if not data.startswith(b"From "):
            raise GnoError(
                CONVERSION_FAILED, f"{rel_path}: not an mbox mailbox (it does not start 'From ')"
            )
        total = data.count(b"\nFrom ") + 1
        ticker = Ticker(total)
        out.heading(1, file_stem(rel_path))
        writer = _MessageWriter(out, None)
        for number, raw in enumerate(_messages(data), 1):
            out.comment(f"message {number} of {total}")
            writer.message(_parse(raw), 2)
            ticker.tick(number)
        return writer.warnings
