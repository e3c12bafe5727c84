-- A chunk's text is cut from its mirror by byte offsets where the chunk has
-- them. substr() on text counts characters from the start of the mirror on
-- every read, and a search reads each hit's chunk (its snippet and line):
-- tens of microseconds a hit on a long page, most of that chunk read. On the
-- mirror's bytes it starts where it is told. Chunks written before this
-- version keep their character range until their document is written again;
-- both ranges cut the same text.

DROP VIEW chunk_texts;

ALTER TABLE content_chunks ADD COLUMN byte_pos INTEGER;
ALTER TABLE content_chunks ADD COLUMN byte_length INTEGER;

CREATE VIEW chunk_texts AS
    SELECT ch.id AS id,
           CASE WHEN ch.byte_pos IS NULL THEN substr(c.markdown, ch.pos + 1, ch.length)
                ELSE CAST(substr(CAST(c.markdown AS BLOB), ch.byte_pos + 1, ch.byte_length)
                          AS TEXT)
           END AS text,
           ch.mirror_hash AS mirror_hash
    FROM content_chunks ch JOIN content c ON c.mirror_hash = ch.mirror_hash;
