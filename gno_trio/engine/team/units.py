"""Units of replication: how a team index's rows are cut, recorded, read and applied locally.

In team mode PostgreSQL holds an index's rows and each host's SQLite file
is a cache of them (so FTS5, tantivy, snippets and the in-memory rankers
read exactly what the embedded backend reads). Rows travel in *units*, the
smallest sets that are only ever consistent together:

* a document: its ``documents`` row with its tags, links, edges, memory
  record and memory scopes, plus its ``documents_fts`` row as the writer
  indexed it (so BM25 ranks the same text on every host);
* a content mirror: its ``content`` row with its chunks, window vectors
  and sentence vectors (``chunks_fts`` is rebuilt locally from the chunks:
  it reads its text through the ``chunk_texts`` view);
* a collection, an embedding model, an ingest error, a journal entry;
* the document-index backend: ``schema_meta``'s ``document_index`` rows
  (FTS5 or tantivy, and tantivy's generation).

Kept local (derived, or per host): the rest of ``schema_meta``,
``chunks_fts`` (rebuilt from the chunks), ``doc_index_pending`` (tantivy's
queue, fed by its triggers as the units are applied), ``sqlite_sequence``;
the egress audit and the retrieval traces are shared rows of their own
(:mod:`.receipts`, :mod:`.traces`).

The writer's triggers (:mod:`.outbox`) record the key of every unit a
local transaction touches, inside that transaction. Applying units
(:func:`applying`) sets a flag row for the transaction, which the triggers
skip on.
Units keep the writer's ids and rowids: only the lease holder writes, after
catching up, so every copy allocates the same ids the writer did.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec

UnitKey = tuple[str, str]
"""``(kind, key)``: the kind's code and the unit's key as text."""


@dataclass(frozen=True, slots=True)
class Table:
    name: str
    key: str
    """The column holding the unit's key (an SQL expression over ``NEW.``/``OLD.`` columns)."""
    rowid: bool = False
    """Whether the table has an implicit rowid worth keeping (no ``INTEGER PRIMARY KEY``)."""
    columns: tuple[str, ...] = ()
    """For a composite key, the key's columns (the key is their JSON array)."""
    fixed: str = ""
    """For a unit of fixed rows, their ``WHERE`` condition (the key names the unit only)."""


@dataclass(frozen=True, slots=True)
class Kind:
    code: str
    tables: tuple[Table, ...]
    """Parents first: inserted in this order, deleted in the reverse one."""
    numeric: bool = False
    enumerate_sql: str = ""
    """Every key this kind has in a local file (for seeding a team from it)."""


_BACKEND_ROWS: Final = "key IN ('document_index', 'document_index_generation')"
DOCUMENT_INDEX: Final = Kind(
    "s",
    (Table("schema_meta", "key", fixed=_BACKEND_ROWS),),
    enumerate_sql="SELECT 'document_index'",
)
"""Which index ranks documents (FTS5 or tantivy, and tantivy's generation): every host
ranks with the writer's choice, its own tantivy directory built from its own file."""
COLLECTION: Final = Kind(
    "c", (Table("collections", "name", rowid=True),), enumerate_sql="SELECT name FROM collections"
)
MODEL: Final = Kind(
    "v", (Table("embed_models", "id"),), numeric=True, enumerate_sql="SELECT id FROM embed_models"
)
CONTENT: Final = Kind(
    "m",
    (
        Table("content", "mirror_hash", rowid=True),
        Table("content_chunks", "mirror_hash"),
        Table("content_vectors", "mirror_hash"),
        Table("sentence_vectors", "mirror_hash"),
    ),
    enumerate_sql=(
        "SELECT mirror_hash FROM content UNION SELECT mirror_hash FROM content_chunks UNION "
        "SELECT mirror_hash FROM content_vectors UNION SELECT mirror_hash FROM sentence_vectors"
    ),
)
DOCUMENT: Final = Kind(
    "d",
    (
        Table("documents", "id"),
        Table("doc_tags", "doc_id"),
        Table("doc_links", "doc_id", rowid=True),
        Table("doc_edges", "src_doc_id", rowid=True),
        Table("memory_records", "document_id"),
        Table("doc_memory_scopes", "document_id"),
    ),
    numeric=True,
    enumerate_sql="SELECT id FROM documents",
)
INGEST_ERROR: Final = Kind(
    "e",
    (Table("ingest_errors", "", columns=("collection", "rel_path")),),
    enumerate_sql="SELECT json_array(collection, rel_path) FROM ingest_errors",
)
JOURNAL: Final = Kind(
    "j",
    (Table("document_changes", "id"),),
    numeric=True,
    enumerate_sql="SELECT id FROM document_changes",
)
KINDS: Final = (DOCUMENT_INDEX, COLLECTION, MODEL, CONTENT, DOCUMENT, INGEST_ERROR, JOURNAL)
"""In dependency order: vectors need their model; documents are queued for tantivy only
once the backend row says tantivy ranks."""
_BY_CODE: Final = {kind.code: kind for kind in KINDS}
REPLICATED_TABLES: Final = tuple(table.name for kind in KINDS for table in kind.tables)

