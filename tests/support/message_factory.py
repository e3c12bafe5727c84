"""Mail, mailboxes, calendars, subtitles and JSON Lines written by their own libraries.

The standard library's ``email`` and ``mailbox`` write what mail clients
read, ``icalendar`` writes what calendar apps import, ``webvtt-py`` writes
WebVTT and SubRip; every writer takes the word to plant, so a search for it
proves the body was read.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import mailbox
import tempfile
from email.generator import BytesGenerator
from email.message import EmailMessage
from pathlib import Path
from zoneinfo import ZoneInfo

import icalendar
import webvtt

from tests.support import document_factory as make


def email_message(
    word: str,
    *,
    subject: str = "Quarterly budget review",
    html_only: bool = False,
    attach: bool = True,
    number: int = 0,
) -> EmailMessage:
    """A mail with a text and an HTML body, and a PDF and a CSV-like note attached."""
    message = EmailMessage()
    message["From"] = "Ana Lima <ana@example.org>"
    message["To"] = "Team <team@example.org>, bo@example.org"
    message["Cc"] = "Cy Doe <cy@example.org>"
    message["Subject"] = subject
    message["Date"] = "Mon, 02 Mar 2026 09:15:00 +0100"
    message["Message-ID"] = f"<m{number}@example.org>"
    html = f"<html><body><h2>Budget</h2><p>We approved the <b>{word}</b> line.</p></body></html>"
    if html_only:
        message.set_content(html, subtype="html")
    else:
        message.set_content(f"Hello team,\n\nWe approved the {word} line.\n\n> quoted reply\n")
        message.add_alternative(html, subtype="html")
    if attach:
        message.add_attachment(
            make.pdf_bytes("pdfattachmentword", pages=1, title="Attached Report"),
            maintype="application",
            subtype="pdf",
            filename="report.pdf",
        )
        message.add_attachment(
            b"# Minutes\n\nThe minutesattachmentword was agreed.\n",
            maintype="text",
            subtype="markdown",
            filename="minutes.md",
        )
    return message


def eml_bytes(word: str) -> bytes:
    return email_message(word).as_bytes()


def mbox_bytes(word: str, *, messages: int = 3, body_lines: int = 3) -> bytes:
    """An mbox as :mod:`mailbox` writes one: each message an ``mboxMessage`` with its
    ``From `` line, serialised with ``>From`` quoting; the planted word is in the last one.

    (``mailbox.mbox.add`` writes the same bytes, at a few milliseconds a message.)
    """
    out = io.BytesIO()
    for number in range(messages):
        planted = word if number == messages - 1 else f"topic{number}"
        # mailbox's own message class and generator (the default email policy's header
        # objects cost about 8 ms a message to build, too slow for a 10,000-message box).
        boxed = mailbox.mboxMessage()
        boxed["From"] = f"Sender {number % 50} <sender{number % 50}@example.org>"
        boxed["To"] = "archive@example.org"
        boxed["Subject"] = f"Message {number} about {planted}"
        boxed["Date"] = "Mon, 02 Mar 2026 09:15:00 +0100"
        boxed.set_payload(
            # A body line starting "From " is quoted by the writer (">From ") and must read back.
            f"From the desk of Ana: notes on {planted}.\n"
            + "".join(f"Line {n} of the weekly summary.\n" for n in range(body_lines))
        )
        BytesGenerator(out, mangle_from_=True).flatten(boxed, unixfrom=True)
        out.write(b"\n")
    return out.getvalue()


def ics_bytes(word: str) -> bytes:
    """A calendar with a recurring, zoned meeting and an all-day event."""
    calendar = icalendar.Calendar()
    calendar.add("prodid", "-//gno-trio tests//EN")
    calendar.add("version", "2.0")
    calendar.add("x-wr-calname", "Team calendar")
    berlin = ZoneInfo("Europe/Berlin")
    standup = icalendar.Event()
    standup.add("uid", "standup@example.org")
    standup.add("summary", "Weekly standup")
    standup.add("dtstart", dt.datetime(2026, 3, 2, 9, 0, tzinfo=berlin))
    standup.add("dtend", dt.datetime(2026, 3, 2, 9, 15, tzinfo=berlin))
    standup.add("rrule", {"freq": "weekly", "byday": ["MO", "WE"]})
    standup.add("location", "Room 4, Harbour Office")
    standup.add("description", f"Round the table.\n\nBring the {word} numbers.")
    attendee = icalendar.vCalAddress("mailto:ana@example.org")
    attendee.params["cn"] = icalendar.vText("Ana Lima")
    standup.add("attendee", attendee)
    standup.add("attendee", "mailto:bo@example.org")
    standup.add("organizer", "mailto:cy@example.org")
    calendar.add_component(standup)
    holiday = icalendar.Event()
    holiday.add("uid", "holiday@example.org")
    holiday.add("summary", "Harbour festival")
    holiday.add("dtstart", dt.date(2026, 6, 21))
    holiday.add("dtend", dt.date(2026, 6, 22))
    calendar.add_component(holiday)
    return calendar.to_ical()


def _captions(word: str) -> webvtt.WebVTT:
    captions = webvtt.WebVTT()
    lines = [
        ("00:00:01.000", "00:00:03.000", "<v Ana Lima>Welcome to the harbour tour.</v>"),
        ("00:00:03.200", "00:00:05.000", "<v Ana Lima>We start at the old crane.</v>"),
        ("00:00:05.100", "00:00:07.000", "<v Bo>Is the crane still working?</v>"),
        ("00:00:12.000", "00:00:15.000", f"<v Ana Lima>Only for the {word} festival.</v>"),
    ]
    for start, end, text in lines:
        captions.captions.append(webvtt.Caption(start, end, text))
    return captions


def vtt_bytes(word: str) -> bytes:
    return _captions(word).content.encode("utf-8")


def srt_bytes(word: str) -> bytes:
    captions = webvtt.WebVTT()
    for start, end, text in [
        ("00:00:01.000", "00:00:03.000", "JOHN: The storm is coming."),
        ("00:00:03.100", "00:00:05.000", "We should close the shutters."),
        ("00:00:09.000", "00:00:11.000", f"MARY: Bring the {word} inside."),
    ]:
        captions.captions.append(webvtt.Caption(start, end, text))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "film.srt"
        with path.open("w", encoding="utf-8") as handle:
            captions.write(handle, format="srt")
        return path.read_bytes()


def jsonl_bytes(word: str) -> bytes:
    """A chat export: single turns, a conversation with ``messages``, a record, a broken line."""
    rows = [
        json.dumps({"role": "user", "content": "How do I prune an apple tree?"}),
        json.dumps({"role": "assistant", "content": f"Cut in late winter; keep the {word}."}),
        json.dumps(
            {
                "id": "conv-2",
                "messages": [
                    {"role": "system", "content": "You are a gardener."},
                    {"role": "user", "content": [{"type": "text", "text": "And pears?"}]},
                ],
            }
        ),
        json.dumps({"species": "heron", "count": 3, "site": {"name": "pond"}}),
        '{"role": "user", "content": "cut off',
    ]
    return ("\n".join(rows) + "\n").encode("utf-8")


WRITERS = {
    ".eml": eml_bytes,
    ".mbox": mbox_bytes,
    ".ics": ics_bytes,
    ".vtt": vtt_bytes,
    ".srt": srt_bytes,
    ".jsonl": jsonl_bytes,
}
