"""2025-era session rows shared by every gateway of every host (an UNLOGGED table).

The same operations as the per-host registry file of ``serve --workers N``,
on ``gno_gateway_sessions``: the limits (in all, per identity) are counted
under a transaction-level advisory lock so two hosts never both take the
last slot; each row that goes away (DELETE, token rotation, idle expiry) is
announced on the ``gno_sessions`` channel in the same statement, so the
gateway holding that session's GET stream ends it at once
(:class:`~gno_trio.engine.team.notify.Listener`). The documents a session
subscribed to sit beside it (``gno_gateway_subscriptions``) and go with it.
Rows are never wiped at start: other hosts' sessions live on, and idle
expiry cleans up after a host that died. ``last_seen`` is wall-clock
seconds (hosts keep their clocks in step, as TLS already requires).
"""

from __future__ import annotations

import json
from typing import Final

from gno_trio.engine.team.database import TeamDatabase, advisory_key

SESSIONS_CHANNEL: Final = "gno_sessions"
CANCEL_CHANNEL: Final = "gno_cancel"
"""``{"session": id, "request": request id}``: a ``notifications/cancelled`` sent elsewhere."""
_LIMIT_KEY: Final = advisory_key("session-limits")
_SHARES_KEY: Final = advisory_key("stream-shares")


