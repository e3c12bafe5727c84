"""since/until bounds: ISO dates and relative tokens resolve to UTC instants."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gno_trio.engine.search.timefilter import parse_time_bound
from gno_trio.errors import GnoError

# A Wednesday afternoon.
NOW = datetime(2026, 3, 18, 15, 30, 0, tzinfo=UTC)
END_OF_DAY = (23, 59, 59, 999999)


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, micro: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, micro, tzinfo=UTC)


# value, lower bound (since), upper bound (until)
BOUNDS = [
    # ISO dates name a whole day.
    ("2026-01-05", utc(2026, 1, 5), utc(2026, 1, 5, *END_OF_DAY)),
    ("20260105", utc(2026, 1, 5), utc(2026, 1, 5, *END_OF_DAY)),
    ("2024-02", utc(2024, 2, 1), utc(2024, 2, 29, *END_OF_DAY)),
    ("2025", utc(2025, 1, 1), utc(2025, 12, 31, *END_OF_DAY)),
    # Date-times are instants, whichever end they bound.
    ("2026-01-05T10:00:00Z", utc(2026, 1, 5, 10), utc(2026, 1, 5, 10)),
    ("2026-01-05t10:00:00z", utc(2026, 1, 5, 10), utc(2026, 1, 5, 10)),
    ("2026-01-05T10:00:00+02:00", utc(2026, 1, 5, 8), utc(2026, 1, 5, 8)),
    ("2026-01-05T23:30:00-05:00", utc(2026, 1, 6, 4, 30), utc(2026, 1, 6, 4, 30)),
    ("2026-01-05T10:00", utc(2026, 1, 5, 10), utc(2026, 1, 5, 10)),
    (
        "2026-01-05 10:00:00.250",
        utc(2026, 1, 5, 10, 0, 0, 250000),
        utc(2026, 1, 5, 10, 0, 0, 250000),
    ),
    # Calendar words name a UTC period; weeks start on Monday.
    ("today", utc(2026, 3, 18), utc(2026, 3, 18, *END_OF_DAY)),
    ("yesterday", utc(2026, 3, 17), utc(2026, 3, 17, *END_OF_DAY)),
    ("this week", utc(2026, 3, 16), utc(2026, 3, 22, *END_OF_DAY)),
    ("last week", utc(2026, 3, 9), utc(2026, 3, 15, *END_OF_DAY)),
    ("this month", utc(2026, 3, 1), utc(2026, 3, 31, *END_OF_DAY)),
    ("last month", utc(2026, 2, 1), utc(2026, 2, 28, *END_OF_DAY)),
    ("this year", utc(2026, 1, 1), utc(2026, 12, 31, *END_OF_DAY)),
    ("last year", utc(2025, 1, 1), utc(2025, 12, 31, *END_OF_DAY)),
    ("  Last   WEEK ", utc(2026, 3, 9), utc(2026, 3, 15, *END_OF_DAY)),
    # "recent" is the last 30 days; "now" is now.
    ("recent", NOW - timedelta(days=30), NOW),
    ("now", NOW, NOW),
    # Counted amounts are a point that long ago, at either end.
    ("7d", utc(2026, 3, 11, 15, 30), utc(2026, 3, 11, 15, 30)),
    ("2w", utc(2026, 3, 4, 15, 30), utc(2026, 3, 4, 15, 30)),
    ("24h", utc(2026, 3, 17, 15, 30), utc(2026, 3, 17, 15, 30)),
    ("90min", utc(2026, 3, 18, 14), utc(2026, 3, 18, 14)),
    ("3mo", utc(2025, 12, 18, 15, 30), utc(2025, 12, 18, 15, 30)),
    ("1y", utc(2025, 3, 18, 15, 30), utc(2025, 3, 18, 15, 30)),
    ("3 days ago", utc(2026, 3, 15, 15, 30), utc(2026, 3, 15, 15, 30)),
    ("1 day ago", utc(2026, 3, 17, 15, 30), utc(2026, 3, 17, 15, 30)),
    ("2 weeks ago", utc(2026, 3, 4, 15, 30), utc(2026, 3, 4, 15, 30)),
    ("a week ago", utc(2026, 3, 11, 15, 30), utc(2026, 3, 11, 15, 30)),
    ("an hour ago", utc(2026, 3, 18, 14, 30), utc(2026, 3, 18, 14, 30)),
    ("6 months", utc(2025, 9, 18, 15, 30), utc(2025, 9, 18, 15, 30)),
    # Trailing windows start that long ago and end now.
    ("last 7 days", utc(2026, 3, 11, 15, 30), NOW),
    ("past 24 hours", utc(2026, 3, 17, 15, 30), NOW),
    ("last 2 years", utc(2024, 3, 18, 15, 30), NOW),
]


@pytest.mark.parametrize(("value", "since", "until"), BOUNDS)
def test_bounds(value: str, since: datetime, until: datetime) -> None:
    assert parse_time_bound(value, now=NOW) == since
    assert parse_time_bound(value, now=NOW, end_of_range=True) == until


@pytest.mark.parametrize(
    ("now", "value", "expected"),
    [
        # Month arithmetic clamps to the last day of a shorter month.
        (utc(2026, 3, 31, 12), "1mo", utc(2026, 2, 28, 12)),
        (utc(2024, 3, 31, 12), "1 month ago", utc(2024, 2, 29, 12)),
        (utc(2024, 2, 29, 12), "1y", utc(2023, 2, 28, 12)),
        (utc(2026, 1, 15), "13 months ago", utc(2024, 12, 15)),
        # January's "last month" is the previous year's December.
        (utc(2026, 1, 10), "last month", utc(2025, 12, 1)),
        # On a Sunday "this week" started six days earlier.
        (utc(2026, 3, 22, 23), "this week", utc(2026, 3, 16)),
        # On a Monday "last week" is the whole previous Monday-to-Sunday.
        (utc(2026, 3, 16, 0, 1), "last week", utc(2026, 3, 9)),
    ],
)
def test_calendar_edges(now: datetime, value: str, expected: datetime) -> None:
    assert parse_time_bound(value, now=now) == expected


def test_last_month_upper_bound_at_year_start() -> None:
    until = parse_time_bound("last month", now=utc(2026, 1, 10), end_of_range=True)
    assert until == utc(2025, 12, 31, *END_OF_DAY)


def test_now_is_read_in_utc() -> None:
    # 01:00 on the 18th in UTC+5 is still the 17th in UTC.
    local_now = datetime(2026, 3, 18, 1, 0, tzinfo=timezone(timedelta(hours=5)))
    assert parse_time_bound("today", now=local_now) == utc(2026, 3, 17)
    naive_now = datetime(2026, 3, 18, 1, 0)
    assert parse_time_bound("today", now=naive_now) == utc(2026, 3, 18)


def test_naive_datetime_value_is_utc() -> None:
    result = parse_time_bound("2026-01-05T10:00:00", now=NOW)
    assert result.utcoffset() == timedelta(0)
    assert result == utc(2026, 1, 5, 10)


ERRORS = [
    ("", "the value is empty"),
    ("   ", "the value is empty"),
    ("tomorrow", "expected an ISO-8601 date"),
    ("any", "expected an ISO-8601 date"),
    ("last fortnight", "expected an ISO-8601 date"),
    ("-7d", "expected an ISO-8601 date"),
    ("7", "expected an ISO-8601 date"),
    ("6m", 'ambiguous unit "m"'),
    ("7s", 'unknown time unit "s"'),
    ("3 dayz ago", 'unknown time unit "dayz"'),
    ("last 3 fortnights", 'unknown time unit "fortnights"'),
    ("2026-02-30", "no such calendar date"),
    ("2026-13", "month 13 does not exist"),
    ("2026-01-05T25:00", "not a valid ISO-8601 date-time"),
    ("2026-1-5", "not a valid ISO-8601 date"),
    ("0000", "out of the supported range"),
    ("99999999999y", "out of the supported range"),
    ("9" * 5000 + "d", "out of the supported range"),
    ("٢٠٢٦-٠١-٠٥", "expected an ISO-8601 date"),
]


@pytest.mark.parametrize(("value", "reason"), ERRORS)
def test_rejected_values_are_named(value: str, reason: str) -> None:
    with pytest.raises(GnoError) as caught:
        parse_time_bound(value, now=NOW)
    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.message.startswith(f'Invalid time bound "{value[:20]}')
    assert reason in caught.value.message
    assert caught.value.details == {"value": value}


def test_long_values_are_shortened_in_the_message() -> None:
    with pytest.raises(GnoError) as caught:
        parse_time_bound("x" * 500, now=NOW)
    assert len(caught.value.message) < 400


@given(value=st.text(max_size=40))
def test_any_text_gives_a_utc_instant_or_invalid_input(value: str) -> None:
    for end_of_range in (False, True):
        try:
            result = parse_time_bound(value, now=NOW, end_of_range=end_of_range)
        except GnoError as error:
            assert error.code == "INVALID_INPUT"
            continue
        assert result.tzinfo is UTC


RELATIVE_TOKENS = st.one_of(
    st.sampled_from(
        ["today", "yesterday", "recent", "now"]
        + [f"{which} {unit}" for which in ("this", "last") for unit in ("week", "month", "year")]
    ),
    st.builds(
        "{}{}".format,
        st.integers(0, 500),
        st.sampled_from(["d", "h", "w", "mo", "y", "min", " days ago", " weeks"]),
    ),
    st.builds("last {} days".format, st.integers(0, 500)),
)


@given(
    value=RELATIVE_TOKENS,
    now=st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1)),
)
def test_relative_bounds_never_invert_or_pass_now_for_past_windows(
    value: str, now: datetime
) -> None:
    since = parse_time_bound(value, now=now)
    until = parse_time_bound(value, now=now, end_of_range=True)
    assert since <= until
    assert since <= now.replace(tzinfo=UTC)


@given(day=st.dates())
def test_a_bare_date_covers_exactly_its_day(day: date) -> None:
    text = str(day)
    since = parse_time_bound(text, now=NOW)
    until = parse_time_bound(text, now=NOW, end_of_range=True)
    assert until - since == timedelta(days=1) - timedelta(microseconds=1)
    assert since.date() == day
