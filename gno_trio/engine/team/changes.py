"""The store's side of a team index's change sequence: its state row and its changes.

``gno_index_state`` holds each index's epoch (this incarnation of its rows)
and ``change_seq``; :func:`publish` writes one change (a set of units) in
one transaction on the lease holder's connection, bumping the sequence,
stamping the units and notifying ``gno_changes``.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final

from gno_trio.engine.team.database import store_failure
from gno_trio.engine.team.units import Shipped
from gno_trio.errors import GnoError

if TYPE_CHECKING:
    import psycopg

CHANGES_CHANNEL: Final = "gno_changes"
"""Payload ``<index>:<change_seq>``, sent when a write is shipped."""
PRUNE_EVERY = 64
"""Every this many changes, the writer drops the tombstones older than :data:`KEEP_TOMBSTONES`."""
KEEP_TOMBSTONES = 1024
"""How many changes back a tombstone is kept: a host further behind starts its copy over."""
_EPOCH_DIGITS: Final = frozenset("0123456789abcdef")


def change_token(change: tuple[str, int]) -> str:
    """``<epoch>:<change_seq>``: a change of one incarnation of a team index, as a client
    carries it from one gateway to another (the epoch tells two databases apart)."""
    return f"{change[0]}:{change[1]}"


def parse_change_token(text: str) -> tuple[str, int]:
    """The ``(epoch, change_seq)`` of a :func:`change_token`; ``INVALID_INPUT`` naming the
    expected form when ``text`` is not one."""
    epoch, colon, seq = text.strip().partition(":")
    if (
        not colon
        or not epoch
        or not set(epoch) <= _EPOCH_DIGITS
        or not seq.isascii()
        or not seq.isdigit()
    ):
        raise GnoError(
            "INVALID_INPUT",
            f"A change token is <epoch>:<change_seq> (lowercase hex, decimal), not {text[:80]!r}",
        )
    return epoch, int(seq)


@contextlib.contextmanager
def store_failures(doing: str) -> Iterator[None]:
    """A failure of the database while ``doing``, told as :func:`.database.store_failure`
    tells it (out of reach: the retryable ``STORE_UNAVAILABLE``)."""
    import psycopg

    try:
        yield
    except psycopg.Error as exc:
        raise store_failure(None, exc, doing) from exc


def publish(
    pg: psycopg.Connection[Any],
    index_name: str,
    stamp: tuple[str, int],
    bodies: Iterable[Sequence[Shipped]],
) -> int:
    """Write ``bodies`` (slices of ``(kind, key, body or None)``, read as they are written)
    as the next change of ``index_name`` in one transaction on ``pg``, the lease holder's
    connection; the new change sequence.

    ``stamp`` is the ``(epoch, change_seq)`` the writer caught up to: if the
    index moved since (only a writer without the lease could have moved it),
    nothing is written.
    """
    epoch, seq = stamp
    with store_failures("sharing the write"), pg.transaction():
        row = pg.execute(
            "UPDATE gno_index_state SET change_seq = change_seq + 1 "
            "WHERE index_name = %s AND epoch = %s AND change_seq = %s RETURNING change_seq",
            (index_name, epoch, seq),
        ).fetchone()
        if row is None:
            raise GnoError(
                "RUNTIME",
                f"The shared index {index_name} moved while this host held its "
                "write lease; the write was not shared (try again)",
            )
        shipped = int(row[0])
        for part in bodies:  # one statement per slice: its columns as three arrays, sent
            # in binary (the text form of a bytea array escapes every element with a regex)
            pg.execute(
                "INSERT INTO gno_index_units (index_name, kind, key, change_seq, body) "
                "SELECT %s, kind, key, %s, body FROM unnest(%b::text[], %b::text[], "
                "%b::bytea[]) AS shipped (kind, key, body) ON CONFLICT (index_name, kind, key) "
                "DO UPDATE SET change_seq = EXCLUDED.change_seq, body = EXCLUDED.body",
                (
                    index_name,
                    shipped,
                    [kind for kind, _, _ in part],
                    [key for _, key, _ in part],
                    [body for _, _, body in part],
                ),
            )
        if shipped % PRUNE_EVERY == 0:
            prune_tombstones(pg, index_name, shipped - KEEP_TOMBSTONES)
        pg.execute("SELECT pg_notify(%s, %s)", (CHANGES_CHANNEL, f"{index_name}:{shipped}"))
    return shipped


def prune_tombstones(pg: psycopg.Connection[Any], index_name: str, through: int) -> None:
    """Drop ``index_name``'s tombstones of changes up to ``through`` and raise its
    ``pruned_through`` to the last one dropped, in the caller's transaction.

    A tombstone only tells a host that is behind to delete a unit; a host
    stamped before ``pruned_through`` may have missed one, so its catch-up
    starts its copy over from the store instead of following.
    """
    pg.execute(
        "WITH gone AS (DELETE FROM gno_index_units WHERE index_name = %s AND body IS NULL "
        "AND change_seq <= %s RETURNING change_seq) "
        "UPDATE gno_index_state SET pruned_through = GREATEST(pruned_through, "
        "(SELECT max(change_seq) FROM gone)) WHERE index_name = %s "
        "AND EXISTS (SELECT 1 FROM gone)",
        (index_name, through, index_name),
    )


def team_state(pg: psycopg.Connection[Any], index_name: str) -> tuple[str, int]:
    """``(epoch, change_seq)`` of ``index_name`` on the store, made on first use."""
    pg.execute(
        "INSERT INTO gno_index_state (index_name, epoch) VALUES (%s, %s) "
        "ON CONFLICT (index_name) DO NOTHING",
        (index_name, uuid.uuid4().hex),
    )
    row = pg.execute(
        "SELECT epoch, change_seq FROM gno_index_state WHERE index_name = %s", (index_name,)
    ).fetchone()
    assert row is not None
    return str(row[0]), int(row[1])


__all__ = [
    "CHANGES_CHANNEL",
    "KEEP_TOMBSTONES",
    "PRUNE_EVERY",
    "change_token",
    "parse_change_token",
    "prune_tombstones",
    "publish",
    "store_failures",
    "team_state",
]
