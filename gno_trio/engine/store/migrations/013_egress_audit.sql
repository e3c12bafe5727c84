-- (Idempotent: an index rewound to an older version re-applies it safely.)
-- Content-free receipts of egress decisions: what kind of content was judged
-- for which action and destination, the verdict and the reason, and a digest
-- of the collection policies it was judged under. No query, path, host or
-- content is ever stored. Rows expire by age and are capped by count and size.

CREATE TABLE IF NOT EXISTS egress_audit_receipts (
    audit_id TEXT PRIMARY KEY,
    decision TEXT NOT NULL CHECK (decision IN ('allow', 'deny')),
    action TEXT NOT NULL,
    destination_zone TEXT NOT NULL,
    content_class TEXT NOT NULL,
    effective_policy TEXT NOT NULL CHECK (effective_policy IN ('local_only', 'lan', 'remote')),
    reason_code TEXT NOT NULL,
    lineage_digest TEXT NOT NULL CHECK (length(lineage_digest) = 64),
    created_at_ms INTEGER NOT NULL CHECK (created_at_ms >= 0),
    expires_at_ms INTEGER NOT NULL CHECK (expires_at_ms > created_at_ms),
    byte_size INTEGER NOT NULL CHECK (byte_size > 0)
);

CREATE INDEX IF NOT EXISTS egress_audit_receipts_newest ON egress_audit_receipts (created_at_ms DESC, audit_id DESC);
