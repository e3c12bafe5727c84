"""SQL that puts a current index back into an older shape, for the upgrade tests.

An index written before migrations 011 (chunks stored as ranges of the
mirror) and 012 (the document index queue) stored each chunk's text and had
no queue; one written before 021 placed its chunks by characters only. The
upgrade tests rebuild those shapes and open them again.
"""

from __future__ import annotations

CHARACTER_RANGE_VIEW = """
    CREATE VIEW chunk_texts AS
        SELECT ch.id AS id, substr(c.markdown, ch.pos + 1, ch.length) AS text,
               ch.mirror_hash AS mirror_hash
        FROM content_chunks ch JOIN content c ON c.mirror_hash = ch.mirror_hash;
"""
"""The chunk texts as 011 to 020 cut them: by character range."""


def undo_chunk_bytes(version: int) -> str:
    """Undo 021: chunks placed by characters only, the index at schema ``version`` (11-20)."""
    return f"""
    DROP VIEW chunk_texts;
    ALTER TABLE content_chunks DROP COLUMN byte_pos;
    ALTER TABLE content_chunks DROP COLUMN byte_length;
    {CHARACTER_RANGE_VIEW}
    UPDATE schema_meta SET value = '{version}' WHERE key = 'version';
"""


UNDO_DOCUMENT_INDEX_QUEUE = """
    DROP TRIGGER doc_index_on_insert;
    DROP TRIGGER doc_index_on_update;
    DROP TRIGGER doc_index_on_delete;
    DROP TRIGGER doc_index_on_tag_insert;
    DROP TRIGGER doc_index_on_tag_delete;
    DROP TABLE doc_index_pending;
    ALTER TABLE documents DROP COLUMN body_pos;
    DELETE FROM schema_meta WHERE key = 'document_index';
"""
"""Undo 012: no queue of document-index changes, no stored body offset."""


def undo_chunk_ranges(chunk_columns: str, tokenize: str) -> str:
    """Undo 011: chunk texts stored again, a chunk index over ``chunk_columns`` of those texts."""
    return f"""
    DROP VIEW chunk_texts;
    ALTER TABLE content_chunks DROP COLUMN byte_pos;
    ALTER TABLE content_chunks DROP COLUMN byte_length;
    ALTER TABLE content_chunks ADD COLUMN text TEXT NOT NULL DEFAULT '';
    UPDATE content_chunks SET text = (
        SELECT substr(c.markdown, content_chunks.pos + 1, content_chunks.length)
        FROM content c WHERE c.mirror_hash = content_chunks.mirror_hash);
    DROP TABLE chunks_fts;
    ALTER TABLE content_chunks DROP COLUMN length;
    CREATE VIRTUAL TABLE chunks_fts USING fts5 (
        {chunk_columns}, content = 'content_chunks', content_rowid = 'id',
        tokenize = '{tokenize}'
    );
    INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild');
"""