_FTS_COLUMNS: Final = ("rowid", "filepath", "title", "body", "author", "tags", "categories")
APPLYING: Final = "applying"
"""The ``team_replica`` row set while the team's units are applied (the triggers skip)."""


def all_units(conn: sqlite3.Connection) -> list[UnitKey]:
    """Every unit the file holds, in dependency order."""
    return [(kind.code, str(row[0])) for kind in KINDS for row in conn.execute(kind.enumerate_sql)]


# -- reading and applying units ----------------------------------------------------


def _where(table: Table, param: Any) -> tuple[str, tuple[Any, ...]]:
    """The ``WHERE`` condition selecting one unit's rows of ``table``, and its parameters."""
    if table.fixed:
        return table.fixed, ()
    if table.columns:
        condition = " AND ".join(
            f"{column} = json_extract(?, '$[{i}]')" for i, column in enumerate(table.columns)
        )
        return condition, (param,) * len(table.columns)
    return f"{table.key} = ?", (param,)


def _param(kind: Kind, key: str) -> Any:
    return int(key) if kind.numeric else key


def read_unit(conn: sqlite3.Connection, unit: UnitKey) -> bytes | None:
    """The unit's rows as the file holds them now, encoded; None when it has none (deleted)."""
    kind = _BY_CODE[unit[0]]
    param = _param(kind, unit[1])
    tables: list[tuple[str, list[str], list[list[Any]]]] = []
    for table in kind.tables:
        condition, params = _where(table, param)
        cursor = conn.execute(
            f"SELECT rowid AS rowid, * FROM {table.name} WHERE {condition} ORDER BY rowid"
            if table.rowid
            else f"SELECT * FROM {table.name} WHERE {condition}",
            params,
        )
        rows = [list(row) for row in cursor]
        if rows:
            tables.append((table.name, [d[0] for d in cursor.description], rows))
    if kind is DOCUMENT and tables:
        row = conn.execute(
            f"SELECT {', '.join(_FTS_COLUMNS)} FROM documents_fts WHERE rowid = ?", (param,)
        ).fetchone()
        if row is not None:
            tables.append(("documents_fts", list(_FTS_COLUMNS), [list(row)]))
    return msgspec.msgpack.encode(tables) if tables else None


_Body = list[tuple[str, list[str], list[list[Any]]]]
Shipped = tuple[str, str, bytes | None]
"""``(kind, key, body)``: a unit as it is shipped (None: the unit has no rows, deleted)."""
UNITS_PER_READ: Final = 256
"""How many units :func:`read_units` reads with one query per table (and holds at once)."""


def read_units(conn: sqlite3.Connection, keys: Sequence[UnitKey]) -> Iterator[list[Shipped]]:
    """The bodies of ``keys`` as :func:`read_unit` reads them, :data:`UNITS_PER_READ` at a
    time: one query per table and slice rather than one per table and unit, and never more
    than a slice in memory however many units a seed ships."""
    for start in range(0, len(keys), UNITS_PER_READ):
        part = keys[start : start + UNITS_PER_READ]
        bodies: dict[UnitKey, bytes | None] = {}
        for code in dict.fromkeys(kind for kind, _ in part):
            kind = _BY_CODE[code]
            wanted = [key for unit_kind, key in part if unit_kind == code]
            if not any(table.fixed or table.columns for table in kind.tables):
                bodies.update(_read_kind(conn, kind, wanted))
            else:  # a fixed or composite-keyed unit: few, read one by one
                bodies.update(((code, key), read_unit(conn, (code, key))) for key in wanted)
        yield [(kind, key, bodies[(kind, key)]) for kind, key in part]


def _read_kind(
    conn: sqlite3.Connection, kind: Kind, keys: Sequence[str]
) -> Iterator[tuple[UnitKey, bytes | None]]:
    """The bodies of ``keys``, all units of ``kind`` keyed by one column per table."""
    params = json.dumps([_param(kind, key) for key in keys])
    found: dict[Any, _Body] = {_param(kind, key): [] for key in keys}
    for table in kind.tables:
        select = "rowid AS rowid, *" if table.rowid else "*"
        order = f"{table.key}, rowid" if table.rowid else table.key
        cursor = conn.execute(
            f"SELECT {select} FROM {table.name} WHERE {table.key} IN "
            f"(SELECT value FROM json_each(?)) ORDER BY {order}",
            (params,),
        )
        columns = [d[0] for d in cursor.description]
        at = columns.index(table.key, 1 if table.rowid else 0)
        grouped: dict[Any, list[list[Any]]] = {}
        for row in cursor:
            grouped.setdefault(row[at], []).append(list(row))
        for key, rows in grouped.items():
            found[key].append((table.name, columns, rows))
    if kind is DOCUMENT:
        cursor = conn.execute(
            f"SELECT {', '.join(_FTS_COLUMNS)} FROM documents_fts WHERE rowid IN "
            "(SELECT value FROM json_each(?))",
            (params,),
        )
        for row in cursor:
            tables = found.get(row[0])
            if tables:
                tables.append(("documents_fts", list(_FTS_COLUMNS), [list(row)]))
    for key in keys:
        tables = found[_param(kind, key)]
        yield (kind.code, key), (msgspec.msgpack.encode(tables) if tables else None)


