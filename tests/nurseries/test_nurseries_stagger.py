"""The staggered limiter: one holder while holders are young, another behind a slow one."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from nurseries.stagger import StaggeredLimiter


async def _take_after(limiter: StaggeredLimiter, who: str, taken: list[tuple[str, float]]) -> None:
    await limiter.acquire_on_behalf_of(who)
    taken.append((who, trio.current_time()))


async def test_a_second_holder_starts_only_once_the_first_has_held_for_the_stagger(
    autojump_clock: trio.testing.MockClock,
) -> None:
    limiter = StaggeredLimiter(2, 0.010)
    start = trio.current_time()
    limiter.acquire_on_behalf_of_nowait("slow")
    with pytest.raises(trio.WouldBlock):
        limiter.acquire_on_behalf_of_nowait("quick")
    taken: list[tuple[str, float]] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_take_after, limiter, "quick", taken)
        await trio.sleep(0.009)
        assert taken == [] and limiter.statistics().tasks_waiting == 1
    assert [who for who, _ in taken] == ["quick"]
    assert taken[0][1] == pytest.approx(start + 0.010)
    assert limiter.borrowed_tokens == 2 and limiter.statistics().tasks_waiting == 0


async def test_a_release_hands_the_token_on_at_once_in_arrival_order(
    autojump_clock: trio.testing.MockClock,
) -> None:
    limiter = StaggeredLimiter(3, 60.0)
    limiter.acquire_on_behalf_of_nowait("first")
    taken: list[tuple[str, float]] = []
    async with trio.open_nursery() as nursery:
        for who in ("b", "c", "d"):
            nursery.start_soon(_take_after, limiter, who, taken)
            await trio.sleep(0.001)  # they arrive in this order
        for holder in ("first", "b", "c"):
            released = trio.current_time()
            limiter.release_on_behalf_of(holder)
            await trio.sleep(1.0)
            assert taken[-1][1] == released  # the next one started at once
            assert limiter.borrowed_tokens == 1  # quick holders run one at a time
    assert [who for who, _ in taken] == ["b", "c", "d"]


async def test_never_more_holders_than_tokens_however_long_they_hold(
    autojump_clock: trio.testing.MockClock,
) -> None:
    limiter = StaggeredLimiter(2, 0.0)
    limiter.acquire_on_behalf_of_nowait("a")
    limiter.acquire_on_behalf_of_nowait("b")  # no stagger: the second starts at once
    taken: list[tuple[str, float]] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_take_after, limiter, "c", taken)
        await trio.sleep(3600)
        assert taken == [] and limiter.borrowed_tokens == 2
        limiter.release_on_behalf_of("a")
    assert [who for who, _ in taken] == ["c"]


async def test_a_cancelled_waiter_takes_nothing_and_holds_no_one_back(
    autojump_clock: trio.testing.MockClock,
) -> None:
    limiter = StaggeredLimiter(1, 0.0)
    limiter.acquire_on_behalf_of_nowait("holder")
    taken: list[tuple[str, float]] = []
    async with trio.open_nursery() as nursery:
        with trio.move_on_after(1.0):
            await limiter.acquire_on_behalf_of("impatient")
        nursery.start_soon(_take_after, limiter, "patient", taken)
        await trio.sleep(1.0)
        assert limiter.statistics().tasks_waiting == 1
        limiter.release_on_behalf_of("holder")
    assert [who for who, _ in taken] == ["patient"]
    assert limiter.borrowed_tokens == 1
    with pytest.raises(RuntimeError):
        limiter.release_on_behalf_of("impatient")


async def test_misuse_is_refused() -> None:
    limiter = StaggeredLimiter(2, 0.0)
    limiter.acquire_on_behalf_of_nowait("a")
    with pytest.raises(RuntimeError):
        limiter.acquire_on_behalf_of_nowait("a")
    with pytest.raises(RuntimeError):
        limiter.release_on_behalf_of("nobody")
    with pytest.raises(ValueError):
        StaggeredLimiter(0, 0.0)
    with pytest.raises(ValueError):
        StaggeredLimiter(1, float("nan"))
    assert limiter.total_tokens == 2
