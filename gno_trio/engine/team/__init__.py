"""Team mode: the coordination state gateways on many hosts share through PostgreSQL.

What one host cannot keep to itself when several hosts serve one knowledge
base: the write lease (an advisory lock), 2025-era sessions (an UNLOGGED
table), background job records with heartbeats, the configuration (its text and
revision, mirrored into each host's ``index.yml``), the deployment secret
callers are labelled with, and the NOTIFY channels that carry session ends,
cancels and configuration changes between hosts. The embedded default (one
SQLite file, an ``flock`` lease, a per-host session file) is untouched:
nothing here runs unless a ``postgresql://`` store is named.

psycopg 3 is an optional dependency (the ``postgres`` extra); it is imported
only when a store is opened, so the embedded default never needs it.
"""
