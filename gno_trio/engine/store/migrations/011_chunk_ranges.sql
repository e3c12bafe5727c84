-- Chunk texts are no longer stored: a chunk is a character range of its
-- document's text mirror (``pos``, ``length``), and the chunk index reads
-- the text through a view over those ranges (external content). Chunks
-- overlap, so their stored texts were more than a second copy of every
-- mirror. Chunk identity (mirror_hash, seq) and chunk ids are unchanged.
--
-- Before this script runs, the upgrade step (engine/store/upgrades.py) adds
-- ``content_chunks.length``, checks that every chunk's stored text is
-- exactly its range of the mirror, and drops the old chunk index and then
-- the chunk text column.

-- Each chunk's text, cut from its mirror.
CREATE VIEW chunk_texts AS
    SELECT ch.id AS id, substr(c.markdown, ch.pos + 1, ch.length) AS text,
           ch.mirror_hash AS mirror_hash
    FROM content_chunks ch JOIN content c ON c.mirror_hash = ch.mirror_hash;

CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    text,
    mirror_hash,
    content = 'chunk_texts',
    content_rowid = 'id',
    tokenize = '{tokenize}'
);

INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild');
