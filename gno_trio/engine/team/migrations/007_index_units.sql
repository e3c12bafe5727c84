-- The data plane of team mode: each index's rows, shipped by the lease holder
-- as units and caught up by every host into its local index file.
--
-- ``change_seq`` is the index's commit-ordered change sequence: only the
-- holder of the write lease bumps it, once per shipped transaction, so it is
-- gap-free and every host can say "I hold everything up to n". ``epoch``
-- names this incarnation of the index's rows: a host whose local copy was
-- made from another database (or before the rows were dropped) starts over.
CREATE TABLE gno_index_state (
    index_name TEXT PRIMARY KEY,
    epoch TEXT NOT NULL,
    change_seq BIGINT NOT NULL DEFAULT 0 CHECK (change_seq >= 0)
);

-- One row per unit of replication: a document with its tags, links, edges and
-- memory record; a content mirror with its chunks and vectors; a collection,
-- an embedding model, an ingest error or a journal entry. ``body`` holds the
-- unit's rows as the writer's index holds them (msgpack: table -> columns,
-- rows), so ids, texts and int8 codes arrive unchanged; NULL is a tombstone
-- (the unit was deleted at ``change_seq``).
CREATE TABLE gno_index_units (
    index_name TEXT NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    change_seq BIGINT NOT NULL,
    body BYTEA,
    PRIMARY KEY (index_name, kind, key)
);
CREATE INDEX gno_index_units_seq ON gno_index_units (index_name, change_seq);
