"""A content-free fingerprint of the indexed state a Capsule was compiled from.

It covers what decides the Capsule's evidence: the index name, the full-text
tokenizer, the egress lineage of the scope, and the identity (URI, source
hash, mirror hash) of every active document in the scope's collections. The
compile reads inside one SQLite read transaction, so the fingerprint taken
before retrieval and the one taken after agree unless that isolation fails;
a disagreement is reported, never papered over.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from gno_trio.engine.canonical import canonical_json
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection


def index_fingerprint(
    conn: Connection,
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
    for row in SQLITE_STORES.documents(conn).fingerprint_rows(names):
        digest.update(b"\n")
        digest.update(canonical_json(list(row)).encode("utf-8"))
    return digest.hexdigest()
