-- Which gateway holds each 2025-era session's one GET stream, until when:
-- a second stream is refused on every gateway while the claim is renewed,
-- and a claim left by a gateway that died lapses at ``until``. Claims go
-- with the session's row, and are as unlogged as it is.
CREATE UNLOGGED TABLE gno_gateway_streams (
    session_id TEXT PRIMARY KEY REFERENCES gno_gateway_sessions (id) ON DELETE CASCADE,
    claim TEXT NOT NULL,
    until DOUBLE PRECISION NOT NULL
);
