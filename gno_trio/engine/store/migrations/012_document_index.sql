-- Which index ranks documents, and what the tantivy index still has to learn.
--
-- ``schema_meta.document_index`` says which backend ranks documents:
-- 'fts5' (the documents_fts table) or 'tantivy' (an index directory beside
-- the database, named by ``document_index_generation``). SQLite stays the
-- source of truth: under 'tantivy' every change to a document's searchable
-- columns or tags is queued in doc_index_pending by the triggers below, in
-- the same transaction as the change; the tantivy index records the last
-- queue position it holds, so after a crash between the two commits the
-- next open or sync replays exactly what it missed.

-- Where a document's body (its text after the front matter) starts in its
-- mirror; NULL for documents indexed before this column existed.
ALTER TABLE documents ADD COLUMN body_pos INTEGER;

CREATE TABLE doc_index_pending (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    doc_id  INTEGER NOT NULL UNIQUE
);

INSERT OR IGNORE INTO schema_meta(key, value) VALUES ('document_index', 'fts5');

CREATE TRIGGER doc_index_on_insert AFTER INSERT ON documents
WHEN (SELECT value FROM schema_meta WHERE key = 'document_index') = 'tantivy'
BEGIN
    INSERT OR REPLACE INTO doc_index_pending(doc_id) VALUES (new.id);
END;

CREATE TRIGGER doc_index_on_update AFTER UPDATE OF
    collection, rel_path, uri, title, mirror_hash, body_pos, active, author,
    categories_json, content_type, frontmatter_date, source_mtime, language_hint
ON documents
WHEN (SELECT value FROM schema_meta WHERE key = 'document_index') = 'tantivy'
BEGIN
    INSERT OR REPLACE INTO doc_index_pending(doc_id) VALUES (new.id);
END;

CREATE TRIGGER doc_index_on_delete AFTER DELETE ON documents
WHEN (SELECT value FROM schema_meta WHERE key = 'document_index') = 'tantivy'
BEGIN
    INSERT OR REPLACE INTO doc_index_pending(doc_id) VALUES (old.id);
END;

CREATE TRIGGER doc_index_on_tag_insert AFTER INSERT ON doc_tags
WHEN (SELECT value FROM schema_meta WHERE key = 'document_index') = 'tantivy'
BEGIN
    INSERT OR REPLACE INTO doc_index_pending(doc_id) VALUES (new.doc_id);
END;

CREATE TRIGGER doc_index_on_tag_delete AFTER DELETE ON doc_tags
WHEN (SELECT value FROM schema_meta WHERE key = 'document_index') = 'tantivy'
BEGIN
    INSERT OR REPLACE INTO doc_index_pending(doc_id) VALUES (old.doc_id);
END;
