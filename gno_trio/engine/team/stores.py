"""The stores of a team index's aggregates: which live on the shared store, which stay local.

:class:`TeamStores` is the :class:`~gno_trio.engine.store.aggregates.Stores`
a kernel holds once it joined a team. The egress audit and the retrieval
traces are shared rows on the PostgreSQL store (every gateway of the index
writes and lists one audit, one set of traces). Documents, content,
vectors, memory facts and the journal are read from the data directory's
SQLite file, which team mode keeps as a cache of the team's rows
(:mod:`.replica`), so their stores are the embedded ones.
"""

from __future__ import annotations

from gno_trio.engine.store.aggregates import SqliteStores
from gno_trio.engine.store.egress_receipts import ReceiptStore
from gno_trio.engine.store.traces import TraceStore
from gno_trio.engine.team.database import TeamDatabase
from gno_trio.engine.team.receipts import TeamReceipts
from gno_trio.engine.team.traces import TeamTraces


class TeamStores(SqliteStores):
    """:class:`~gno_trio.engine.store.aggregates.Stores` of one index in team mode.

    The call's connection (the local index's) is what the aggregates still kept
    in the data directory are opened on; the shared ones do not use it.
    """

    def __init__(self, database: TeamDatabase, index_name: str) -> None:
        self._database = database
        self._index = index_name

    def egress_receipts(self, conn: object) -> ReceiptStore:
        return TeamReceipts(self._database, self._index)

    def traces(self, conn: object) -> TraceStore:
        return TeamTraces(self._database, self._index)


__all__ = ["TeamStores"]
