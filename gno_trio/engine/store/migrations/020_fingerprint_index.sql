-- Everything a full sync compares a file with, in one narrow index: a
-- no-change sync reads every active document's size, mtime, path, error
-- and converter stamp (engine/store/document_rows.py, the fingerprints) in
-- id order. Read from the documents table that is every page of it (about
-- 500 bytes a row: titles, headings, metadata); from this index, an
-- eighth as many pages, read and held in the page cache.

CREATE INDEX IF NOT EXISTS documents_fingerprint ON documents (
    collection, active, id, source_size, source_mtime_ns, rel_path,
    last_error_code, converter_id, converter_version
);
