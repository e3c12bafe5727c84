"""Where chunk vectors are kept: the statements over models and vector rows, behind one protocol.

The rules of vectors (quantisation, a model's dimension holding, what an
embed run writes and reports, what clearing a collection keeps) live in
:mod:`gno_trio.engine.vectors`; this module only stores and counts rows.
:class:`VectorStore` is what those rules ask of any store;
:class:`SqliteVectors` answers it on one SQLite connection, inside the
transaction of the call that holds it. A model's ``generation`` moves
whenever any of its rows go, so a copy of its rows held in memory knows to
reload.

Why in the index's own file and not an index file beside it: rows in the
same file are written in the same transactions as everything else, so an
interrupted embed leaves whole batches or nothing and a reader never sees
half a batch.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from gno_trio.engine.store.database import database_path


@dataclass(frozen=True, slots=True)
class ModelRow:
    """A stored embedding model: its id in the index, identity, dimension and generation."""

    id: int
    key: str
    uri: str
    dimension: int
    generation: int


class VectorRow(NamedTuple):
    """One stored window vector: int8 ``codes`` (empty for a chunk with no text), the
    ``scale`` that restores unit length, and where the window lies (None: not known)."""

    model_id: int
    mirror_hash: str
    seq: int
    part: int
    codes: bytes
    scale: float
    embedded_at: str
    byte_start: int | None
    byte_length: int | None
    start_line: int | None
    end_line: int | None


Place = tuple[int, int, int, int]
"""``(byte_start, byte_length, start_line, end_line)`` of a window in its mirror."""
LoadedRow = tuple[int, str, int, int, bytes, float]
"""``(id, mirror_hash, seq, part, codes, scale)`` of a stored vector, as search loads it."""
PlacedRow = tuple[str, int, int, int, int, str | None, bytes]
"""``(mirror_hash, seq, part, start_line, end_line, language, window bytes)``."""


class VectorStore(Protocol):
    """The embedding models and chunk vectors of one index."""

    def model(self, key: str) -> ModelRow | None: ...

    def add_model(
        self, key: str, uri: str, version: str, dimension: int, created_at: str
    ) -> ModelRow:
        """Register a model (it must not exist yet) and give its row."""
        ...

    def add_vectors(self, rows: Sequence[VectorRow]) -> int:
        """Insert rows; a window already stored, or whose chunk no longer exists, is
        skipped. Returns how many rows were written."""
        ...

    def unplaced(
        self, model_id: int, after_id: int, limit: int
    ) -> list[tuple[int, str, int, int, bool]]:
        """Rows of ``model_id`` stored without a place, by id:
        ``(id, mirror, seq, part, blank)``."""
        ...

    def set_places(self, places: Sequence[tuple[int, Place]]) -> None:
        """Record the place of each ``(row id, place)``."""
        ...

    def bump_generation(self, model_ids: Iterable[int]) -> None: ...

    def backlog_count(self, model_id: int | None, collections: Sequence[str] | None) -> int:
        """Chunks of active documents (of ``collections``) with no vector of the model
        (all of them, with no model)."""
        ...

    def backlog_documents(self, model_id: int | None, collections: Sequence[str] | None) -> int:
        """Active documents with at least one chunk that has no vector of the model."""
        ...

    def embedded_count(self, model_id: int | None, collections: Sequence[str] | None) -> int:
        """Chunks of active documents that have a vector of the model (none, with no model)."""
        ...

    def backlog_page(
        self,
        model_id: int | None,
        collections: Sequence[str] | None,
        after_chunk_id: int,
        limit: int,
    ) -> list[tuple[int, str, int, str | None]]:
        """The next chunks needing a vector, by chunk id: ``(id, mirror_hash, seq, title)``."""
        ...

    def delete_orphans(self) -> int:
        """Drop vectors whose chunk no longer exists; their models' generations move."""
        ...

    def database_file(self) -> str:
        """The file of the index (what a copy of its rows held in memory is kept under)."""
        ...

    def has_any(self) -> bool:
        """Whether any vector is stored, of any model."""
        ...

    def generation(self, model_id: int) -> int | None: ...

    def stamp(self, model_id: int) -> tuple[int, int] | None:
        """The model's generation and its newest row id (0 for none), in one read;
        None for a model no longer stored."""
        ...

    def rows_after(self, model_id: int, after_id: int, limit: int) -> list[LoadedRow]:
        """The model's rows by id after ``after_id``, at most ``limit``."""
        ...

    def placed(self, model_id: int, keys: Sequence[tuple[str, int, int]]) -> list[PlacedRow]:
        """The windows of ``keys`` whose rows carry their place, with their bytes cut
        from the mirror."""
        ...

    def clear_collection(
        self, collection: str, *, keep_model: str | None, all_models: bool
    ) -> tuple[int, list[str], int]:
        """Delete the vectors of ``collection``'s contents (of every model, or of models
        other than ``keep_model``), keeping those an active document of another collection
        shares: (deleted rows, the models they were of, kept shared rows)."""
        ...


