"""Parse the ``since`` / ``until`` bounds of a search into UTC instants.

Agents and people both write dates loosely: ``2026-01-05``, ``2026-01-05T09:30Z``,
``yesterday``, ``last month``, ``7d``, ``3 days ago``, ``last 24 hours``. This
module turns each of those into one aware UTC ``datetime`` so the search layer
compares instants only. Calendar words and bare dates name a *period*: the
lower bound of a range takes its first instant and the upper bound
(``end_of_range=True``) its last, so ``since=2026-01-05, until=2026-01-05``
covers that whole day. Calendar periods are UTC days, with weeks starting on
Monday. Anything unrecognised is refused with a message that quotes the
value, instead of being silently ignored and widening the search.
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, date, datetime, time, timedelta

from gno_trio.errors import GnoError

__all__ = ["parse_time_bound"]

_RECENT_WINDOW = timedelta(days=30)

_EXPECTED = (
    "expected an ISO-8601 date or date-time (2026-01-05, 2026-01-05T09:30:00Z) "
    "or a relative token (now, today, yesterday, recent, this/last week, "
    "this/last month, this/last year, 7d, 24h, 2w, 3mo, 1y, 3 days ago, last 7 days)"
)

# Unit spellings accepted after a count, mapped to one canonical unit.
_UNITS: dict[str, str] = {
    **dict.fromkeys(("min", "mins", "minute", "minutes"), "minutes"),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), "hours"),
    **dict.fromkeys(("d", "day", "days"), "days"),
    **dict.fromkeys(("w", "wk", "wks", "week", "weeks"), "weeks"),
    **dict.fromkeys(("mo", "mos", "mon", "month", "months"), "months"),
    **dict.fromkeys(("y", "yr", "yrs", "year", "years"), "years"),
}

# "7d", "7 days", "3 days ago", "a week ago": a point that far before now.
_AGO = re.compile(r"(?P<count>\d+\s*|an?\s+)(?P<unit>[a-z]+)(?:\s+ago)?", re.ASCII)
# "last 7 days", "past 24 hours": a window that ends now.
_WINDOW = re.compile(r"(?:last|past)\s+(?P<count>\d+\s*)(?P<unit>[a-z]+)", re.ASCII)
# Shapes that name a whole calendar period rather than an instant.
_YEAR = re.compile(r"\d{4}", re.ASCII)
_YEAR_MONTH = re.compile(r"(?P<year>\d{4})-(?P<month>\d{2})", re.ASCII)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
_LOOKS_ISO = re.compile(r"\d{4}[-\d]", re.ASCII)


def _as_utc(moment: datetime) -> datetime:
    """Read a naive datetime as UTC; convert an aware one to UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _invalid(value: str, reason: str) -> GnoError:
    shown = value if len(value) <= 80 else value[:77] + "..."
    return GnoError(
        "INVALID_INPUT",
        f'Invalid time bound "{shown}": {reason}',
        details={"value": value},
    )


def _start_of_day(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def _end_of_day(day: date) -> datetime:
    return datetime.combine(day, time.max, tzinfo=UTC)


def _month_first_day(year: int, month: int) -> date:
    return date(year, month, 1)


def _month_last_day(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])


def _previous_month(day: date) -> tuple[int, int]:
    return (day.year - 1, 12) if day.month == 1 else (day.year, day.month - 1)


def _shift_months(moment: datetime, months: int) -> datetime:
    """Move back ``months`` calendar months, clamping to the month's last day."""
    index = moment.year * 12 + (moment.month - 1) - months
    year, month_zero = divmod(index, 12)
    last_day = calendar.monthrange(year, month_zero + 1)[1]
    return moment.replace(year=year, month=month_zero + 1, day=min(moment.day, last_day))


def _period(today: date, token: str) -> tuple[date, date] | None:
    """First and last day of a named calendar period, or None if unknown."""
    if token == "today":
        return today, today
    if token == "yesterday":
        yesterday = today - timedelta(days=1)
        return yesterday, yesterday
    if token in ("this week", "last week"):
        monday = today - timedelta(days=today.weekday())
        if token == "last week":
            monday -= timedelta(weeks=1)
        return monday, monday + timedelta(days=6)
    if token in ("this month", "last month"):
        year, month = (today.year, today.month) if token == "this month" else _previous_month(today)
        return _month_first_day(year, month), _month_last_day(year, month)
    if token in ("this year", "last year"):
        year = today.year if token == "this year" else today.year - 1
        return date(year, 1, 1), date(year, 12, 31)
    return None


