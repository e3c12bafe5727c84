-- Sentence-window vectors: finer vectors a low-coverage query (asked in
-- another language, or in other words) rescores its best candidates with.
-- A chunk with more sentences than one window holds gets a vector per window
-- of SENTENCE_WINDOW sentences, every SENTENCE_STRIDE sentences (see
-- engine/vectors/sentences.py); ``part`` numbers them from 0. A chunk with
-- no such window gets one row of part -1 with empty codes, so it leaves the
-- sentence backlog. Codes and scale are quantised as content_vectors' are.
--
-- The rows go with their chunk: the trigger drops them when the chunk row
-- is deleted (a changed note's old mirror collected, a re-chunk), and with
-- their model (ON DELETE CASCADE).

CREATE TABLE IF NOT EXISTS sentence_vectors (
    id           INTEGER PRIMARY KEY,
    model_id     INTEGER NOT NULL REFERENCES embed_models (id) ON DELETE CASCADE,
    mirror_hash  TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    part         INTEGER NOT NULL,
    codes        BLOB NOT NULL,
    scale        REAL NOT NULL,
    UNIQUE (mirror_hash, seq, model_id, part)
);

CREATE TRIGGER IF NOT EXISTS sentence_vectors_follow_chunk
AFTER DELETE ON content_chunks
BEGIN
    DELETE FROM sentence_vectors WHERE mirror_hash = old.mirror_hash AND seq = old.seq;
END;
