"""Keeping the memory tables in step with fact files as they are indexed.

Called by sync for every document written in a memory-managed collection:
a valid fact gets its record row and scope rows (so recall can filter by
scope inside SQL), a malformed one gets a row naming the problem, which
``status`` reports. :func:`backfill` covers documents indexed before their
collection became memory-managed (sync skips unchanged files, so it would
never project them). It lives in ingest, beside the writes that call it;
the memory service above reads the tables it keeps.
"""

from __future__ import annotations

import json
import sqlite3

from gno_trio.engine.docmeta import DocumentMeta
from gno_trio.engine.facts import RecordProblem, parse_record
from gno_trio.engine.ingest.frontmatter import extract_meta


def project(conn: sqlite3.Connection, doc_id: int, meta: DocumentMeta, *, managed: bool) -> None:
    conn.execute("DELETE FROM doc_memory_scopes WHERE document_id = ?", (doc_id,))
    conn.execute("DELETE FROM memory_records WHERE document_id = ?", (doc_id,))
    if not managed:
        return
    try:
        record = parse_record(meta.frontmatter, meta.body)
    except RecordProblem as problem:
        conn.execute(
            "INSERT INTO memory_records(document_id, valid, problem_code, problem_message) "
            "VALUES (?, 0, ?, ?)",
            (doc_id, problem.code, problem.message),
        )
        return
    conn.execute(
        """INSERT INTO memory_records(document_id, valid, record_id, content_hash, caller,
               session, created_at, source, text, scopes_json, supersedes_json)
           VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        (
            doc_id,
            record.record_id,
            record.content_hash,
            record.caller,
            record.session,
            record.created_at,
            record.source,
            record.text,
            json.dumps(list(record.scopes), ensure_ascii=False),
            json.dumps(list(record.supersedes), ensure_ascii=False),
        ),
    )
    conn.executemany(
        "INSERT OR IGNORE INTO doc_memory_scopes(scope, document_id) VALUES (?, ?)",
        [(scope, doc_id) for scope in record.scopes],
    )


def problems(conn: sqlite3.Connection, collection: str, limit: int = 50) -> list[dict[str, str]]:
    """Malformed fact files of one collection, for ``status``."""
    return [
        {"relPath": row[0], "code": row[1], "message": row[2]}
        for row in conn.execute(
            "SELECT d.rel_path, m.problem_code, m.problem_message FROM memory_records m "
            "JOIN documents d ON d.id = m.document_id WHERE d.collection = ? AND d.active = 1 "
            "AND m.valid = 0 ORDER BY d.rel_path LIMIT ?",
            (collection, limit),
        )
    ]


_UNPROJECTED_SQL = """
    SELECT d.id, d.rel_path, c.markdown FROM documents d
    JOIN content c ON c.mirror_hash = d.mirror_hash
    WHERE d.collection = ? AND d.active = 1
      AND NOT EXISTS (SELECT 1 FROM memory_records m WHERE m.document_id = d.id)
"""


def backfill(conn: sqlite3.Connection, collection: str) -> int:
    """Project every active document of a memory-managed collection that has no row yet.

    Returns how many were projected. Cheap when there is nothing to do (one
    anti-join); otherwise one write transaction over the stored mirrors.
    """
    if conn.execute(_UNPROJECTED_SQL + " LIMIT 1", (collection,)).fetchone() is None:
        return 0
    conn.execute("BEGIN IMMEDIATE")
    try:
        rows = conn.execute(_UNPROJECTED_SQL, (collection,)).fetchall()
        for row in rows:
            project(
                conn, int(row["id"]), extract_meta(row["markdown"], row["rel_path"]), managed=True
            )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return len(rows)
