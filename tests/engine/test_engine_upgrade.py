"""An index written by an earlier schema version is upgraded in place on open."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, SearchRequest
from gno_trio.engine.store import database as store
from gno_trio.errors import GnoError
from tests.conftest import write_corpus
from tests.support.old_index import (
    UNDO_DOCUMENT_INDEX_QUEUE,
    undo_chunk_bytes,
    undo_chunk_ranges,
)
from tests.support.shared import MCP_DOCS, required

NOTES = {
    "zoo.md": "# Zoo\n\nThe okapi grazes near the river.\n",
    "farm.md": "# Farm\n\nCows and goats, no okapi here... wait, one okapi.\n",
}


def _as_schema_3(db_path: Path, tokenize: str) -> None:
    """Put an index's chunks back in their version-3 shape.

    As version 3 wrote them: every chunk's text stored in ``content_chunks``
    and a one-column chunk index over those stored texts (no mirror hash),
    and none of the later migrations' tables, columns and triggers.
    """
    conn = sqlite3.connect(db_path)
    try:
        conn.executescript(
            undo_chunk_ranges("text", tokenize)
            + UNDO_DOCUMENT_INDEX_QUEUE
            + f"""
            ALTER TABLE ingest_errors DROP COLUMN unsupported;
            ALTER TABLE ingest_errors DROP COLUMN source_size;
            ALTER TABLE ingest_errors DROP COLUMN source_mtime_ns;
            ALTER TABLE ingest_errors DROP COLUMN policy;
            ALTER TABLE documents DROP COLUMN conversion_warnings_json;
            UPDATE schema_meta SET value = '3' WHERE key = 'version';
            UPDATE schema_meta SET value = '{tokenize}' WHERE key = 'fts_tokenizer';
            """
        )
        conn.commit()
    finally:
        conn.close()


def _chunk_index_sql(db_path: Path) -> str:
    conn = sqlite3.connect(db_path)
    try:
        return str(
            conn.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()[0]
        )
    finally:
        conn.close()


def _snippets(engine: Engine, query: str) -> dict[str, str]:
    found = engine.search.lexical(SearchRequest(query=query, limit=10))
    return {hit["source"]["relPath"]: hit["snippet"] for hit in found["results"]}


PORTER = "porter unicode61 remove_diacritics 2"


def _old_index(tmp_path: Path, tokenize: str = PORTER) -> tuple[Dirs, Path, dict[str, str]]:
    """An indexed corpus put back in schema 3, and its "okapi" snippets before that."""
    dirs = Dirs(tmp_path / "config", tmp_path / "data", tmp_path / "cache")
    corpus = write_corpus(tmp_path / "notes", NOTES)
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(corpus), name="notes")
        engine.sync()
        before = _snippets(engine, "okapi")
        db_path = engine.location.db_path
    _as_schema_3(db_path, tokenize)
    return dirs, db_path, before


def test_a_version_3_index_gains_the_chunk_owner_column_and_keeps_its_snippets(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    dirs, db_path, before = _old_index(tmp_path)
    assert "mirror_hash" not in _chunk_index_sql(db_path)

    with caplog.at_level(logging.WARNING, logger="gno_trio"), Engine.open(dirs=dirs) as engine:
        assert _snippets(engine, "okapi") == before
        assert all("<mark>okapi</mark>" in snippet for snippet in before.values())
    assert "mirror_hash" in _chunk_index_sql(db_path)
    # The user is told why this open takes longer than usual.
    assert any("upgrading the index schema from version 3" in r.message for r in caplog.records)


def test_the_upgrade_keeps_the_tokenizer_the_index_was_built_with(tmp_path: Path) -> None:
    """Both full-text tables must split words alike, whatever the config says now."""
    dirs, db_path, _ = _old_index(tmp_path, "unicode61 remove_diacritics 2")

    with Engine.open(dirs=dirs) as engine:
        assert set(_snippets(engine, "okapi")) == {"zoo.md", "farm.md"}
    sql = _chunk_index_sql(db_path)
    assert "unicode61 remove_diacritics 2" in sql
    assert "porter" not in sql


def _hold_write_lock(db_path: Path, seconds: float) -> threading.Thread:
    """Another process's long write transaction (here: a thread with its own connection)."""
    locked = threading.Event()

    def hold() -> None:
        conn = sqlite3.connect(db_path)
        try:
            conn.execute("BEGIN IMMEDIATE")
            locked.set()
            time.sleep(seconds)
            conn.execute("COMMIT")
        finally:
            conn.close()

    holder = threading.Thread(target=hold)
    holder.start()
    assert locked.wait(5)
    return holder


def test_an_open_waits_for_another_process_upgrading_past_the_busy_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    dirs, db_path, _ = _old_index(tmp_path)
    monkeypatch.setattr(store, "_BUSY_TIMEOUT_MS", 100)
    holder = _hold_write_lock(db_path, 0.8)
    try:
        with caplog.at_level(logging.WARNING, logger="gno_trio"), Engine.open(dirs=dirs) as engine:
            assert set(_snippets(engine, "okapi")) == {"zoo.md", "farm.md"}
    finally:
        holder.join()
    assert any("waiting for another process" in r.message for r in caplog.records)
    assert "mirror_hash" in _chunk_index_sql(db_path)


