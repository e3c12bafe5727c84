-- The chunk index gains the chunk's mirror hash as a second column. A
-- search then ranks the chunks of all its result documents in one statement
-- (text terms AND any of the results' mirror hashes), so FTS5 works out each
-- term's corpus frequency once per search instead of once per hit. Queries
-- on chunk text name the column: text : (...).

DROP TABLE chunks_fts;

CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    text,
    mirror_hash,
    content = 'content_chunks',
    content_rowid = 'id',
    tokenize = '{tokenize}'
);

INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild');
