-- The retrieval traces of each index, shared by every gateway: one row per
-- trace (status, times, sizes, the creation record as canonical JSON), the
-- runs, events and judgments it owns, the exports that copied it and a little
-- per-index state (the secret that keys metadata-mode redaction). Deleting a
-- trace deletes what it owns; an export lives while one of its traces does.
CREATE TABLE gno_traces (
    index_name TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('open', 'completed', 'partial', 'failed', 'cancelled')),
    created_at_ms BIGINT NOT NULL CHECK (created_at_ms >= 0),
    updated_at_ms BIGINT NOT NULL,
    expires_at_ms BIGINT NOT NULL,
    byte_size BIGINT NOT NULL CHECK (byte_size >= 0),
    records INTEGER NOT NULL DEFAULT 0,
    creation TEXT NOT NULL,
    PRIMARY KEY (index_name, trace_id)
);
CREATE INDEX gno_traces_newest ON gno_traces (index_name, created_at_ms DESC, trace_id DESC);

CREATE TABLE gno_trace_records (
    index_name TEXT NOT NULL,
    record_id TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    section TEXT NOT NULL CHECK (section IN ('run', 'event', 'judgment')),
    seq INTEGER NOT NULL,
    idempotency_key TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (index_name, record_id),
    UNIQUE (index_name, trace_id, section, idempotency_key),
    FOREIGN KEY (index_name, trace_id) REFERENCES gno_traces (index_name, trace_id)
        ON DELETE CASCADE
);
CREATE INDEX gno_trace_records_order ON gno_trace_records (index_name, trace_id, section, seq);

CREATE TABLE gno_trace_exports (
    index_name TEXT NOT NULL,
    export_id TEXT NOT NULL,
    format TEXT NOT NULL,
    artifact_hash TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    manifest TEXT NOT NULL,
    artifact TEXT NOT NULL,
    PRIMARY KEY (index_name, export_id)
);

CREATE TABLE gno_trace_export_links (
    index_name TEXT NOT NULL,
    export_id TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    PRIMARY KEY (index_name, export_id, trace_id),
    FOREIGN KEY (index_name, export_id) REFERENCES gno_trace_exports (index_name, export_id)
        ON DELETE CASCADE,
    FOREIGN KEY (index_name, trace_id) REFERENCES gno_traces (index_name, trace_id)
        ON DELETE CASCADE
);
CREATE INDEX gno_trace_export_links_trace ON gno_trace_export_links (index_name, trace_id);

CREATE TABLE gno_trace_state (
    index_name TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (index_name, key)
);
