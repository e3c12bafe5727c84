"""Each stored vector knows where its window lies in the mirror, and hits are cut by it.

A vector search hit's snippet and line anchor come from its embedding
window. The window's bytes and lines are stored with its vector, so the
hit is cut from the mirror by bytes; vectors stored before that (an
upgraded index) are cut from their chunk's text by characters, and get
their places at the next embed run. Both ways must give the same answer,
on text whose bytes and characters differ (accents, CJK, emoji) deep in a
long document.
"""

from __future__ import annotations

import itertools
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, SearchRequest
from gno_trio.engine.search.semantic import anchors, vector_leg, vector_search
from gno_trio.engine.store.chunks import SqliteChunks
from gno_trio.engine.store.database import write_transaction
from gno_trio.engine.store.vectors import SqliteVectors
from gno_trio.engine.vectors import cache
from gno_trio.engine.vectors.bundled import BUNDLED_URI, BundledEmbedder
from gno_trio.engine.vectors.chunktext import chunk_texts, window_lines
from gno_trio.engine.vectors.embedder import ModelIdentity, window
from gno_trio.engine.vectors.embedding import embed_backlog
from gno_trio.engine.vectors.models import backend_for
from gno_trio.engine.vectors.storage import register_model, store
from tests.conftest import write_corpus
from tests.support.old_index import undo_chunk_bytes

# A long page whose later windows sit behind many multi-byte characters.
LONG = "# Reisetagebuch 旅行日记\n\n" + "".join(
    f"## Tag {i}: Müller fährt über die Brücke 🚲\n\n"
    f"今天我们参观了博物馆和老城区，第{i}天。Straße, Größe, naïve café.\n\n"
    for i in range(80)
)
DOCS = {
    "reise.md": LONG,
    "brot.md": "# Brot backen\n\nDen Teig kneten, über Nacht gehen lassen, dann backen.\n",
    "garden.md": "# Vegetable garden\n\nPlant tomatoes in spring and water them.\n",
}
QUERIES = ("Brücke Fahrrad", "博物馆 老城区", "bread dough", "tomatoes", "café Größe")


def _backend() -> BundledEmbedder:
    found = backend_for(BUNDLED_URI)
    assert isinstance(found, BundledEmbedder)
    return found


