-- The document index gains three searchable fields from the frontmatter:
-- author, tags (every tag the document has) and categories (with the
-- content type), so a search for a note's author or tag finds it. The old
-- index is copied over row by row (its filepath, title and body are kept as
-- they were indexed), the new fields are filled from documents and doc_tags
-- the way engine/store/fulltext.py writes them, and the table takes the old
-- name. Chunks no longer include a document's frontmatter (snippets never
-- show it): existing chunks are redone once after this migration, by
-- engine/ingest/sync.py:finish_upgrades, which clears the flag set here.

CREATE VIRTUAL TABLE documents_fts_010 USING fts5 (
    filepath, title, body, author, tags, categories,
    prefix = '3 4',
    tokenize = '{tokenize}'
);

INSERT INTO documents_fts_010(rowid, filepath, title, body, author, tags, categories)
SELECT f.rowid, f.filepath, f.title, f.body,
       COALESCE(d.author, ''),
       COALESCE((SELECT group_concat(t.tag, ' ') FROM doc_tags t WHERE t.doc_id = d.id), ''),
       trim(COALESCE((SELECT group_concat(j.value, ' ') FROM json_each(d.categories_json) j), '')
            || ' ' || COALESCE(d.content_type, ''))
FROM documents_fts f JOIN documents d ON d.id = f.rowid;

DROP TABLE documents_fts;

ALTER TABLE documents_fts_010 RENAME TO documents_fts;

INSERT OR REPLACE INTO schema_meta(key, value) VALUES ('rechunk_frontmatter', 'pending');
