"""The store's side of a team index's change sequence: its state row and its changes.

``gno_index_state`` holds each index's epoch (this incarnation of its rows)
and ``change_seq``; :func:`publish` writes one change (a set of units) in
one transaction on the lease holder's connection, bumping the sequence,
stamping the units and notifying ``gno_changes``.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final

from gno_trio.engine.team.database import store_failure
from gno_trio.errors import GnoError

if TYPE_CHECKING:
    import psycopg

CHANGES_CHANNEL: Final = "gno_changes"
"""Payload ``<index>:<change_seq>``, sent when a write is shipped."""
_SHIP_ROWS: Final = 512


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
    bodies: Sequence[tuple[str, str, bytes | None]],
) -> int:
    """Write ``bodies`` (``(kind, key, body or None)``) as the next change of ``index_name``
    in one transaction on ``pg``, the lease holder's connection; the new change sequence.

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
        with pg.cursor() as cursor:
            for start in range(0, len(bodies), _SHIP_ROWS):
                cursor.executemany(
                    "INSERT INTO gno_index_units (index_name, kind, key, change_seq, body) "
                    "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (index_name, kind, key) "
                    "DO UPDATE SET change_seq = EXCLUDED.change_seq, body = EXCLUDED.body",
                    [
                        (index_name, kind, key, shipped, body)
                        for kind, key, body in bodies[start : start + _SHIP_ROWS]
                    ],
                )
        pg.execute("SELECT pg_notify(%s, %s)", (CHANGES_CHANNEL, f"{index_name}:{shipped}"))
    return shipped


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


__all__ = ["CHANGES_CHANNEL", "publish", "store_failures", "team_state"]
