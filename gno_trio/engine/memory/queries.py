"""SQL over the memory projection: which facts are current, and reading them back.

A fact is *current* in a collection when its document is active, its file
validated (``memory_records.valid``), it shares a scope with the request
(``doc_memory_scopes``) and no active, valid fact of the same collection
supersedes it (``doc_edges``). Both conditions live in the ``WHERE`` clause
so that every ``LIMIT`` applies after them.

Facts are read from ``memory_records``, not re-parsed from their mirrors:
sync writes the mirror and its projection in one transaction, from one
validation, so the row always says what the mirror says, at a fraction of
the cost of parsing YAML per hit.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gno_trio.engine.facts import FactRecord

CURRENT_FACTS_SQL = """
    d.active = 1 AND d.collection = ? AND m.valid = 1
    AND EXISTS (SELECT 1 FROM doc_memory_scopes s WHERE s.document_id = d.id
                AND s.scope IN ({scopes}))
    AND NOT EXISTS (
        SELECT 1 FROM doc_edges e
        JOIN documents sd ON sd.id = e.src_doc_id
        JOIN memory_records sm ON sm.document_id = sd.id
        WHERE e.edge_type = 'supersedes' AND e.target = d.uri
          AND sd.active = 1 AND sd.collection = d.collection AND sm.valid = 1)
"""

FACT_COLUMNS = (
    "d.uri, d.docid, m.record_id, m.text, m.scopes_json, m.caller, m.session, m.created_at, "
    "m.content_hash, m.supersedes_json, m.source"
)


def current_facts_clause(scopes: Sequence[str]) -> str:
    """SQL condition (on ``d`` documents and ``m`` memory_records) for current in-scope facts.

    Its parameters are the collection name followed by each scope.
    """
    return CURRENT_FACTS_SQL.format(scopes=", ".join("?" for _ in scopes))


@dataclass(frozen=True, slots=True)
class StoredFact:
    """A fact as indexed: its record plus the document's URI and docid."""

    uri: str
    docid: str
    record: FactRecord

    def as_dict(self) -> dict[str, Any]:
        return self.record.as_dict(uri=self.uri, docid=self.docid)


def fact_from_row(row: sqlite3.Row) -> StoredFact:
    """A row selected with :data:`FACT_COLUMNS` as a :class:`StoredFact`."""
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
