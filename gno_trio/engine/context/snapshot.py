"""A content-free fingerprint of the indexed state a Capsule was compiled from.

It covers what decides the Capsule's evidence: the index name, the full-text
tokenizer, the egress lineage of the scope, and the identity (URI, source
hash, mirror hash) of every active document in the scope's collections. The
compile reads inside one SQLite read transaction, so the fingerprint taken
before retrieval and the one taken after agree unless that isolation fails;
a disagreement is reported, never papered over.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gno_trio.engine.canonical import canonical_json


@contextlib.contextmanager
def read_snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """Hold one read transaction for the block, unless the caller already holds one."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


def index_fingerprint(
    conn: sqlite3.Connection,
    *,
    index_name: str,
    tokenizer: str,
    collections: Sequence[str],
    lineage: Mapping[str, Any],
) -> str:
    names = sorted(set(collections))
    digest = hashlib.sha256()
    header = {
        "indexName": index_name,
        "ftsTokenizer": tokenizer,
        "collections": names,
        "egressLineage": lineage,
    }
    digest.update(canonical_json(header).encode("utf-8"))
    if names:
        marks = ", ".join("?" for _ in names)
        rows = conn.execute(
            f"SELECT collection, uri, source_hash, mirror_hash FROM documents "
            f"WHERE active = 1 AND collection IN ({marks}) ORDER BY collection, uri",
            names,
        )
        for row in rows:
            digest.update(b"\n")
            digest.update(canonical_json([row[0], row[1], row[2], row[3]]).encode("utf-8"))
    return digest.hexdigest()
