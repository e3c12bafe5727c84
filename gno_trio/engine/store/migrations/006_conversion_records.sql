-- Document conversion (PDF, Office, HTML, legacy encodings).
--
-- ingest_errors becomes the record of every file the walker saw but the
-- index does not hold: failures (CONVERSION_FAILED, CONVERSION_TIMEOUT,
-- READ_ERROR, a BINARY_FILE note...) and files skipped for their type
-- (unsupported = 1: UNSUPPORTED_TYPE, or BINARY_FILE of an unknown type).
-- The size, mtime and policy of the file when it was judged let a re-sync
-- skip an unchanged file with a stat, as it does for indexed ones; a change
-- of limits or converters (the policy fingerprint) judges it again.
ALTER TABLE ingest_errors ADD COLUMN unsupported INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ingest_errors ADD COLUMN source_size INTEGER;
ALTER TABLE ingest_errors ADD COLUMN source_mtime_ns INTEGER;
ALTER TABLE ingest_errors ADD COLUMN policy TEXT;

-- GNO's conversion.warnings ({code, message} items) of each document.
ALTER TABLE documents ADD COLUMN conversion_warnings_json TEXT NOT NULL DEFAULT '[]';
