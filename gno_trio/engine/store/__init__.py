"""The SQLite file: connections and pool, numbered migrations, the change journal,
the write lease, and the one helper that writes files atomically.
"""
