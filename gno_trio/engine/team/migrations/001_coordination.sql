-- The coordination plane of team mode: what gateways on several hosts share.

-- 2025-era sessions. UNLOGGED: after a crash or a failover the rows are gone
-- and clients get 404 and initialize again, as the protocol asks of them.
CREATE UNLOGGED TABLE gno_gateway_sessions (
    id TEXT PRIMARY KEY,
    identity TEXT NOT NULL,
    protocol TEXT,
    last_seen DOUBLE PRECISION NOT NULL
);
CREATE INDEX gno_gateway_sessions_identity ON gno_gateway_sessions (identity);

-- One row per deployment: the key every gateway labels callers with.
CREATE TABLE gno_deployment (
    id SMALLINT PRIMARY KEY CHECK (id = 1),
    caller_key BYTEA NOT NULL CHECK (length(caller_key) = 32),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- The configuration of each index (index.yml text) and its revision, which is
-- also the authorization epoch: a change bumps it on every host at once.
CREATE TABLE gno_config (
    index_name TEXT PRIMARY KEY,
    body TEXT NOT NULL,
    revision BIGINT NOT NULL CHECK (revision > 0),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Background jobs: one running job per deployment (the partial unique index),
-- visible from every host; a job whose owner stops beating is failed. ``view``
-- is the job's status object as gno_job_status answers it.
CREATE TABLE gno_jobs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    owner TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('running', 'completed', 'failed')),
    heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    completed_at TIMESTAMPTZ,
    view JSONB NOT NULL
);
CREATE UNIQUE INDEX gno_jobs_one_running ON gno_jobs ((true)) WHERE state = 'running';
CREATE INDEX gno_jobs_completed ON gno_jobs (completed_at) WHERE state <> 'running';