class TeamSessions:
    """The session registry of a PostgreSQL store."""

    def __init__(self, database: TeamDatabase) -> None:
        self._database = database

    def close(self) -> None:
        """Nothing of its own to let go: the store's pool is closed with the store."""

    def reserve(
        self, session_id: str, identity: str, now: float, limit: int, per_identity: int
    ) -> str | None:
        """Insert a row unless a limit is reached: ``"total"``/``"per-identity"``, or None."""
        with self._database.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LIMIT_KEY,))
            row = conn.execute(
                "SELECT count(*), count(*) FILTER (WHERE identity = %s) FROM gno_gateway_sessions",
                (identity,),
            ).fetchone()
            assert row is not None
            count, held = row
            if count >= limit:
                return "total"
            if held >= per_identity:
                return "per-identity"
            conn.execute(
                "INSERT INTO gno_gateway_sessions (id, identity, last_seen) VALUES (%s, %s, %s)",
                (session_id, identity, now),
            )
        return None

    def lookup(self, session_id: str) -> tuple[str, str | None] | None:
        with self._database.connection() as conn:
            row = conn.execute(
                "SELECT identity, protocol FROM gno_gateway_sessions WHERE id = %s", (session_id,)
            ).fetchone()
        return None if row is None else (row[0], row[1])

    def record_protocol(self, session_id: str, protocol: str) -> None:
        with self._database.connection() as conn:
            conn.execute(
                "UPDATE gno_gateway_sessions SET protocol = %s WHERE id = %s",
                (protocol, session_id),
            )

    def touch(self, session_ids: list[str], now: float) -> None:
        with self._database.connection() as conn:
            conn.execute(
                "UPDATE gno_gateway_sessions SET last_seen = greatest(last_seen, %s) "
                "WHERE id = ANY(%s)",
                (now, session_ids),
            )

    def _delete(self, where: str, params: tuple[object, ...]) -> list[str]:
        with self._database.connection() as conn:
            rows = conn.execute(
                f"WITH gone AS (DELETE FROM gno_gateway_sessions WHERE {where} RETURNING id) "
                f"SELECT id, pg_notify('{SESSIONS_CHANNEL}', id) FROM gone",
                params,
            ).fetchall()
        return [row[0] for row in rows]

    def remove(self, session_id: str) -> None:
        self._delete("id = %s", (session_id,))

    def expire(self, deadline: float) -> list[str]:
        return self._delete("last_seen < %s", (deadline,))

    def revoke_bearer_except(self, keep_identity: str | None) -> list[str]:
        return self._delete(
            "identity LIKE 'bearer:%%' AND identity IS DISTINCT FROM %s", (keep_identity,)
        )

    def live_ids(self) -> set[str]:
        with self._database.connection() as conn:
            return {row[0] for row in conn.execute("SELECT id FROM gno_gateway_sessions")}

    def subscribe(self, session_id: str, uri: str, limit: int) -> bool:
        """Keep a document URI for a live session unless it holds ``limit`` already.

        The session's row is locked while counting, so gateways subscribing
        at once never overshoot; True when kept (or already kept, or the
        session just ended: nothing to refuse).
        """
        with self._database.connection() as conn, conn.transaction():
            live = conn.execute(
                "SELECT 1 FROM gno_gateway_sessions WHERE id = %s FOR UPDATE", (session_id,)
            ).fetchone()
            if live is None:
                return True
            row = conn.execute(
                "SELECT count(*), count(*) FILTER (WHERE uri = %s) FROM gno_gateway_subscriptions "
                "WHERE session_id = %s",
                (uri, session_id),
            ).fetchone()
            assert row is not None
            held, kept = row
            if kept:
                return True
            if held >= limit:
                return False
            conn.execute(
                "INSERT INTO gno_gateway_subscriptions (session_id, uri) VALUES (%s, %s)",
                (session_id, uri),
            )
        return True

    def unsubscribe(self, session_id: str, uri: str) -> None:
        with self._database.connection() as conn:
            conn.execute(
                "DELETE FROM gno_gateway_subscriptions WHERE session_id = %s AND uri = %s",
                (session_id, uri),
            )

    def subscriptions(self, session_id: str) -> frozenset[str]:
        with self._database.connection() as conn:
            rows = conn.execute(
                "SELECT uri FROM gno_gateway_subscriptions WHERE session_id = %s", (session_id,)
            ).fetchall()
        return frozenset(row[0] for row in rows)

    def claim_stream(self, session_id: str, claim: str, now: float, until: float) -> bool:
        """Take a live session's GET stream unless an unexpired claim holds it (one statement)."""
        with self._database.connection() as conn:
            row = conn.execute(
                "INSERT INTO gno_gateway_streams (session_id, claim, until) "
                "SELECT id, %s, %s FROM gno_gateway_sessions WHERE id = %s "
                "ON CONFLICT (session_id) DO UPDATE SET claim = excluded.claim, "
                "until = excluded.until WHERE gno_gateway_streams.until < %s "
                "RETURNING claim",
                (claim, until, session_id, now),
            ).fetchone()
        return row is not None

    def renew_streams(self, claims: list[tuple[str, str]], until: float) -> None:
        with self._database.connection() as conn:
            conn.execute(
                "UPDATE gno_gateway_streams SET until = greatest(until, %s) "
                "FROM unnest(%s::text[], %s::text[]) AS held (session_id, claim) "
                "WHERE gno_gateway_streams.session_id = held.session_id "
                "AND gno_gateway_streams.claim = held.claim",
                (until, [c[0] for c in claims], [c[1] for c in claims]),
            )

    def release_stream(self, session_id: str, claim: str) -> None:
        with self._database.connection() as conn:
            conn.execute(
                "DELETE FROM gno_gateway_streams WHERE session_id = %s AND claim = %s",
                (session_id, claim),
            )

    def take_share(
        self, kind: str, identity: str, claim: str, now: float, until: float, limit: int
    ) -> bool:
        """Count one more long-lived stream of ``identity`` on any gateway, unless ``limit`` are."""
        with self._database.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SHARES_KEY,))
            conn.execute("DELETE FROM gno_gateway_stream_shares WHERE until < %s", (now,))
            row = conn.execute(
                "SELECT count(*) FROM gno_gateway_stream_shares WHERE kind = %s AND identity = %s",
                (kind, identity),
            ).fetchone()
            assert row is not None
            if row[0] >= limit:
                return False
            conn.execute(
                "INSERT INTO gno_gateway_stream_shares (claim, kind, identity, until) "
                "VALUES (%s, %s, %s, %s)",
                (claim, kind, identity, until),
            )
        return True

    def renew_shares(self, claims: list[str], until: float) -> None:
        with self._database.connection() as conn:
            conn.execute(
                "UPDATE gno_gateway_stream_shares SET until = greatest(until, %s) "
                "WHERE claim = ANY(%s)",
                (until, claims),
            )

    def release_share(self, claim: str) -> None:
        with self._database.connection() as conn:
            conn.execute("DELETE FROM gno_gateway_stream_shares WHERE claim = %s", (claim,))

    def announce_cancel(self, session_id: str, request_id: str | int) -> None:
        """Ask whichever gateway runs this request of the session to stop it."""
        payload = json.dumps({"session": session_id, "request": request_id})
        with self._database.connection() as conn:
            conn.execute("SELECT pg_notify(%s, %s)", (CANCEL_CHANNEL, payload))

    def count(self) -> int:
        with self._database.connection() as conn:
            row = conn.execute("SELECT count(*) FROM gno_gateway_sessions").fetchone()
        assert row is not None
        return int(row[0])


__all__ = ["CANCEL_CHANNEL", "SESSIONS_CHANNEL", "TeamSessions"]
