-- Memory: one row per document of a memory-managed collection saying whether
-- it is a valid fact (and why not) and, when it is, the fact itself (read by
-- recall and remember instead of re-parsing the mirror), plus one row per
-- scope for in-SQL filtering.

CREATE TABLE memory_records (
    document_id      INTEGER PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
    valid            INTEGER NOT NULL,
    record_id        TEXT,
    content_hash     TEXT,
    caller           TEXT,
    session          TEXT,
    created_at       TEXT,
    source           TEXT,
    text             TEXT,
    scopes_json      TEXT NOT NULL DEFAULT '[]',
    supersedes_json  TEXT NOT NULL DEFAULT '[]',
    problem_code     TEXT,
    problem_message  TEXT
);
CREATE INDEX memory_records_hash ON memory_records (content_hash);

CREATE TABLE doc_memory_scopes (
    scope        TEXT NOT NULL,
    document_id  INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    PRIMARY KEY (scope, document_id)
) WITHOUT ROWID;
CREATE INDEX doc_memory_scopes_doc ON doc_memory_scopes (document_id);
