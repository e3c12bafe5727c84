-- The egress audit of each index, shared by every gateway: content-free
-- receipts of egress decisions (the verdict, the action, the destination
-- zone, the content class, the binding policy, the reason and a digest of the
-- policies judged). No query, path, host or content is stored. Rows expire by
-- age and are capped by count and size, per index.
CREATE TABLE gno_egress_receipts (
    index_name TEXT NOT NULL,
    audit_id TEXT NOT NULL,
    decision TEXT NOT NULL CHECK (decision IN ('allow', 'deny')),
    action TEXT NOT NULL,
    destination_zone TEXT NOT NULL,
    content_class TEXT NOT NULL,
    effective_policy TEXT NOT NULL CHECK (effective_policy IN ('local_only', 'lan', 'remote')),
    reason_code TEXT NOT NULL,
    lineage_digest TEXT NOT NULL CHECK (length(lineage_digest) = 64),
    created_at_ms BIGINT NOT NULL CHECK (created_at_ms >= 0),
    expires_at_ms BIGINT NOT NULL CHECK (expires_at_ms > created_at_ms),
    byte_size BIGINT NOT NULL CHECK (byte_size > 0),
    PRIMARY KEY (index_name, audit_id)
);
CREATE INDEX gno_egress_receipts_newest
    ON gno_egress_receipts (index_name, created_at_ms DESC, audit_id DESC);
