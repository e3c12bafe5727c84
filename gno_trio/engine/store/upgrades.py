"""Data steps of index migrations, run inside the migration's transaction.

Numbered SQL migrations do most of the work; a few upgrades also need
checks or data work a script cannot express. Each step here runs just before
its migration's script, in the same transaction, so a failure rolls the
whole migration back.

Work that needs the engine's code (chunking a text again) is left flagged
by its migration and done at open (``ingest.upkeep.finish_upgrades``); the
statements it runs are at the end of this module.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from gno_trio.errors import GnoError

PrepareStep = Callable[[sqlite3.Connection], None]


def prepare_chunk_ranges(conn: sqlite3.Connection) -> None:
    """Migration 11's step: chunk ranges replace the stored chunk texts.

    Every chunk's stored text must be exactly the range of its mirror that
    ``pos`` and its length name; if one is not, the upgrade stops and rolls
    back (the index stays as it was) rather than index different text.
    """
    conn.execute("ALTER TABLE content_chunks ADD COLUMN length INTEGER NOT NULL DEFAULT 0")
    conn.execute("UPDATE content_chunks SET length = length(text)")
    mismatched = conn.execute(
        "SELECT COUNT(*) FROM content_chunks ch JOIN content c ON c.mirror_hash = ch.mirror_hash "
        "WHERE substr(c.markdown, ch.pos + 1, ch.length) IS NOT ch.text"
    ).fetchone()[0]
    if mismatched:
        raise GnoError(
            "RUNTIME",
            f"Cannot upgrade the index: {mismatched} chunks differ from their place in the "
            "text. The index was left as it was; remove its database file and run "
            "`gno-trio update` to rebuild it.",
        )
    conn.execute("DROP TABLE chunks_fts")
    conn.execute("ALTER TABLE content_chunks DROP COLUMN text")


# Where each embedding window lies in its mirror (see 018_vector_windows.sql).
VECTOR_PLACE_COLUMNS = ("byte_start", "byte_length", "start_line", "end_line")


def prepare_vector_places(conn: sqlite3.Connection) -> None:
    """Migration 18's step: the window place columns of ``content_vectors``.

    Added here, not in the script, because SQL cannot add a column only if it
    is missing, and the table itself is created only if missing (005): an
    index whose recorded version is older may have it in its newest shape.
    """
    have = {str(row[1]) for row in conn.execute("PRAGMA table_info(content_vectors)")}
    for column in VECTOR_PLACE_COLUMNS:
        if column not in have:
            conn.execute(f"ALTER TABLE content_vectors ADD COLUMN {column} INTEGER")


MIGRATION_STEPS: dict[int, PrepareStep] = {11: prepare_chunk_ranges, 18: prepare_vector_places}


_RECHUNK_FLAG = "rechunk_frontmatter"


def rechunk_pending(conn: sqlite3.Connection) -> bool:
    """Whether migration 10's re-chunking of frontmatter mirrors is still to be done."""
    found = conn.execute("SELECT 1 FROM schema_meta WHERE key = ?", (_RECHUNK_FLAG,))
    return found.fetchone() is not None


def rechunk_done(conn: sqlite3.Connection) -> None:
    """Clear the flag, in the transaction that re-chunked."""
    conn.execute("DELETE FROM schema_meta WHERE key = ?", (_RECHUNK_FLAG,))


def frontmatter_mirrors(conn: sqlite3.Connection) -> list[tuple[str, str, bool, str | None]]:
    """``(mirror_hash, markdown, markdown_only, language)`` of each mirror that begins with
    ``---`` (a byte-order mark allowed): whether all its documents are Markdown files, and
    the language of its first chunk."""
    rows = conn.execute(
        "SELECT c.mirror_hash, c.markdown, "
        "(SELECT MIN(d.source_mime = 'text/markdown') FROM documents d "
        " WHERE d.mirror_hash = c.mirror_hash) AS markdown_only, "
        "(SELECT language FROM content_chunks k WHERE k.mirror_hash = c.mirror_hash "
        " ORDER BY seq LIMIT 1) AS language "
        "FROM content c WHERE substr(c.markdown, 1, 3) = '---' "
        "OR substr(c.markdown, 1, 4) = ?",
        ("\ufeff---",),
    ).fetchall()
    return [(str(r[0]), str(r[1]), bool(r[2]), r[3]) for r in rows]


def give_author(conn: sqlite3.Connection, mirror_hash: str, author: str) -> list[int]:
    """Make ``author`` the author of the mirror's documents that have none; their ids."""
    ids = [
        int(row[0])
        for row in conn.execute(
            "SELECT id FROM documents WHERE mirror_hash = ? AND author IS NULL", (mirror_hash,)
        ).fetchall()
    ]
    for doc_id in ids:
        conn.execute("UPDATE documents SET author = ? WHERE id = ?", (author, doc_id))
    return ids


def drop_mirror_vectors(conn: sqlite3.Connection, mirror_hash: str) -> None:
    """Forget the vectors of a mirror's chunks (an index without vectors has none)."""
    has_vectors = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'content_vectors'"
    ).fetchone()
    if has_vectors is not None:
        conn.execute("DELETE FROM content_vectors WHERE mirror_hash = ?", (mirror_hash,))
