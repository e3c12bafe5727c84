-- Opt-in local retrieval traces: one row per trace (its identity, status and
-- sizes; the immutable creation record as canonical JSON), the runs, events
-- and judgments it owns, and the exports that copied it. Deleting a trace
-- deletes everything it owns; an export survives only while one of its
-- traces does. A per-index random secret keys the redaction of judgment
-- targets in metadata mode.

CREATE TABLE IF NOT EXISTS retrieval_traces (
    trace_id TEXT PRIMARY KEY,
    status TEXT NOT NULL CHECK (status IN ('open', 'completed', 'partial', 'failed', 'cancelled')),
    created_at_ms INTEGER NOT NULL CHECK (created_at_ms >= 0),
    updated_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    byte_size INTEGER NOT NULL CHECK (byte_size >= 0),
    records INTEGER NOT NULL DEFAULT 0,
    creation TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS retrieval_traces_newest ON retrieval_traces (created_at_ms DESC, trace_id DESC);

CREATE TABLE IF NOT EXISTS retrieval_trace_records (
    record_id TEXT PRIMARY KEY,
    trace_id TEXT NOT NULL REFERENCES retrieval_traces (trace_id) ON DELETE CASCADE,
    section TEXT NOT NULL CHECK (section IN ('run', 'event', 'judgment')),
    seq INTEGER NOT NULL,
    idempotency_key TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    body TEXT NOT NULL,
    UNIQUE (trace_id, section, idempotency_key)
);

CREATE INDEX IF NOT EXISTS retrieval_trace_records_order ON retrieval_trace_records (trace_id, section, seq);

CREATE TABLE IF NOT EXISTS retrieval_trace_exports (
    export_id TEXT PRIMARY KEY,
    format TEXT NOT NULL,
    artifact_hash TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    manifest TEXT NOT NULL,
    artifact TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS retrieval_trace_export_links (
    export_id TEXT NOT NULL REFERENCES retrieval_trace_exports (export_id) ON DELETE CASCADE,
    trace_id TEXT NOT NULL REFERENCES retrieval_traces (trace_id) ON DELETE CASCADE,
    PRIMARY KEY (export_id, trace_id)
);

CREATE INDEX IF NOT EXISTS retrieval_trace_export_links_trace ON retrieval_trace_export_links (trace_id);

CREATE TABLE IF NOT EXISTS retrieval_trace_state (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