def _answers(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    return [vector_search(conn, _backend(), SearchRequest(query=text, limit=3)) for text in QUERIES]


def _anchored(answers: list[dict[str, Any]]) -> list[tuple[object, ...]]:
    return [
        (hit["uri"], hit["snippet"], hit["line"], hit["snippetRange"]["endLine"])
        for answer in answers
        for hit in answer["results"]
    ]


def _placed_rows(conn: sqlite3.Connection) -> tuple[int, int]:
    row = conn.execute("SELECT COUNT(*), COUNT(byte_start) FROM content_vectors").fetchone()
    return int(row[0]), int(row[1])


def test_every_window_is_stored_with_its_place_and_hits_are_cut_by_it(
    engine: Engine, tmp_path: Path
) -> None:
    root = write_corpus(tmp_path / "notes", DOCS)
    engine.collections.add(str(root), name="notes")
    engine.sync()
    with engine.connection() as conn:
        embed_backlog(conn, _backend())
        rows = conn.execute(
            "SELECT v.mirror_hash, v.seq, v.part, v.start_line, v.end_line, "
            "substr(CAST(m.markdown AS BLOB), v.byte_start + 1, v.byte_length) "
            "FROM content_vectors v JOIN content m ON m.mirror_hash = v.mirror_hash"
        ).fetchall()
        texts = chunk_texts(SqliteChunks(conn), [(r[0], r[1]) for r in rows])
        deep = 0
        for mirror, seq, part, start_line, end_line, cut in rows:
            chunk = texts[(mirror, seq)]
            offset, expected = window(chunk.text, part)
            assert bytes(cut).decode("utf-8") == expected
            assert (start_line, end_line) == window_lines(chunk, offset, expected)
            deep += len(expected.encode()) != len(expected) and part > 0
        assert deep > 0  # windows behind multi-byte text were checked
        answers = _answers(conn)
        model_id = int(conn.execute("SELECT id FROM embed_models").fetchone()[0])
        keys = [
            (str(r[0]), int(r[1]), int(r[2]))
            for r in conn.execute("SELECT mirror_hash, seq, part FROM content_vectors")
        ]
        # The byte cut (this model's places) and the character cut (none) agree on every window.
        assert anchors(conn, model_id, keys) == anchors(conn, model_id + 1, keys)
    assert any(hit["uri"].endswith("reise.md") and hit["line"] > 40 for hit in _hits(answers))


def _hits(answers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [hit for answer in answers for hit in answer["results"]]


def _without_places(db_path: Path) -> None:
    """Put the index back in its shape before migration 18 (vectors with no places)."""
    conn = sqlite3.connect(db_path)
    try:
        conn.executescript(
            undo_chunk_bytes(14)
            + """
            DROP INDEX content_vectors_unplaced;
            ALTER TABLE content_vectors DROP COLUMN byte_start;
            ALTER TABLE content_vectors DROP COLUMN byte_length;
            ALTER TABLE content_vectors DROP COLUMN start_line;
            ALTER TABLE content_vectors DROP COLUMN end_line;
            UPDATE schema_meta SET value = '14' WHERE key = 'version';
            """
        )
        conn.commit()
    finally:
        conn.close()


def test_an_index_embedded_before_places_answers_alike_and_gets_them_at_the_next_embed(
    tmp_path: Path,
) -> None:
    dirs = Dirs(tmp_path / "config", tmp_path / "data", tmp_path / "cache")
    root = write_corpus(tmp_path / "notes", DOCS)
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(root), name="notes")
        engine.sync()
        with engine.connection() as conn:
            embed_backlog(conn, _backend())
            before = _answers(conn)
        db_path = engine.location.db_path
    _without_places(db_path)
    with Engine.open(dirs=dirs) as engine, engine.connection() as conn:
        total, placed = _placed_rows(conn)
        assert total > 0 and placed == 0  # upgraded: no vector knows its place yet
        assert _answers(conn) == before
        report = embed_backlog(conn, _backend())
        assert report.embedded == 0  # nothing re-embedded: only the places were filled in
        assert _placed_rows(conn) == (total, total)
        assert _answers(conn) == before
        assert _anchored(before)  # the answers compared do carry anchors


def test_vector_hits_read_only_their_own_documents(engine: Engine, tmp_path: Path) -> None:
    """Finding a hit's document costs the same with 20 documents as with 1,000."""
    steps = []
    for count in (20, 1000):
        root = write_corpus(
            tmp_path / f"notes{count}",
            {f"n{i}.md": f"# Note {i}\n\nA short note numbered {i}.\n" for i in range(count)},
        )
        engine.collections.add(str(root), name=f"notes{count}")
        engine.sync()
        with engine.connection() as conn:
            identity = ModelIdentity("test:random", str(count), 8)
            with write_transaction(conn):
                model = register_model(SqliteVectors(conn), identity, 8)
                mirrors = [
                    str(r[0])
                    for r in conn.execute(
                        "SELECT DISTINCT d.mirror_hash FROM documents d WHERE d.collection = ?",
                        (f"notes{count}",),
                    )
                ]
                vectors = np.random.default_rng(count).standard_normal((len(mirrors), 8))
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                store(
                    SqliteVectors(conn),
                    model,
                    [(m, 0, 0) for m in mirrors],
                    vectors.astype(np.float32),
                )
            matrix = cache.matrix_for(conn, model)
            request = SearchRequest(query="note", limit=5)
            query = matrix.vectors(np.array([3]))[0]
            counted = itertools.count()
            conn.set_progress_handler(lambda: next(counted) and 0, 10)  # noqa: B023
            hits = vector_leg(conn, matrix, query, request, 5)
            conn.set_progress_handler(None, 0)
            assert len(hits) == 5
            steps.append(next(counted))
    assert steps[1] < steps[0] * 3, steps


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    cache._entries.clear()
