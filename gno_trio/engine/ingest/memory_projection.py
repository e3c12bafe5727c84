"""Keeping the memory tables in step with fact files as they are indexed.

Called by sync for every document written in a memory-managed collection:
a valid fact gets its record row and scope rows (so recall can filter by
scope inside SQL), a malformed one gets a row naming the problem, which
``status`` reports. :func:`backfill` covers documents indexed before their
collection became memory-managed (sync skips unchanged files, so it would
never project them). It lives in ingest, beside the writes that call it;
the memory service above reads the rows it keeps (both through
:class:`~gno_trio.engine.store.memory.FactStore`).
"""

from __future__ import annotations

from gno_trio.engine.docmeta import DocumentMeta
from gno_trio.engine.facts import RecordProblem, parse_record
from gno_trio.engine.ingest.frontmatter import extract_meta
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection
from gno_trio.engine.store.memory import FactStore


def project(conn: Connection, doc_id: int, meta: DocumentMeta, *, managed: bool) -> None:
    _project(SQLITE_STORES.memory_facts(conn), doc_id, meta, managed=managed)


def _project(facts: FactStore, doc_id: int, meta: DocumentMeta, *, managed: bool) -> None:
    facts.clear(doc_id)
    if not managed:
        return
    try:
        record = parse_record(meta.frontmatter, meta.body)
    except RecordProblem as problem:
        facts.record_problem(doc_id, problem.code, problem.message)
        return
    facts.record_fact(
        doc_id,
        record_id=record.record_id,
        content_hash=record.content_hash,
        caller=record.caller,
        session=record.session,
        created_at=record.created_at,
        source=record.source,
        text=record.text,
        scopes=record.scopes,
        supersedes=record.supersedes,
    )


def problems(conn: Connection, collection: str, limit: int = 50) -> list[dict[str, str]]:
    """Malformed fact files of one collection, for ``status``."""
    return [
        {"relPath": rel_path, "code": code, "message": message}
        for rel_path, code, message in SQLITE_STORES.memory_facts(conn).problems(collection, limit)
    ]


def backfill(conn: Connection, collection: str) -> int:
    """Project every active document of a memory-managed collection that has no row yet.

    Returns how many were projected. Cheap when there is nothing to do (one
    anti-join); otherwise one write transaction over the stored mirrors.
    """
    facts = SQLITE_STORES.memory_facts(conn)
    if not facts.unprojected(collection, limit=1):
        return 0
    with facts.writing():
        rows = facts.unprojected(collection)
        for row in rows:
            _project(
                facts, int(row["id"]), extract_meta(row["markdown"], row["rel_path"]), managed=True
            )
    return len(rows)
