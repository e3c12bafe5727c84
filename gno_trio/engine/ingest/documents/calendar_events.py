"""iCalendar (``.ics``) -> Markdown with the ``icalendar`` package.

The calendar's name (``X-WR-CALNAME``, else the file name) is the ``#``
heading; each event, task or journal entry is a ``##`` heading of its
summary after an ``<!-- event N of M -->`` marker, then its start and end
(with their time zone: "2026-03-02 09:00 Europe/Berlin", an all-day date as
a date), location, recurrence, organizer, attendees and status as a field
list, and its description as text. A recurring event's rule is stated in
words ("weekly on MO, WE until 2026-06-01") and never expanded: a rule
without an end would have no last occurrence to stop at.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, ClassVar, Final

from gno_trio.engine.ingest.documents.base import TextDocumentConverter, file_stem
from gno_trio.engine.ingest.documents.limits import Ticker
from gno_trio.engine.ingest.documents.markdown import MarkdownWriter
from gno_trio.engine.ingest.documents.reasons import CONVERSION_FAILED
from gno_trio.errors import GnoError

_ENTRIES: Final = ("VEVENT", "VTODO", "VJOURNAL")
_FREQUENCY: Final = {
    "SECONDLY": "every second",
    "MINUTELY": "every minute",
    "HOURLY": "hourly",
    "DAILY": "daily",
    "WEEKLY": "weekly",
    "MONTHLY": "monthly",
    "YEARLY": "yearly",
}
_UNITS: Final = {
    "SECONDLY": "seconds",
    "MINUTELY": "minutes",
    "HOURLY": "hours",
    "DAILY": "days",
    "WEEKLY": "weeks",
    "MONTHLY": "months",
    "YEARLY": "years",
}


def when(value: object) -> str:
    """A date or time as a reader wants it: ISO date, minutes, and the zone's name."""
    if isinstance(value, dt.datetime):
        text = value.strftime("%Y-%m-%d %H:%M")
        if value.tzinfo is None:
            return text + " (floating time)"
        zone = getattr(value.tzinfo, "key", None) or value.tzname() or ""
        return f"{text} {zone}".strip()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    return str(value or "")


def _decoded(entry: Any, name: str) -> object:
    try:
        return entry.decoded(name) if name in entry else None
    except (ValueError, KeyError, TypeError):
        return entry.get(name)


def recurrence(rule: Any) -> str:
    """An RRULE in words, with the rule itself: ``weekly on MO until 2026-06-01 (FREQ=...)``."""
    parts = dict(rule)
    frequency = str((parts.get("FREQ") or [""])[0]).upper()
    interval = int((parts.get("INTERVAL") or [1])[0])
    words = _FREQUENCY.get(frequency, frequency.lower() or "repeats")
    if interval > 1:
        words = f"every {interval} {_UNITS.get(frequency, 'periods')}"
    if parts.get("BYDAY"):
        words += " on " + ", ".join(str(day) for day in parts["BYDAY"])
    if parts.get("BYMONTHDAY"):
        words += " on day " + ", ".join(str(day) for day in parts["BYMONTHDAY"])
    if parts.get("COUNT"):
        words += f", {parts['COUNT'][0]} times"
    if parts.get("UNTIL"):
        words += f" until {when(parts['UNTIL'][0])}"
    return f"{words} ({rule.to_ical().decode('ascii', 'replace')})"


def _people(value: object) -> str:
    people = value if isinstance(value, list) else [value] if value else []
    names = []
    for person in people:
        address = str(person).removeprefix("mailto:").removeprefix("MAILTO:")
        common = getattr(person, "params", {}).get("CN")
        names.append(f"{common} <{address}>" if common else address)
    return ", ".join(names)


class CalendarConverter(TextDocumentConverter):
    id = "document/ics"
    library = "icalendar"
    mimes: ClassVar[Mapping[str, str]] = {".ics": "text/calendar", ".ical": "text/calendar"}

    def render_text(self, rel_path: str, text: str, out: MarkdownWriter) -> list[str]:
        from icalendar import Calendar

        if "BEGIN:VCALENDAR" not in text[:4096].upper():
            raise GnoError(CONVERSION_FAILED, f"{rel_path}: not an iCalendar file (no VCALENDAR)")
        calendars = Calendar.from_ical(text, multiple=True)
        entries = [e for c in calendars for e in c.walk() if e.name in _ENTRIES]
        names = [str(c.get("X-WR-CALNAME") or "") for c in calendars]
        out.heading(1, next((n for n in names if n.strip()), "") or file_stem(rel_path))
        ticker = Ticker(len(entries))
        for number, entry in enumerate(entries, 1):
            out.comment(f"event {number} of {len(entries)}")
            self._entry(entry, out)
            ticker.tick(number)
        return []

    @staticmethod
    def _entry(entry: Any, out: MarkdownWriter) -> None:
        out.heading(2, str(entry.get("SUMMARY") or "") or "(untitled event)")
        end = _decoded(entry, "DTEND") or _decoded(entry, "DUE")
        duration = _decoded(entry, "DURATION")
        rules = entry.get("RRULE")
        rules = rules if isinstance(rules, list) else [rules] if rules is not None else []
        out.fields(
            [
                ("Start", when(_decoded(entry, "DTSTART"))),
                ("End", when(end) if end is not None else when(duration)),
                ("Location", str(entry.get("LOCATION") or "")),
                ("Repeats", "; ".join(recurrence(rule) for rule in rules)),
                ("Organizer", _people(entry.get("ORGANIZER"))),
                ("Attendees", _people(entry.get("ATTENDEE"))),
                ("Status", str(entry.get("STATUS") or "").lower()),
            ]
        )
        description = str(entry.get("DESCRIPTION") or "")
        for paragraph in description.replace("\r\n", "\n").split("\n\n"):
            out.paragraph(paragraph)
