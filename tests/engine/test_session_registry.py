"""The 2025-era session registry's contract, on both stores.

Two :class:`SharedSessionStore` objects over one registry stand for two
gateway processes (two workers of one host on the per-host SQLite file, or
two hosts on one PostgreSQL store): a session opened on one is served by the
other, the limits count every process, reaping spares what another process
uses, a token rotation noticed late keeps the new token's sessions, and in
team mode an ended session is announced so its holder lets go at once. A
session's subscribed documents are shared too, capped per session however
many processes take them, and go with the session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from gno_trio.engine.store.sessions import FileSessionRegistry, SessionRegistry
from gno_trio.engine.team.database import TeamDatabase
from gno_trio.engine.team.notify import Listener
from gno_trio.engine.team.sessions import SESSIONS_CHANNEL, TeamSessions
from gno_trio.protocol.connection import LEGACY_REQUEST_METHODS
from gno_trio.protocol.errors import ProtocolError
from gno_trio.protocol.subscriptions import (
    LEGACY_SUBSCRIPTION_METHODS,
    MAX_SUBSCRIPTIONS,
    ResourceSubscriptions,
)
from gno_trio.transports.http.metrics import TransportMetrics
from gno_trio.transports.http.sessions import HttpSession, SessionLimit
from gno_trio.transports.http.shared_sessions import SharedSessionStore
from gno_trio.transports.http.tokens import token_digest
from tests.conftest import STORES
from tests.support.http_gateway_support import initialize_body


class Registries:
    """New registries over one shared state: one per simulated process."""

    def __init__(self, folder: Path, make: Callable[[], SessionRegistry], store: str) -> None:
        self.folder = folder
        self.make = make
        self.store = store


@pytest.fixture(params=STORES)
def registries(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Registries]:
    if request.param == "sqlite":
        path = tmp_path / "sessions.sqlite"
        FileSessionRegistry.create_fresh(path).close()
        yield Registries(tmp_path, lambda: FileSessionRegistry(path), "sqlite")
        return
    database: TeamDatabase = request.getfixturevalue("team")
    yield Registries(tmp_path, lambda: TeamSessions(database), "postgresql")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def two_workers(registries: Registries, clock: Clock, **options: Any) -> list[SharedSessionStore]:
    settings: dict[str, Any] = {"max_sessions": 32, "idle_timeout": 60.0, "token_file": None}
    settings.update(options)
    return [
        SharedSessionStore(
            registries.make(), metrics=TransportMetrics(), wall_clock=clock, **settings
        )
        for _ in range(2)
    ]


async def initialized(store: SharedSessionStore, identity: str = "loopback") -> HttpSession:
    session = await store.open(identity)
    assert isinstance(session, HttpSession)
    session.protocol.admit("initialize", initialize_body()["params"])
    await store.record(session)
    return session


async def test_a_session_opened_on_one_worker_is_served_by_the_other(
    registries: Registries,
) -> None:
    first, second = two_workers(registries, Clock())
    created = await initialized(first)
    seen = await second.get(created.id)
    assert seen is not None and seen.identity == "loopback"
    assert seen.protocol.protocol_version == "2025-11-25"
    assert seen.protocol.client_info is not None and seen.protocol.client_info.name == "raw-legacy"
    assert await second.get("not-a-session") is None
    await second.close(seen, "deleted")
    assert await first.get(created.id) is None and created.closed
    assert await first.count() == await second.count() == 0


async def test_the_session_limit_counts_every_worker(registries: Registries) -> None:
    first, second = two_workers(registries, Clock(), max_sessions=3)
    assert (
        await first.open("loopback")
        and await second.open("loopback")
        and await first.open("loopback")
    )
    assert await second.open("loopback") is SessionLimit.TOTAL
    assert await first.open("loopback") is SessionLimit.TOTAL
    assert await first.count() == await second.count() == 3


async def test_the_per_identity_limit_counts_every_worker(registries: Registries) -> None:
    first, second = two_workers(registries, Clock(), max_sessions=4, max_per_identity=2)
    await initialized(first, "bearer:one")
    await initialized(second, "bearer:one")
    assert await first.open("bearer:one") is SessionLimit.PER_IDENTITY
    assert await second.open("bearer:one") is SessionLimit.PER_IDENTITY
    assert isinstance(await second.open("bearer:two"), HttpSession)  # another identity still may
    assert await first.count() == 3


async def test_reaping_spares_sessions_busy_on_another_worker(registries: Registries) -> None:
    clock = Clock()
    first, second = two_workers(registries, clock, idle_timeout=10.0)
    busy = await initialized(first)
    idle = await initialized(first)
    busy.in_flight[7] = trio.CancelScope()
    clock.now += 6
    await first.reap()  # refreshes what is in use here
    clock.now += 6
    assert await second.reap() == 1
    assert await second.get(busy.id) is not None and await second.get(idle.id) is None
    await first.reap()
    assert idle.closed and not busy.closed


async def test_rotation_noticed_late_keeps_sessions_of_the_new_token(
    registries: Registries,
) -> None:
    token_file = registries.folder / "token"
    token_file.write_text("n" * 40)
    token_file.chmod(0o600)
    new_identity = "bearer:" + token_digest("n" * 40).hex()
    first, second = two_workers(registries, Clock(), token_file=token_file)
    old = await initialized(first, "bearer:" + "0" * 64)
    anonymous = await initialized(first)
    assert await first.revoke_authenticated() == 1
    fresh = await initialized(first, new_identity)
    assert await second.revoke_authenticated() == 0  # this worker noticed the rotation later
    assert await second.get(fresh.id) is not None and await second.get(anonymous.id) is not None
    assert await second.get(old.id) is None and old.closed


def _subscriptions(session: HttpSession | None) -> ResourceSubscriptions:
    assert session is not None and session.subscriptions is not None
    return session.subscriptions


SUBSCRIBING = LEGACY_REQUEST_METHODS | LEGACY_SUBSCRIPTION_METHODS


async def test_subscriptions_are_capped_per_session_whichever_worker_takes_them(
    registries: Registries,
) -> None:
    first, second = two_workers(registries, Clock(), legacy_methods=SUBSCRIBING)
    session = await initialized(first)
    other = await initialized(second)
    here, there = _subscriptions(session), _subscriptions(await second.get(session.id))
    for index in range(MAX_SUBSCRIPTIONS):
        (here if index % 2 else there).subscribe({"uri": f"gno://notes/{index}.md"})
    assert len(here) == len(there) == MAX_SUBSCRIPTIONS
    for full in (here, there):
        with pytest.raises(ProtocolError) as refused:
            full.subscribe({"uri": "gno://notes/one-more.md"})
        assert refused.value.code == -32602
        assert refused.value.data == {"maxSubscriptions": MAX_SUBSCRIPTIONS}
    assert "gno://notes/one-more.md" not in here
    there.subscribe({"uri": "gno://notes/0.md"})  # already held: not one more
    _subscriptions(other).subscribe({"uri": "gno://notes/one-more.md"})  # another session may

    there.unsubscribe({"uri": "gno://notes/1.md"})
    assert "gno://notes/1.md" not in here
    here.subscribe({"uri": "gno://notes/one-more.md"})
    assert "gno://notes/one-more.md" in there


async def test_a_sessions_subscriptions_end_with_it(registries: Registries) -> None:
    first, second = two_workers(registries, Clock(), legacy_methods=SUBSCRIBING)
    session = await initialized(first)
    _subscriptions(session).subscribe({"uri": "gno://notes/alpha.md"})
    elsewhere = await second.get(session.id)
    assert elsewhere is not None
    await second.close(elsewhere, "deleted")
    registry = registries.make()
    try:
        assert registry.subscriptions(session.id) == frozenset()
        assert registry.subscribe(session.id, "gno://notes/alpha.md", 8)  # nothing to refuse...
        assert registry.subscriptions(session.id) == frozenset()  # ...and nothing kept
    finally:
        registry.close()


async def test_an_ended_session_reaches_its_holder_at_once_in_team_mode(
    team: TeamDatabase,
) -> None:
    database = team
    listener = Listener(database, [SESSIONS_CHANNEL])
    try:
        first, second = (
            SharedSessionStore(
                TeamSessions(database),
                metrics=TransportMetrics(),
                max_sessions=8,
                idle_timeout=60.0,
                token_file=None,
            )
            for _ in range(2)
        )
        held = await initialized(first)
        seen = await second.get(held.id)
        assert seen is not None
        await second.close(seen, "deleted")
        assert not held.closed  # the holder has not heard yet
        ended = [payload for _, payload in listener.wait(10)]
        await first.ended_elsewhere(ended)
        assert held.closed and ended == [held.id]
    finally:
        listener.close()


async def test_one_get_stream_per_session_across_workers_and_a_dead_workers_claim_lapses(
    registries: Registries,
) -> None:
    clock = Clock()
    first, second = two_workers(registries, clock, idle_timeout=40.0)
    session = await initialized(first)
    elsewhere = await second.get(session.id)
    assert elsewhere is not None
    session.in_flight[1] = trio.CancelScope()  # in use here: the session itself stays
    assert await first.claim_stream(session)
    assert not await second.claim_stream(elsewhere)  # held by the other worker
    assert not await first.claim_stream(session)  # and twice on one worker
    await first.release_stream(session)
    assert await second.claim_stream(elsewhere)  # free once the first stream ended

    # The holder renews its claim on every reaper pass while the stream lives...
    clock.now += second.stream_lease * 0.9
    await second.reap()
    clock.now += second.stream_lease * 0.9
    assert not await first.claim_stream(session)
    # ...and a worker that died renews nothing: its claim lapses after the lease.
    await first.reap()
    clock.now += second.stream_lease * 1.1
    assert await first.claim_stream(session)


async def test_stream_shares_of_a_caller_count_every_worker_and_a_dead_workers_lapse(
    registries: Registries,
) -> None:
    clock = Clock()
    first, second = two_workers(registries, clock, idle_timeout=40.0)
    held = [await first.ledger.take("listen", "loopback", 3) for _ in range(2)]
    assert None not in held
    assert await second.ledger.take("listen", "loopback", 3) is not None
    assert await second.ledger.take("listen", "loopback", 3) is None  # 3 held in all
    assert await first.ledger.take("events", "loopback", 3) is not None  # another kind
    assert await first.ledger.take("listen", "bearer:other", 3) is not None  # another caller
    given = held[0]
    assert given is not None
    await first.ledger.give_back(given)
    assert await second.ledger.take("listen", "loopback", 3) is not None

    # The second worker renews its shares on every reaper pass; the first one "died".
    for _ in range(3):
        clock.now += second.stream_lease * 0.6
        await second.reap()
    assert await second.ledger.take("listen", "loopback", 3) is not None  # the first's lapsed
    assert await second.ledger.take("listen", "loopback", 3) is None
