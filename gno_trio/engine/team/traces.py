"""The retrieval traces of team mode: one index's traces on a PostgreSQL store.

:class:`TeamTraces` answers :class:`~gno_trio.engine.store.traces.TraceStore`
on the shared store: a trace recorded by a search on one gateway is listed,
continued (a follow-up read names its id), judged, exported and deleted
through any other. The trace rules (:mod:`gno_trio.engine.traces`) are the
embedded index's; only the statements differ. Their multi-statement rules
run inside :meth:`TeamTraces.writing`, one writer of the index's traces at a
time across hosts.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from typing import Any, Final

from gno_trio.engine.store import pages
from gno_trio.engine.store.database import RowView
from gno_trio.engine.team.database import TeamDatabase
from gno_trio.engine.team.rows import UNCONFIRMED_CLEANUP, IndexRows

_TRACES: Final = "gno_traces"
_RECORDS: Final = "gno_trace_records"
_EXPORTS: Final = "gno_trace_exports"
_LINKS: Final = "gno_trace_export_links"
_STATE: Final = "gno_trace_state"


class TeamTraces:
    """:class:`~gno_trio.engine.store.traces.TraceStore` of one index, shared."""

    __slots__ = ("_index", "_rows")

    def __init__(self, database: TeamDatabase, index_name: str) -> None:
        self._rows = IndexRows(database, index_name, "retrieval-traces")
        self._index = index_name

    def writing(self) -> contextlib.AbstractContextManager[None]:
        return self._rows.writing()

    def erasing(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()  # the server decides what happens to freed space

    def cleanup(self) -> dict[str, Any]:
        return dict(UNCONFIRMED_CLEANUP)

    # -- traces --

    def trace(self, trace_id: str) -> RowView | None:
        return self._rows.one(
            f"SELECT * FROM {_TRACES} WHERE index_name = %s AND trace_id = %s",
            (self._index, trace_id),
        )

    def page(
        self, *, limit: int, after: pages.PageKey | None
    ) -> tuple[list[RowView], pages.PageKey | None]:
        found, following = self._rows.newest_first(_TRACES, "trace_id", limit=limit, after=after)
        return list(found), following

    def newest_created(self) -> int | None:
        row = self._rows.one(
            f"SELECT MAX(created_at_ms) AS newest FROM {_TRACES} WHERE index_name = %s",
            (self._index,),
        )
        return None if row is None or row["newest"] is None else int(row["newest"])

    def insert_trace(
        self, trace_id: str, moment: int, expires_at_ms: int, byte_size: int, creation: str
    ) -> None:
        self._rows.run(
            f"INSERT INTO {_TRACES} (index_name, trace_id, status, created_at_ms, "
            "updated_at_ms, expires_at_ms, byte_size, records, creation) "
            "VALUES (%s, %s, 'open', %s, %s, %s, %s, 0, %s)",
            (self._index, trace_id, moment, moment, expires_at_ms, byte_size, creation),
        )

    def grow(self, trace_id: str, byte_size: int, moment: int, status: str) -> None:
        self._rows.run(
            f"UPDATE {_TRACES} SET records = records + 1, byte_size = byte_size + %s, "
            "updated_at_ms = %s, status = %s WHERE index_name = %s AND trace_id = %s",
            (byte_size, moment, status, self._index, trace_id),
        )

    def finish(self, trace_id: str, status: str, moment: int) -> None:
        self._rows.run(
            f"UPDATE {_TRACES} SET status = %s, updated_at_ms = %s "
            "WHERE index_name = %s AND trace_id = %s AND status = 'open'",
            (status, moment, self._index, trace_id),
        )

    def settle(self, trace_id: str, idle_ms: int, moment: int) -> None:
        self._rows.run(
            f"UPDATE {_TRACES} SET status = 'completed' WHERE index_name = %s AND trace_id = %s "
            "AND status = 'open' AND updated_at_ms + %s <= %s",
            (self._index, trace_id, idle_ms, moment),
        )

    def totals(self) -> tuple[int, int]:
        row = self._rows.one(
            f"SELECT COUNT(*) AS n, COALESCE(SUM(byte_size), 0)::bigint AS size "
            f"FROM {_TRACES} WHERE index_name = %s",
            (self._index,),
        )
        assert row is not None
        return int(row["n"]), int(row["size"])

    def oldest_first(self) -> list[tuple[str, int]]:
        rows = self._rows.all(
            f"SELECT trace_id, byte_size FROM {_TRACES} WHERE index_name = %s "
            "ORDER BY created_at_ms, trace_id",
            (self._index,),
        )
        return [(str(row["trace_id"]), int(row["byte_size"])) for row in rows]

    def delete_expired(self, moment: int) -> None:
        self._rows.run(
            f"DELETE FROM {_TRACES} WHERE index_name = %s AND expires_at_ms <= %s",
            (self._index, moment),
        )

    def delete_trace(self, trace_id: str) -> None:
        self._rows.run(
            f"DELETE FROM {_TRACES} WHERE index_name = %s AND trace_id = %s",
            (self._index, trace_id),
        )

    def delete_all(self) -> None:
        self._rows.run(f"DELETE FROM {_TRACES} WHERE index_name = %s", (self._index,))
        self._rows.run(f"DELETE FROM {_EXPORTS} WHERE index_name = %s", (self._index,))

    def counts(self, trace_id: str | None = None) -> tuple[int, dict[str, int], int]:
        where, params = "WHERE index_name = %s", [self._index]
        if trace_id is not None:
            where, params = where + " AND trace_id = %s", [*params, trace_id]
        rows = self._rows
        traces = rows.one(f"SELECT COUNT(*) AS n FROM {_TRACES} {where}", params)
        sections = {
            str(row["section"]): int(row["n"])
            for row in rows.all(
                f"SELECT section, COUNT(*) AS n FROM {_RECORDS} {where} GROUP BY section", params
            )
        }
        links = rows.one(f"SELECT COUNT(*) AS n FROM {_LINKS} {where}", params)
        assert traces is not None and links is not None
        return int(traces["n"]), sections, int(links["n"])

    # -- records --

    def records(
        self, trace_id: str, section: str, limit: int | None = None
    ) -> tuple[list[dict[str, Any]], int]:
        where = "WHERE index_name = %s AND trace_id = %s AND section = %s"
        params = (self._index, trace_id, section)
        total = self._rows.one(f"SELECT COUNT(*) AS n FROM {_RECORDS} {where}", params)
        bodies = self._rows.all(
            f"SELECT body FROM {_RECORDS} {where} ORDER BY seq LIMIT %s", (*params, limit)
        )
        assert total is not None
        return [json.loads(row["body"]) for row in bodies], int(total["n"])

    def record(self, trace_id: str, section: str, idempotency_key: str) -> dict[str, Any] | None:
        row = self._rows.one(
            f"SELECT body FROM {_RECORDS} WHERE index_name = %s AND trace_id = %s "
            "AND section = %s AND idempotency_key = %s",
            (self._index, trace_id, section, idempotency_key),
        )
        return None if row is None else dict(json.loads(row["body"]))

    def insert_record(
        self,
        record_id: str,
        trace_id: str,
        section: str,
        seq: int,
        idempotency_key: str,
        moment: int,
        body: str,
    ) -> None:
        self._rows.run(
            f"INSERT INTO {_RECORDS} (index_name, record_id, trace_id, section, seq, "
            "idempotency_key, created_at_ms, body) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (self._index, record_id, trace_id, section, seq, idempotency_key, moment, body),
        )

    # -- exports --

    def exports_of(self, trace_id: str) -> list[RowView]:
        found: list[RowView] = list(
            self._rows.all(
                f"SELECT e.export_id, e.format, e.artifact_hash, e.created_at_ms "
                f"FROM {_EXPORTS} e JOIN {_LINKS} l "
                "ON l.index_name = e.index_name AND l.export_id = e.export_id "
                "WHERE e.index_name = %s AND l.trace_id = %s "
                "ORDER BY e.created_at_ms, e.export_id",
                (self._index, trace_id),
            )
        )
        return found

    def export(self, export_id: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
        row = self._rows.one(
            f"SELECT manifest, artifact FROM {_EXPORTS} WHERE index_name = %s AND export_id = %s",
            (self._index, export_id),
        )
        if row is None:
            return None
        return json.loads(row["manifest"]), json.loads(row["artifact"])

    def insert_export(
        self,
        export_id: str,
        export_format: str,
        artifact_hash: str,
        moment: int,
        manifest: str,
        artifact: str,
        trace_ids: Sequence[str],
    ) -> None:
        self._rows.run(
            f"INSERT INTO {_EXPORTS} (index_name, export_id, format, artifact_hash, "
            "created_at_ms, manifest, artifact) VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (self._index, export_id, export_format, artifact_hash, moment, manifest, artifact),
        )
        self._rows.run_many(
            f"INSERT INTO {_LINKS} (index_name, export_id, trace_id) VALUES (%s, %s, %s)",
            [(self._index, export_id, trace_id) for trace_id in trace_ids],
        )

    def export_count(self) -> int:
        row = self._rows.one(
            f"SELECT COUNT(*) AS n FROM {_EXPORTS} WHERE index_name = %s", (self._index,)
        )
        assert row is not None
        return int(row["n"])

    def drop_orphan_exports(self) -> int:
        return self._rows.run(
            f"DELETE FROM {_EXPORTS} e WHERE e.index_name = %s AND NOT EXISTS "
            f"(SELECT 1 FROM {_LINKS} l WHERE l.index_name = e.index_name "
            "AND l.export_id = e.export_id)",
            (self._index,),
        )

    # -- state --

    def state(self, key: str, make: Callable[[], str]) -> str:
        query = f"SELECT value FROM {_STATE} WHERE index_name = %s AND key = %s"
        row = self._rows.one(query, (self._index, key))
        if row is None:
            self._rows.run(
                f"INSERT INTO {_STATE} (index_name, key, value) VALUES (%s, %s, %s) "
                "ON CONFLICT (index_name, key) DO NOTHING",
                (self._index, key, make()),
            )
            row = self._rows.one(query, (self._index, key))
        assert row is not None
        return str(row["value"])


__all__ = ["TeamTraces"]
