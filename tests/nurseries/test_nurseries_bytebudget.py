"""ByteBudget: the total size waiting is bounded, waiters go in order, cancellation gives back."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from nurseries import ByteBudget


async def test_waits_until_released_bytes_make_room() -> None:
    budget = ByteBudget(100)
    await budget.acquire(60)
    got: list[int] = []

    async def take(size: int) -> None:
        await budget.acquire(size)
        got.append(size)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(take, 50)
        await trio.testing.wait_all_tasks_blocked()
        assert got == [] and budget.held == 60
        budget.release(60)
        await trio.testing.wait_all_tasks_blocked()
    assert got == [50] and budget.held == 50


async def test_an_oversized_item_passes_alone_and_is_not_starved() -> None:
    budget = ByteBudget(10)
    await budget.acquire(4)
    order: list[int] = []

    async def take(size: int) -> None:
        await budget.acquire(size)
        order.append(size)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(take, 50)  # larger than the whole budget
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(take, 1)  # would fit, but arrived later
        await trio.testing.wait_all_tasks_blocked()
        assert order == []
        budget.release(4)
        await trio.testing.wait_all_tasks_blocked()
        assert order == [50] and budget.held == 50
        budget.release(50)
    assert order == [50, 1] and budget.held == 1


async def test_a_cancelled_waiter_takes_nothing_and_lets_the_next_one_in() -> None:
    budget = ByteBudget(10)
    await budget.acquire(8)
    order: list[int] = []

    async def take(size: int) -> None:
        await budget.acquire(size)
        order.append(size)

    big = trio.CancelScope()

    async def take_big() -> None:
        with big:
            await take(9)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(take_big)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(take, 2)
        await trio.testing.wait_all_tasks_blocked()
        assert order == []
        big.cancel()
        await trio.testing.wait_all_tasks_blocked()
        assert order == [2] and budget.held == 10


def test_releasing_more_than_is_held_is_a_bug() -> None:
    budget = ByteBudget(10)
    with pytest.raises(RuntimeError):
        budget.release(1)
    with pytest.raises(ValueError):
        ByteBudget(0)