def test_an_open_that_waits_too_long_fails_clearly_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dirs, db_path, _ = _old_index(tmp_path)
    monkeypatch.setattr(store, "_BUSY_TIMEOUT_MS", 100)
    monkeypatch.setattr(store, "MIGRATION_WAIT_S", 0.3)
    holder = _hold_write_lock(db_path, 1.0)
    try:
        with pytest.raises(GnoError) as info:
            Engine.open(dirs=dirs)
    finally:
        holder.join()
    assert info.value.code == "LOCKED"
    assert "mirror_hash" not in _chunk_index_sql(db_path)  # still the old shape, intact
    with Engine.open(dirs=dirs) as engine:
        assert set(_snippets(engine, "okapi")) == {"zoo.md", "farm.md"}


def _anchors(engine: Engine, query: str) -> list[tuple[object, ...]]:
    found = engine.search.lexical(SearchRequest(query=query, limit=10))
    return [
        (hit["uri"], hit["score"], hit["snippet"], hit.get("line"), hit.get("snippetRange"))
        for hit in found["results"]
    ]


def _tables(db_path: Path) -> set[str]:
    conn = sqlite3.connect(db_path)
    try:
        return {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    finally:
        conn.close()


def _chunk_columns(db_path: Path) -> set[str]:
    conn = sqlite3.connect(db_path)
    try:
        return {row[1] for row in conn.execute("PRAGMA table_info(content_chunks)")}
    finally:
        conn.close()


_MCP_QUERIES = ("roots", "sampling request", '"tool result"', "auth -oauth", "elicit*", "schema")


def _mcp_docs_anchors(tmp_path: Path) -> tuple[Dirs, Path, dict[str, list[tuple[object, ...]]]]:
    """The mcp-docs corpus (344 pages, up to 0.7 MB each, most with non-ASCII text)
    indexed now, and the anchors of a few queries on it."""
    corpus = required(MCP_DOCS, "the mcp-docs fixture")
    dirs = Dirs(tmp_path / "config", tmp_path / "data", tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(corpus), name="mcp")
        engine.sync()
        anchors = {query: _anchors(engine, query) for query in _MCP_QUERIES}
        return dirs, engine.location.db_path, anchors


def test_the_upgrade_drops_stored_chunk_texts_and_keeps_every_snippet_and_line_anchor(
    tmp_path: Path,
) -> None:
    """The mcp-docs corpus, before and after the upgrade."""
    dirs, db_path, before = _mcp_docs_anchors(tmp_path)
    _as_schema_3(db_path, PORTER)
    assert "text" in _chunk_columns(db_path)

    with Engine.open(dirs=dirs) as engine:
        after = {query: _anchors(engine, query) for query in _MCP_QUERIES}
        with engine.connection() as conn:
            for table in ("documents_fts", "chunks_fts"):
                conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
    assert after == before
    assert all(before.values())
    # Chunks are ranges of the mirror now: their texts are not stored again.
    assert "text" not in _chunk_columns(db_path)
    assert "chunk_texts" in _tables(db_path)


def test_an_upgrade_that_finds_a_chunk_unlike_its_text_refuses_and_changes_nothing(
    tmp_path: Path,
) -> None:
    dirs, db_path, _ = _old_index(tmp_path)
    conn = sqlite3.connect(db_path)
    conn.execute("UPDATE content_chunks SET text = 'something else' WHERE id = 1")
    conn.commit()
    conn.close()
    with pytest.raises(GnoError) as info:
        Engine.open(dirs=dirs)
    assert info.value.code == "RUNTIME"
    assert "differ from their place in the text" in info.value.message
    assert "text" in _chunk_columns(db_path)  # the old shape, untouched
    assert "chunk_texts" not in _tables(db_path)


def test_chunks_placed_by_bytes_read_as_those_placed_by_characters_before_the_upgrade(
    tmp_path: Path,
) -> None:
    """The mcp-docs pages anchor every hit alike whether their chunks are cut by byte
    range (written now) or by character range (written before version 21, then
    upgraded)."""
    dirs, db_path, by_bytes = _mcp_docs_anchors(tmp_path)
    conn = sqlite3.connect(db_path)
    try:
        conn.executescript(undo_chunk_bytes(20))
    finally:
        conn.close()
    assert "byte_pos" not in _chunk_columns(db_path)

    with Engine.open(dirs=dirs) as engine:
        by_characters = {query: _anchors(engine, query) for query in _MCP_QUERIES}
        with engine.connection() as conn:
            conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")
    assert by_characters == by_bytes
    assert all(by_bytes.values())
    assert "byte_pos" in _chunk_columns(db_path)


def test_every_shipped_migration_has_its_own_number() -> None:
    # Two scripts sharing a number once left a fresh index without its
    # full-text tables; the loader now refuses such a package outright.
    numbers = [number for number, _ in store._migration_scripts()]
    assert numbers == sorted(set(numbers))
    assert store.latest_version() == numbers[-1]
