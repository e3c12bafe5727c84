"""Rows written once per deployment or per index: the caller-label key and the config.

The deployment row holds the key every gateway of every host labels callers
with (``http:<16 hex>``, an HMAC of the caller's identity), made by whichever
gateway starts first; so one caller has one label everywhere and a memory
receipt issued on one host verifies on another.

The config row holds an index's ``index.yml`` text and its revision. The
revision is the authorization epoch of team mode: a change is a
compare-and-set on it (``CONFLICT`` when someone else changed it first),
announced on ``gno_config``.
"""

from __future__ import annotations

import secrets
from typing import Final

from gno_trio.engine.team.database import TeamDatabase
from gno_trio.errors import GnoError

CONFIG_CHANNEL: Final = "gno_config"
CALLER_KEY_BYTES: Final = 32


def deployment_caller_key(database: TeamDatabase) -> bytes:
    """The deployment's caller-label key, made once (the first writer's key wins)."""
    with database.connection() as conn:
        conn.execute(
            "INSERT INTO gno_deployment (id, caller_key) VALUES (1, %s) "
            "ON CONFLICT (id) DO NOTHING",
            (secrets.token_bytes(CALLER_KEY_BYTES),),
        )
        row = conn.execute("SELECT caller_key FROM gno_deployment WHERE id = 1").fetchone()
    assert row is not None
    return bytes(row[0])


class TeamConfig:
    """The configuration row of one index and its revision."""

    def __init__(self, database: TeamDatabase, index_name: str) -> None:
        self._database = database
        self._index = index_name

    def read(self) -> tuple[str | None, int]:
        """``(index.yml text, revision)``; ``(None, 0)`` before the first write."""
        with self._database.connection() as conn:
            row = conn.execute(
                "SELECT body, revision FROM gno_config WHERE index_name = %s", (self._index,)
            ).fetchone()
        return (None, 0) if row is None else (row[0], int(row[1]))

    def revision(self) -> int:
        """The current revision alone (0 before the first write): one indexed lookup."""
        with self._database.connection() as conn:
            row = conn.execute(
                "SELECT revision FROM gno_config WHERE index_name = %s", (self._index,)
            ).fetchone()
        return 0 if row is None else int(row[0])

    def replace(self, body: str, expected: int) -> int:
        """Write ``body`` if the revision is still ``expected``; the new revision.

        ``CONFLICT`` when another writer changed the configuration since
        ``expected`` was read: the caller re-reads and decides again.
        """
        with self._database.connection() as conn, conn.transaction():
            if expected == 0:
                row = conn.execute(
                    "INSERT INTO gno_config (index_name, body, revision) VALUES (%s, %s, 1) "
                    "ON CONFLICT (index_name) DO NOTHING RETURNING revision",
                    (self._index, body),
                ).fetchone()
            else:
                row = conn.execute(
                    "UPDATE gno_config SET body = %s, revision = revision + 1, updated_at = now() "
                    "WHERE index_name = %s AND revision = %s RETURNING revision",
                    (body, self._index, expected),
                ).fetchone()
            if row is None:
                raise GnoError(
                    "CONFLICT",
                    f"The configuration of index {self._index} changed meanwhile (it is no "
                    f"longer revision {expected}); read it again and retry",
                )
            revision = int(row[0])
            conn.execute("SELECT pg_notify(%s, %s)", (CONFIG_CHANNEL, f"{self._index}:{revision}"))
        return revision


__all__ = ["CALLER_KEY_BYTES", "CONFIG_CHANNEL", "TeamConfig", "deployment_caller_key"]
