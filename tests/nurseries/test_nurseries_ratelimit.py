"""Behaviour of the per-key fixed-window rate limiter."""

from __future__ import annotations

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from nurseries import FixedWindowRateLimiter, RateDecision


class FakeClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def make_limiter(
    limit: int = 3, window: float = 60.0, max_keys: int = 100
) -> tuple[FixedWindowRateLimiter, FakeClock]:
    clock = FakeClock()
    return FixedWindowRateLimiter(limit, window, max_keys, clock=clock), clock


@pytest.mark.parametrize(
    ("limit", "window", "max_keys"), [(0, 60.0, 1), (1, 0.0, 1), (1, -1.0, 1), (1, 60.0, 0)]
)
def test_rejects_nonsensical_configuration(limit: int, window: float, max_keys: int) -> None:
    with pytest.raises(ValueError):
        FixedWindowRateLimiter(limit, window, max_keys, clock=FakeClock())


def test_allows_limit_requests_then_refuses_until_window_ends() -> None:
    limiter, clock = make_limiter(limit=3, window=60.0)
    decisions = [limiter.check("peer") for _ in range(3)]
    assert [d.remaining for d in decisions] == [2, 1, 0]
    assert all(d.allowed and d.retry_after == 0.0 for d in decisions)

    clock.advance(20.0)
    refused = limiter.check("peer")
    assert (refused.allowed, refused.remaining) == (False, 0)
    assert refused.retry_after == pytest.approx(40.0)

    clock.advance(39.5)
    assert limiter.check("peer").retry_after == pytest.approx(0.5)
    clock.advance(0.5)  # exactly one window after the first request
    assert limiter.check("peer") == RateDecision(allowed=True, remaining=2, retry_after=0.0)


def test_refused_requests_do_not_push_the_reset_back() -> None:
    limiter, clock = make_limiter(limit=1, window=10.0)
    assert limiter.check("peer").allowed
    for _ in range(50):
        clock.advance(0.1)
        assert not limiter.check("peer").allowed
    clock.advance(5.0)  # 10 s after the one allowed request
    assert limiter.check("peer").allowed


def test_keys_have_independent_budgets() -> None:
    limiter, clock = make_limiter(limit=2, window=60.0)
    assert limiter.check("a").allowed
    assert limiter.check("a").allowed
    assert not limiter.check("a").allowed
    assert limiter.check("b") == RateDecision(allowed=True, remaining=1, retry_after=0.0)
    clock.advance(30.0)
    assert limiter.check(("10.0.0.1", 5555)).allowed  # any hashable key


def test_flood_of_distinct_peers_stays_within_max_keys() -> None:
    limiter, clock = make_limiter(limit=5, window=60.0, max_keys=64)
    for index in range(20_000):
        assert limiter.check(f"peer-{index}").allowed
        assert limiter.tracked_keys() <= 64
        clock.advance(0.001)
    assert limiter.tracked_keys() == 64


def test_expired_windows_are_evicted_before_live_ones() -> None:
    limiter, clock = make_limiter(limit=3, window=60.0, max_keys=4)
    limiter.check("old-1")
    limiter.check("old-2")
    clock.advance(30.0)
    limiter.check("busy")
    limiter.check("busy")  # one request left in busy's window
    limiter.check("quiet")
    assert limiter.tracked_keys() == 4
    clock.advance(31.0)  # the old-* windows have closed; busy/quiet have not
    limiter.check("newcomer")
    assert limiter.tracked_keys() == 3
    assert limiter.check("busy").remaining == 0  # its count survived
    assert not limiter.check("busy").allowed


def test_full_table_of_live_windows_evicts_the_oldest() -> None:
    limiter, clock = make_limiter(limit=2, window=60.0, max_keys=3)
    for key in ("first", "second", "third"):
        limiter.check(key)
        limiter.check(key)
        clock.advance(1.0)
    limiter.check("fourth")
    assert limiter.tracked_keys() == 3
    # The evicted key starts over; the others keep their spent budgets.
    assert not limiter.check("second").allowed
    assert not limiter.check("third").allowed
    assert limiter.check("first") == RateDecision(allowed=True, remaining=1, retry_after=0.0)


def test_default_clock_outside_trio_uses_monotonic_time() -> None:
    limiter = FixedWindowRateLimiter(limit=1, window_seconds=3600.0, max_keys=8)
    assert limiter.check("peer").allowed
    refused = limiter.check("peer")
    assert not refused.allowed
    assert 3590.0 < refused.retry_after <= 3600.0


async def test_default_clock_inside_trio_follows_trio_time(
    autojump_clock: trio.testing.MockClock,
) -> None:
    limiter = FixedWindowRateLimiter(limit=1, window_seconds=60.0, max_keys=8)
    assert limiter.check("peer").allowed
    assert not limiter.check("peer").allowed
    await trio.sleep(60.0)  # virtual time; only trio's clock moves
    assert limiter.check("peer").allowed


def reference_decisions(
    limit: int, window: float, steps: list[tuple[str, float]]
) -> list[tuple[bool, int]]:
    """The rule written the obvious way, with an unbounded table."""
    now = 0.0
    windows: dict[str, list[float]] = {}  # key -> [started_at, count]
    results = []
    for key, advance in steps:
        now += advance
        state = windows.get(key)
        if state is None or state[0] <= now - window:
            state = [now, 0.0]
            windows[key] = state
        if state[1] >= limit:
            results.append((False, 0))
        else:
            state[1] += 1
            results.append((True, limit - int(state[1])))
    return results


steps_strategy = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c", "d", "e"]),
        st.sampled_from([0.0, 0.25, 1.0, 3.0, 9.99, 10.0, 25.0]),
    ),
    max_size=200,
)


@given(limit=st.integers(1, 5), steps=steps_strategy)
def test_matches_the_plain_rule_when_the_table_is_big_enough(
    limit: int, steps: list[tuple[str, float]]
) -> None:
    clock = FakeClock(start=0.0)
    limiter = FixedWindowRateLimiter(limit, 10.0, max_keys=5, clock=clock)
    actual = []
    for key, advance in steps:
        clock.advance(advance)
        decision = limiter.check(key)
        actual.append((decision.allowed, decision.remaining))
        assert 0.0 <= decision.retry_after <= 10.0
        if decision.allowed:
            assert decision.retry_after == 0.0
    assert actual == reference_decisions(limit, 10.0, steps)


@given(limit=st.integers(1, 5), max_keys=st.integers(1, 4), steps=steps_strategy)
def test_small_table_never_exceeds_its_bound(
    limit: int, max_keys: int, steps: list[tuple[str, float]]
) -> None:
    clock = FakeClock(start=0.0)
    limiter = FixedWindowRateLimiter(limit, 10.0, max_keys=max_keys, clock=clock)
    for key, advance in steps:
        clock.advance(advance)
        decision = limiter.check(key)
        assert limiter.tracked_keys() <= max_keys
        assert 0 <= decision.remaining < limit