_NOT_EMBEDDED = (
    "AND NOT EXISTS (SELECT 1 FROM content_vectors v WHERE v.mirror_hash = c.mirror_hash "
    "AND v.seq = c.seq AND v.model_id = ?)"
)
# Active chunks of some collections.
_ACTIVE_MIRRORS = "SELECT DISTINCT mirror_hash FROM documents WHERE active = 1 {where}"


def _collection_filter(collections: Sequence[str] | None) -> tuple[str, list[object]]:
    if not collections:
        return "", []
    marks = ", ".join("?" for _ in collections)
    return f"AND collection IN ({marks})", list(collections)


class SqliteVectors:
    """:class:`VectorStore` on one SQLite connection (``embed_models``, ``content_vectors``)."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def model(self, key: str) -> ModelRow | None:
        row = self._conn.execute(
            "SELECT id, model_key, uri, dimension, generation FROM embed_models "
            "WHERE model_key = ?",
            (key,),
        ).fetchone()
        if row is None:
            return None
        return ModelRow(int(row[0]), str(row[1]), str(row[2]), int(row[3]), int(row[4]))

    def add_model(
        self, key: str, uri: str, version: str, dimension: int, created_at: str
    ) -> ModelRow:
        self._conn.execute(
            "INSERT INTO embed_models (model_key, uri, version, dimension, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (key, uri, version, dimension, created_at),
        )
        added = self.model(key)
        assert added is not None
        return added

    def add_vectors(self, rows: Sequence[VectorRow]) -> int:
        before = self._conn.total_changes
        self._conn.executemany(
            "INSERT OR IGNORE INTO content_vectors (model_id, mirror_hash, seq, part, codes, "
            "scale, embedded_at, byte_start, byte_length, start_line, end_line) "
            "SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11 WHERE EXISTS "
            "(SELECT 1 FROM content_chunks WHERE mirror_hash = ?2 AND seq = ?3)",
            rows,
        )
        return self._conn.total_changes - before

    def unplaced(
        self, model_id: int, after_id: int, limit: int
    ) -> list[tuple[int, str, int, int, bool]]:
        return [
            (int(r[0]), str(r[1]), int(r[2]), int(r[3]), not r[4])
            for r in self._conn.execute(
                "SELECT id, mirror_hash, seq, part, length(codes) FROM content_vectors "
                "WHERE model_id = ? AND byte_start IS NULL AND id > ? ORDER BY id LIMIT ?",
                (model_id, after_id, limit),
            )
        ]

    def set_places(self, places: Sequence[tuple[int, Place]]) -> None:
        self._conn.executemany(
            "UPDATE content_vectors SET byte_start = ?, byte_length = ?, start_line = ?, "
            "end_line = ? WHERE id = ?",
            [(*place, row_id) for row_id, place in places],
        )

    def bump_generation(self, model_ids: Iterable[int]) -> None:
        for model_id in set(model_ids):
            self._conn.execute(
                "UPDATE embed_models SET generation = generation + 1 WHERE id = ?", (model_id,)
            )

    def backlog_count(self, model_id: int | None, collections: Sequence[str] | None) -> int:
        where, params = _collection_filter(collections)
        mirrors = _ACTIVE_MIRRORS.format(where=where)
        sql = f"SELECT COUNT(*) FROM content_chunks c WHERE c.mirror_hash IN ({mirrors})"
        if model_id is None:
            return int(self._conn.execute(sql, params).fetchone()[0])
        sql = f"{sql} {_NOT_EMBEDDED}"
        return int(self._conn.execute(sql, [*params, model_id]).fetchone()[0])

    def backlog_documents(self, model_id: int | None, collections: Sequence[str] | None) -> int:
        where, params = _collection_filter(collections)
        missing = "" if model_id is None else _NOT_EMBEDDED
        sql = (
            f"SELECT COUNT(*) FROM documents WHERE active = 1 {where} AND EXISTS "
            f"(SELECT 1 FROM content_chunks c WHERE c.mirror_hash = documents.mirror_hash "
            f"{missing})"
        )
        extra = [] if model_id is None else [model_id]
        return int(self._conn.execute(sql, [*params, *extra]).fetchone()[0])

    def embedded_count(self, model_id: int | None, collections: Sequence[str] | None) -> int:
        if model_id is None:
            return 0
        where, params = _collection_filter(collections)
        mirrors = _ACTIVE_MIRRORS.format(where=where)
        sql = (
            f"SELECT COUNT(*) FROM content_chunks c WHERE c.mirror_hash IN ({mirrors}) "
            f"AND EXISTS (SELECT 1 FROM content_vectors v WHERE v.mirror_hash = c.mirror_hash "
            f"AND v.seq = c.seq AND v.model_id = ?)"
        )
        return int(self._conn.execute(sql, [*params, model_id]).fetchone()[0])

    def backlog_page(
        self,
        model_id: int | None,
        collections: Sequence[str] | None,
        after_chunk_id: int,
        limit: int,
    ) -> list[tuple[int, str, int, str | None]]:
        where, params = _collection_filter(collections)
        mirrors = _ACTIVE_MIRRORS.format(where=where)
        missing = _NOT_EMBEDDED if model_id is not None else ""
        sql = (
            f"SELECT c.id, c.mirror_hash, c.seq, (SELECT d.title FROM documents d WHERE "
            f"d.mirror_hash = c.mirror_hash AND d.active = 1 ORDER BY d.id LIMIT 1) "
            f"FROM content_chunks c WHERE c.id > ? AND c.mirror_hash IN ({mirrors}) {missing} "
            f"ORDER BY c.id LIMIT ?"
        )
        args: list[object] = [after_chunk_id, *params]
        if model_id is not None:
            args.append(model_id)
        args.append(limit)
        return [(int(r[0]), str(r[1]), int(r[2]), r[3]) for r in self._conn.execute(sql, args)]

    def delete_orphans(self) -> int:
        affected = [
            int(r[0])
            for r in self._conn.execute(
                "SELECT DISTINCT model_id FROM content_vectors v WHERE NOT EXISTS "
                "(SELECT 1 FROM content_chunks c WHERE c.mirror_hash = v.mirror_hash "
                "AND c.seq = v.seq)"
            )
        ]
        if not affected:
            return 0
        cursor = self._conn.execute(
            "DELETE FROM content_vectors WHERE NOT EXISTS (SELECT 1 FROM content_chunks c "
            "WHERE c.mirror_hash = content_vectors.mirror_hash AND c.seq = content_vectors.seq)"
        )
        self.bump_generation(affected)
        return int(cursor.rowcount)

    def database_file(self) -> str:
        return database_path(self._conn)

    def has_any(self) -> bool:
        return self._conn.execute("SELECT 1 FROM content_vectors LIMIT 1").fetchone() is not None

    def generation(self, model_id: int) -> int | None:
        row = self._conn.execute(
            "SELECT generation FROM embed_models WHERE id = ?", (model_id,)
        ).fetchone()
        return int(row[0]) if row is not None else None

    def stamp(self, model_id: int) -> tuple[int, int] | None:
        row = self._conn.execute(
            "SELECT generation, (SELECT MAX(id) FROM content_vectors WHERE model_id = ?1) "
            "FROM embed_models WHERE id = ?1",
            (model_id,),
        ).fetchone()
        return None if row is None else (int(row[0]), int(row[1] or 0))

    def rows_after(self, model_id: int, after_id: int, limit: int) -> list[LoadedRow]:
        page = self._conn.execute(
            "SELECT id, mirror_hash, seq, part, codes, scale FROM content_vectors "
            "WHERE model_id = ? AND id > ? ORDER BY id LIMIT ?",
            (model_id, after_id, limit),
        ).fetchall()
        return [
            (int(r[0]), str(r[1]), int(r[2]), int(r[3]), bytes(r[4]), float(r[5])) for r in page
        ]

    def placed(self, model_id: int, keys: Sequence[tuple[str, int, int]]) -> list[PlacedRow]:
        if not keys:
            return []
        rows = self._conn.execute(
            "SELECT v.mirror_hash, v.seq, v.part, v.start_line, v.end_line, c.language, "
            "substr(CAST(m.markdown AS BLOB), v.byte_start + 1, v.byte_length) "
            # CROSS JOIN: SQLite would otherwise walk all of the model's rows by model_id.
            "FROM json_each(?) k CROSS JOIN content_vectors v "
            "ON v.mirror_hash = json_extract(k.value, '$[0]') "
            "AND v.seq = json_extract(k.value, '$[1]') AND v.model_id = ? "
            "AND v.part = json_extract(k.value, '$[2]') "
            "JOIN content_chunks c ON c.mirror_hash = v.mirror_hash AND c.seq = v.seq "
            "JOIN content m ON m.mirror_hash = v.mirror_hash "
            "WHERE v.byte_start IS NOT NULL",
            (json.dumps([list(key) for key in keys]), model_id),
        )
        return [
            (str(r[0]), int(r[1]), int(r[2]), int(r[3]), int(r[4]), r[5], bytes(r[6])) for r in rows
        ]

    def clear_collection(
        self, collection: str, *, keep_model: str | None, all_models: bool
    ) -> tuple[int, list[str], int]:
        conn = self._conn
        own = "SELECT DISTINCT mirror_hash FROM documents WHERE collection = ?"
        shared = (
            "SELECT DISTINCT mirror_hash FROM documents WHERE collection != ? AND active = 1 "
            "AND mirror_hash IS NOT NULL"
        )
        stale = "" if all_models else "AND m.model_key IS NOT ?"
        base = (
            f"FROM content_vectors v JOIN embed_models m ON m.id = v.model_id "
            f"WHERE v.mirror_hash IN ({own}) {stale}"
        )
        params: list[object] = [collection] if all_models else [collection, keep_model]
        protected = int(
            conn.execute(
                f"SELECT COUNT(*) {base} AND v.mirror_hash IN ({shared})", [*params, collection]
            ).fetchone()[0]
        )
        doomed = conn.execute(
            f"SELECT v.id, m.id, m.model_key {base} AND v.mirror_hash NOT IN ({shared})",
            [*params, collection],
        ).fetchall()
        ids = [int(r[0]) for r in doomed]
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ", ".join("?" for _ in part)
            conn.execute(f"DELETE FROM content_vectors WHERE id IN ({marks})", part)
        self.bump_generation(int(r[1]) for r in doomed)
        return len(ids), sorted({str(r[2]) for r in doomed}), protected


__all__ = [
    "LoadedRow",
    "ModelRow",
    "Place",
    "PlacedRow",
    "SqliteVectors",
    "VectorRow",
    "VectorStore",
]
