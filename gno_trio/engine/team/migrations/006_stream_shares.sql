-- The long-lived streams (2026-07-28 listen, REST events) each caller holds
-- on any gateway, so the per-caller cap counts them all; a share left by a
-- gateway that died lapses at ``until``. As unlogged as the sessions.
CREATE UNLOGGED TABLE gno_gateway_stream_shares (
    claim TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    identity TEXT NOT NULL,
    until DOUBLE PRECISION NOT NULL
);
CREATE INDEX gno_gateway_stream_shares_identity ON gno_gateway_stream_shares (kind, identity);