def _go_back(now: datetime, count: int, unit: str) -> datetime:
    if unit == "months":
        return _shift_months(now, count)
    if unit == "years":
        return _shift_months(now, count * 12)
    return now - timedelta(**{unit: count})


def _relative_amount(value: str, count_text: str, unit_text: str) -> tuple[int, str]:
    if unit_text == "m":
        raise _invalid(value, 'ambiguous unit "m": write "min" for minutes or "mo" for months')
    unit = _UNITS.get(unit_text) or _UNITS.get(unit_text.rstrip("s"))
    if unit is None:
        known = "min, h, d, w, mo, y (or minutes, hours, days, weeks, months, years)"
        raise _invalid(value, f'unknown time unit "{unit_text}"; use one of {known}')
    count_text = count_text.strip()
    count = 1 if count_text in ("a", "an") else int(count_text)
    return count, unit


def _relative(value: str, token: str, now: datetime, end_of_range: bool) -> datetime | None:
    if token == "now":
        return now
    if token == "recent":
        return now if end_of_range else now - _RECENT_WINDOW
    period = _period(now.date(), token)
    if period is not None:
        first, last = period
        return _end_of_day(last) if end_of_range else _start_of_day(first)
    if window := _WINDOW.fullmatch(token):
        count, unit = _relative_amount(value, window["count"], window["unit"])
        return now if end_of_range else _go_back(now, count, unit)
    if ago := _AGO.fullmatch(token):
        count, unit = _relative_amount(value, ago["count"], ago["unit"])
        return _go_back(now, count, unit)
    return None


def _absolute(value: str, text: str, end_of_range: bool) -> datetime | None:
    """An ISO-8601 year, month, date or date-time; None if it is not ISO-shaped."""
    if _YEAR.fullmatch(text):
        year = int(text)
        return _end_of_day(date(year, 12, 31)) if end_of_range else _start_of_day(date(year, 1, 1))
    if year_month := _YEAR_MONTH.fullmatch(text):
        year, month = int(year_month["year"]), int(year_month["month"])
        if not 1 <= month <= 12:
            raise _invalid(value, f"month {month:02d} does not exist")
        if end_of_range:
            return _end_of_day(_month_last_day(year, month))
        return _start_of_day(_month_first_day(year, month))
    if not _LOOKS_ISO.match(text):
        return None
    try:
        day = date.fromisoformat(text)
    except ValueError:
        pass
    else:
        return _end_of_day(day) if end_of_range else _start_of_day(day)
    try:
        moment = datetime.fromisoformat(text.upper())
    except ValueError:
        if _DATE.fullmatch(text):
            reason = "no such calendar date"
        elif _DATE.match(text):
            reason = "not a valid ISO-8601 date-time (check the date and the time of day)"
        else:
            reason = "not a valid ISO-8601 date or date-time"
        raise _invalid(value, reason) from None
    return _as_utc(moment)


def parse_time_bound(value: str, *, now: datetime, end_of_range: bool = False) -> datetime:
    """Resolve a ``since``/``until`` value to an aware UTC instant.

    ``now`` is passed in (naive means UTC) so results are reproducible.
    ``end_of_range=True`` is for upper bounds: a date, month, year or calendar
    word then resolves to the last instant of that period, and a trailing
    window such as ``last 7 days`` resolves to ``now``.

    Raises ``GnoError("INVALID_INPUT", ...)`` quoting the rejected value.
    """
    token = " ".join(value.split()).lower()
    if not token:
        raise _invalid(value, "the value is empty; " + _EXPECTED)
    try:
        result = _relative(value, token, _as_utc(now), end_of_range)
        if result is None:
            result = _absolute(value, value.strip(), end_of_range)
    except (OverflowError, ValueError):
        raise _invalid(value, "the date is out of the supported range") from None
    if result is None:
        raise _invalid(value, _EXPECTED)
    return result
