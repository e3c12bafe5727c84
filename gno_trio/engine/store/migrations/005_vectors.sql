-- Vectors: rows per chunk (mirror_hash, seq) and embedding model, one per
-- embedding window of the chunk (``part``, 0-based; all parts of a chunk are
-- written in one transaction, so a chunk has all its vectors or none).
--
-- embed_models names each model vectors were made with: its key (URI and
-- version), the URI the configuration named, and the dimension of its
-- vectors. Vectors of two models are never compared. ``generation`` grows
-- whenever vectors of the model are deleted, so an in-memory copy of them
-- knows it must reload (new rows are found by their growing id).
--
-- content_vectors holds each vector quantised to int8 (``codes``, one byte
-- per dimension) with the factor that brings it back to unit length
-- (``scale``). An empty ``codes`` marks a chunk with no text to embed: it is
-- done, and never matches a query.

CREATE TABLE IF NOT EXISTS embed_models (
    id          INTEGER PRIMARY KEY,
    model_key   TEXT NOT NULL UNIQUE,
    uri         TEXT NOT NULL,
    version     TEXT NOT NULL,
    dimension   INTEGER NOT NULL,
    generation  INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS content_vectors (
    id           INTEGER PRIMARY KEY,
    model_id     INTEGER NOT NULL REFERENCES embed_models (id) ON DELETE CASCADE,
    mirror_hash  TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    part         INTEGER NOT NULL DEFAULT 0,
    codes        BLOB NOT NULL,
    scale        REAL NOT NULL,
    embedded_at  TEXT NOT NULL,
    UNIQUE (mirror_hash, seq, model_id, part)
);
CREATE INDEX IF NOT EXISTS content_vectors_model ON content_vectors (model_id, id);
