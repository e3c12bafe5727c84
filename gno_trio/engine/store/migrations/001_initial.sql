-- Initial schema: collections, documents, content mirror, chunks, FTS,
-- tags, links, typed edges and the metadata-only change journal.

CREATE TABLE collections (
    name            TEXT PRIMARY KEY,
    path            TEXT NOT NULL,
    pattern         TEXT NOT NULL DEFAULT '**/*',
    include_json    TEXT NOT NULL DEFAULT '[]',
    exclude_json    TEXT NOT NULL DEFAULT '[]',
    language_hint   TEXT,
    egress_policy   TEXT NOT NULL DEFAULT 'local_only',
    memory_managed  INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT NOT NULL,
    last_synced_at  TEXT
);

CREATE TABLE documents (
    id                  INTEGER PRIMARY KEY,
    collection          TEXT NOT NULL,
    rel_path            TEXT NOT NULL,
    docid               TEXT NOT NULL,
    uri                 TEXT NOT NULL,
    title               TEXT,
    source_hash         TEXT NOT NULL,
    source_mime         TEXT NOT NULL,
    source_ext          TEXT NOT NULL,
    source_size         INTEGER NOT NULL,
    source_mtime        TEXT NOT NULL,
    source_mtime_ns     INTEGER NOT NULL DEFAULT 0,
    mirror_hash         TEXT,
    converter_id        TEXT,
    converter_version   TEXT,
    language            TEXT,
    language_hint       TEXT,
    content_type        TEXT,
    author              TEXT,
    categories_json     TEXT NOT NULL DEFAULT '[]',
    frontmatter_date    TEXT,
    frontmatter_error   TEXT,
    headings_json       TEXT NOT NULL DEFAULT '[]',
    active              INTEGER NOT NULL DEFAULT 1,
    last_error_code     TEXT,
    last_error_message  TEXT,
    last_error_at       TEXT,
    indexed_at          TEXT NOT NULL,
    UNIQUE (collection, rel_path)
);
CREATE INDEX documents_docid ON documents (docid);
CREATE INDEX documents_uri ON documents (uri);
CREATE INDEX documents_mirror ON documents (mirror_hash);
CREATE INDEX documents_active ON documents (active, collection);

CREATE TABLE content (
    mirror_hash  TEXT PRIMARY KEY,
    markdown     TEXT NOT NULL,
    line_count   INTEGER NOT NULL
);

CREATE TABLE content_chunks (
    id           INTEGER PRIMARY KEY,
    mirror_hash  TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    pos          INTEGER NOT NULL,
    text         TEXT NOT NULL,
    start_line   INTEGER NOT NULL,
    end_line     INTEGER NOT NULL,
    language     TEXT,
    token_count  INTEGER NOT NULL,
    UNIQUE (mirror_hash, seq)
);

CREATE TABLE doc_tags (
    doc_id  INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    tag     TEXT NOT NULL COLLATE NOCASE,
    source  TEXT NOT NULL DEFAULT 'frontmatter',
    PRIMARY KEY (doc_id, tag)
) WITHOUT ROWID;
CREATE INDEX doc_tags_tag ON doc_tags (tag);

CREATE TABLE doc_links (
    doc_id      INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    target      TEXT NOT NULL,
    collection  TEXT,
    heading     TEXT,
    display     TEXT,
    line        INTEGER NOT NULL,
    col         INTEGER NOT NULL
);
CREATE INDEX doc_links_doc ON doc_links (doc_id);
CREATE INDEX doc_links_target ON doc_links (target COLLATE NOCASE);

CREATE TABLE doc_edges (
    src_doc_id  INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    edge_type   TEXT NOT NULL,
    target      TEXT NOT NULL,
    confidence  TEXT NOT NULL DEFAULT 'parsed',
    source      TEXT NOT NULL DEFAULT 'frontmatter-relation'
);
CREATE INDEX doc_edges_src ON doc_edges (src_doc_id);
CREATE INDEX doc_edges_target ON doc_edges (edge_type, target);

CREATE TABLE ingest_errors (
    collection  TEXT NOT NULL,
    rel_path    TEXT NOT NULL,
    code        TEXT NOT NULL,
    message     TEXT NOT NULL,
    at          TEXT NOT NULL,
    PRIMARY KEY (collection, rel_path)
) WITHOUT ROWID;

CREATE TABLE document_changes (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    kind             TEXT NOT NULL,
    collection       TEXT NOT NULL,
    observed_at      TEXT NOT NULL,
    previous_json    TEXT,
    current_json     TEXT,
    delta_json       TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX document_changes_coll ON document_changes (collection, id);
CREATE INDEX document_changes_time ON document_changes (observed_at);