def _remove(conn: sqlite3.Connection, unit: UnitKey) -> None:
    kind = _BY_CODE[unit[0]]
    param = _param(kind, unit[1])
    if kind is DOCUMENT:
        conn.execute("DELETE FROM documents_fts WHERE rowid = ?", (param,))
    if kind is CONTENT:  # chunks_fts reads its text through chunk_texts: delete while it is there
        conn.execute(
            "INSERT INTO chunks_fts (chunks_fts, rowid, text, mirror_hash) "
            "SELECT 'delete', id, text, mirror_hash FROM chunk_texts WHERE mirror_hash = ?",
            (param,),
        )
    for table in reversed(kind.tables):
        condition, params = _where(table, param)
        conn.execute(f"DELETE FROM {table.name} WHERE {condition}", params)


class LocalColumns:
    """The columns each table of one file has, looked up once per catch-up."""

    __slots__ = ("_conn", "_known")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._known: dict[str, frozenset[str]] = {}

    def of(self, table: str) -> frozenset[str]:
        if table not in self._known:
            rows = self._conn.execute(f"PRAGMA table_info({table})")
            self._known[table] = frozenset({"rowid", *(str(row[1]) for row in rows)})
        return self._known[table]


def _insert(conn: sqlite3.Connection, unit: UnitKey, body: bytes, local: LocalColumns) -> None:
    tables = msgspec.msgpack.decode(body, type=_Body)
    for name, shipped, rows in tables:
        known = local.of(name)
        kept = [i for i, column in enumerate(shipped) if column in known]
        if len(kept) < len(shipped):  # a newer writer's column this build does not have
            rows = [[row[i] for i in kept] for row in rows]
        columns = [shipped[i] for i in kept]
        quoted = ", ".join(f'"{column}"' for column in columns)
        marks = ", ".join("?" for _ in columns)
        conn.executemany(f"INSERT INTO {name} ({quoted}) VALUES ({marks})", rows)
    if unit[0] == CONTENT.code:
        conn.execute(
            "INSERT INTO chunks_fts (rowid, text, mirror_hash) "
            "SELECT id, text, mirror_hash FROM chunk_texts WHERE mirror_hash = ?",
            (unit[1],),
        )


KIND_ORDER: Final = tuple(kind.code for kind in KINDS)
"""Kind codes in the order bodies are inserted (parents first)."""


@contextlib.contextmanager
def applying(conn: sqlite3.Connection) -> Iterator[None]:
    """Writes of the block (in the caller's transaction) are the team's, not the outbox's."""
    conn.execute("INSERT OR REPLACE INTO team_replica (key, value) VALUES (?, '1')", (APPLYING,))
    yield
    conn.execute("DELETE FROM team_replica WHERE key = ?", (APPLYING,))


def remove(conn: sqlite3.Connection, changed: Iterable[UnitKey]) -> None:
    """Remove the rows of every unit in ``changed`` (inside :func:`applying`), children and
    dependants first, before any new body is inserted: an id or a unique name the writer
    moved from one unit to another then never meets its old holder."""
    order = {code: i for i, code in enumerate(KIND_ORDER)}
    for unit in sorted(changed, key=lambda unit: -order[unit[0]]):
        _remove(conn, unit)


def insert(conn: sqlite3.Connection, unit: UnitKey, body: bytes, local: LocalColumns) -> None:
    """Insert a unit's rows (inside :func:`applying`, after :func:`remove`; kinds in
    :data:`KIND_ORDER`). A column this file lacks (shipped by a writer of a newer
    build, during a rolling upgrade) is left out."""
    _insert(conn, unit, body, local)


def reset(conn: sqlite3.Connection) -> None:
    """Empty every replicated table and the full-text indexes (a cache starting over)."""
    with applying(conn):
        conn.execute("DELETE FROM documents_fts")
        conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all')")
        for kind in reversed(KINDS):
            for table in reversed(kind.tables):
                conn.execute(f"DELETE FROM {table.name} WHERE {table.fixed or 'true'}")


__all__ = [
    "APPLYING",
    "CONTENT",
    "DOCUMENT",
    "DOCUMENT_INDEX",
    "KINDS",
    "KIND_ORDER",
    "REPLICATED_TABLES",
    "UNITS_PER_READ",
    "Kind",
    "LocalColumns",
    "Shipped",
    "Table",
    "UnitKey",
    "all_units",
    "applying",
    "insert",
    "read_unit",
    "read_units",
    "remove",
    "reset",
]
