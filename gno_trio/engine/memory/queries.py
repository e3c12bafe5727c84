"""Facts as the memory projection stores them: a row read back as a :class:`StoredFact`.

Which facts are current, and the statements that read them, belong to the
store (:mod:`gno_trio.engine.store.memory`); the rules of recall and
remember take its rows through :func:`fact_from_row`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from gno_trio.engine.facts import FactRecord
from gno_trio.engine.store.database import RowView


@dataclass(frozen=True, slots=True)
class StoredFact:
    """A fact as indexed: its record plus the document's URI and docid."""

    uri: str
    docid: str
    record: FactRecord

    def as_dict(self) -> dict[str, Any]:
        return self.record.as_dict(uri=self.uri, docid=self.docid)


def fact_from_row(row: RowView) -> StoredFact:
    """A fact row of :class:`~gno_trio.engine.store.memory.FactStore` as a :class:`StoredFact`."""
    record = FactRecord(
        record_id=row["record_id"],
        text=row["text"],
        scopes=tuple(json.loads(row["scopes_json"])),
        caller=row["caller"],
        session=row["session"],
        created_at=row["created_at"],
        content_hash=row["content_hash"],
        supersedes=tuple(json.loads(row["supersedes_json"])),
        source=row["source"],
    )
    return StoredFact(uri=row["uri"], docid=row["docid"], record=record)
