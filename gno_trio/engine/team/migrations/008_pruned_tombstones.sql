-- Tombstones (units whose ``body`` is NULL) are kept only for hosts that are
-- behind: the writer drops the old ones now and then. ``pruned_through`` is
-- the highest change whose tombstone was dropped; a host stamped before it
-- may have missed a deletion and starts its copy over from the store.
ALTER TABLE gno_index_state
    ADD COLUMN pruned_through BIGINT NOT NULL DEFAULT 0 CHECK (pruned_through >= 0);
CREATE INDEX gno_index_units_tombstones ON gno_index_units (index_name, change_seq)
    WHERE body IS NULL;
