-- Where each embedding window lies in its document's mirror, stored with its
-- vector: its first byte (0-based) and byte length in the mirror's UTF-8
-- text, and its first and last line (content_vectors.byte_start,
-- byte_length, start_line, end_line: added by this migration's step in
-- engine/store/upgrades.py, just before this script). A search hit's
-- snippet and line anchor are then cut by bytes, where cutting by characters
-- makes SQLite count the mirror's characters from its start (slow deep in a
-- long page).
--
-- Rows written before this migration have no place (NULL): they are cut by
-- characters as before, and the next embed run fills their places in. The
-- partial index finds them without reading the rows that have one. A blank
-- chunk's empty row gets the place 0, 0, 0, 0 (it is never a hit).

CREATE INDEX IF NOT EXISTS content_vectors_unplaced ON content_vectors (model_id, id)
    WHERE byte_start IS NULL;
