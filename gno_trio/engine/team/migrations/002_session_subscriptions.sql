-- The documents each 2025-era session subscribed to (with subscriptions on):
-- whichever gateway serves the session's GET stream reads them, so a
-- subscription made through any gateway is heard there. They go with the
-- session's row, and are as unlogged as it is.
CREATE UNLOGGED TABLE gno_gateway_subscriptions (
    session_id TEXT NOT NULL REFERENCES gno_gateway_sessions (id) ON DELETE CASCADE,
    uri TEXT NOT NULL,
    PRIMARY KEY (session_id, uri)
);
