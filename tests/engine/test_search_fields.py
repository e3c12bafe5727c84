"""Frontmatter is metadata: searchable as fields, never shown as a snippet.

Author, tags (frontmatter, inline and user-added) and categories (with the
content type) are fields of the document index since migration 010; chunks,
and so snippets and line anchors, cover the text after the frontmatter. An
index written before 010 is upgraded in place on open: its fields are
filled, its chunks redone once, and it searches like a new one.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, Scope, SearchRequest
from gno_trio.engine.ingest.chunker import chunk_text
from tests.conftest import write_corpus
from tests.support.cli_support import Cli
from tests.support.old_index import UNDO_DOCUMENT_INDEX_QUEUE, undo_chunk_ranges

NOTES = {
    "standup.md": (
        "---\n"
        "title: Bob sync\n"
        "author: alice\n"
        "tags:\n"
        "  - meeting\n"
        "categories: [minutes]\n"
        "type: decision\n"
        "---\n"
        "We agreed to ship the okapi feature.\n"
        "Follow-up next week.\n"
    ),
    "plain.md": "# Plain\n\nNothing about alice here except this line.\n",
    "config.yaml": "---\nkey: value\nmeeting: never\n---\n",
}


def _search(cli: Cli, *args: str) -> list[dict[str, object]]:
    hits: list[dict[str, object]] = cli.json("search", *args)["results"]
    return hits


def test_author_tags_and_categories_are_searchable(cli: Cli) -> None:
    notes = write_corpus(cli.home / "notes", NOTES)
    cli.run("init", str(notes), "--name", "notes")
    cli.run("update")
    by_author = _search(cli, "alice")
    assert by_author[0]["uri"] == "gno://notes/standup.md"
    assert [hit["uri"] for hit in _search(cli, "minutes")] == ["gno://notes/standup.md"]
    assert [hit["uri"] for hit in _search(cli, "decision")] == ["gno://notes/standup.md"]
    tagged = {hit["uri"] for hit in _search(cli, "meeting")}
    assert "gno://notes/standup.md" in tagged


def test_snippets_never_show_frontmatter_and_lines_still_match(cli: Cli) -> None:
    notes = write_corpus(cli.home / "notes", NOTES)
    cli.run("init", str(notes), "--name", "notes")
    cli.run("update")
    for query in ("alice", "okapi", "meeting", "Bob"):
        for hit in _search(cli, query, "-c", "notes"):
            if hit["uri"] != "gno://notes/standup.md":
                continue
            assert "---" not in str(hit["snippet"]) and "author:" not in str(hit["snippet"])
    (okapi,) = _search(cli, "okapi")
    assert okapi["line"] == 9 and okapi["snippetRange"]["startLine"] == 9
    line = cli.json("get", f"{okapi['uri']}:{okapi['line']}", "-l", "1")["content"]
    assert line == "We agreed to ship the okapi feature."
    # A YAML file's "---" is content, not frontmatter: it stays in its chunk.
    yaml_hit = _search(cli, "never")
    assert yaml_hit and "---" in str(yaml_hit[0]["snippet"])


def test_user_tags_become_searchable(cli: Cli) -> None:
    notes = write_corpus(cli.home / "notes", NOTES)
    cli.run("init", str(notes), "--name", "notes")
    cli.run("update")
    assert _search(cli, "quarterly") == []
    cli.run("tags", "add", "notes/plain.md", "quarterly")
    assert [hit["uri"] for hit in _search(cli, "quarterly")] == ["gno://notes/plain.md"]
    cli.run("tags", "rm", "notes/plain.md", "quarterly")
    assert _search(cli, "quarterly") == []


def test_a_captured_notes_snippet_has_no_frontmatter_and_its_author_is_found(cli: Cli) -> None:
    notes = cli.home / "notes"
    notes.mkdir()
    cli.run("init", str(notes), "--name", "notes")
    receipt = cli.json(
        "capture",
        "Sync about the roadmap and the okapi launch",
        "--title",
        "Bob sync",
        "--tag",
        "meeting",
        "--source-author",
        "alice",
    )
    assert "gno_embed" not in receipt["embed"]["reason"]
    assert "gno_index" not in receipt["embed"]["reason"]
    hits = _search(cli, "alice")
    assert [hit["uri"] for hit in hits] == [receipt["uri"]]
    snippet = str(hits[0]["snippet"])
    assert "---" not in snippet and "title:" not in snippet
    assert [h["uri"] for h in _search(cli, "alice", "--author", "alice")] == [receipt["uri"]]


# ---------------------------------------------------------------------------
# Upgrading an index written before migration 010
# ---------------------------------------------------------------------------


def _before_010(db_path: Path) -> None:
    """Put an index back in its shape before 010: three FTS fields, chunks with frontmatter.

    Migrations 011 and 012 are undone too (stored chunk texts, no document
    index queue), as an index written before 010 never had them.
    """
    conn = sqlite3.connect(db_path)
    conn.row_factory = sqlite3.Row
    try:
        tokenize = conn.execute(
            "SELECT value FROM schema_meta WHERE key = 'fts_tokenizer'"
        ).fetchone()[0]
        conn.executescript(
            # Before 010 chunk texts were stored and no document index queue existed.
            UNDO_DOCUMENT_INDEX_QUEUE
            + undo_chunk_ranges("text, mirror_hash", tokenize)
            + f"""
            CREATE VIRTUAL TABLE old_fts USING fts5 (
                filepath, title, body, prefix = '3 4', tokenize = '{tokenize}'
            );
            INSERT INTO old_fts(rowid, filepath, title, body)
                SELECT rowid, filepath, title, body FROM documents_fts;
            DROP TABLE documents_fts;
            ALTER TABLE old_fts RENAME TO documents_fts;
            UPDATE documents SET author = NULL WHERE author = 'carol';
            """
        )
        for mirror, markdown in conn.execute("SELECT mirror_hash, markdown FROM content"):
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM content_chunks WHERE mirror_hash = ?", (mirror,)
                )
            ]
            for chunk_id in ids:
                conn.execute(
                    "INSERT INTO chunks_fts(chunks_fts, rowid, text, mirror_hash) "
                    "SELECT 'delete', id, text, mirror_hash FROM content_chunks WHERE id = ?",
                    (chunk_id,),
                )
            conn.execute("DELETE FROM content_chunks WHERE mirror_hash = ?", (mirror,))
            for chunk in chunk_text(markdown):
                cur = conn.execute(
                    "INSERT INTO content_chunks(mirror_hash, seq, pos, text, start_line, "
                    "end_line, language, token_count) VALUES (?, ?, ?, ?, ?, ?, NULL, ?)",
                    (
                        mirror,
                        chunk.seq,
                        chunk.pos,
                        chunk.text,
                        chunk.start_line,
                        chunk.end_line,
                        chunk.token_count,
                    ),
                )
                conn.execute(
                    "INSERT INTO chunks_fts(rowid, text, mirror_hash) VALUES (?, ?, ?)",
                    (cur.lastrowid, chunk.text, mirror),
                )
        conn.execute("DELETE FROM schema_meta WHERE key = 'rechunk_frontmatter'")
        # Every migration before 010 stays applied: only 010 runs on the next open.
        conn.execute("UPDATE schema_meta SET value = '9' WHERE key = 'version'")
        conn.commit()
    finally:
        conn.close()


def test_an_old_index_is_upgraded_in_place_and_searches_like_a_new_one(tmp_path: Path) -> None:
    dirs = Dirs(tmp_path / "config", tmp_path / "data", tmp_path / "cache")
    files = dict(NOTES)
    files["clip.md"] = (
        "---\ntitle: Clip\nsource:\n  kind: url\n  author: carol\n---\nA clipped okapi article.\n"
    )
    corpus = write_corpus(tmp_path / "notes", files)
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(corpus), name="notes")
        engine.sync()
        db_path = engine.location.db_path
    _before_010(db_path)

    conn = sqlite3.connect(db_path)
    old_snippet_chunk = conn.execute("SELECT text FROM content_chunks ORDER BY id").fetchall()
    conn.close()
    assert any(row[0].startswith("---\ntitle: Bob sync") for row in old_snippet_chunk)

    with Engine.open(dirs=dirs, create=False) as engine:
        by_author = engine.search.lexical(SearchRequest(query="alice", limit=5))["results"]
        assert by_author[0]["uri"] == "gno://notes/standup.md"
        assert "---" not in by_author[0]["snippet"]
        okapi = engine.search.lexical(SearchRequest(query="okapi", limit=5))["results"]
        assert {hit["uri"] for hit in okapi} == {"gno://notes/standup.md", "gno://notes/clip.md"}
        assert all("---" not in hit["snippet"] for hit in okapi)
        by_line = {hit["uri"]: hit["line"] for hit in okapi}
        assert by_line["gno://notes/standup.md"] == 9
        # The capture source's author became the clip's author on upgrade.
        carol = engine.search.lexical(
            SearchRequest(query="carol", limit=5, scope=Scope(author="carol"))
        )["results"]
        assert [hit["uri"] for hit in carol] == ["gno://notes/clip.md"]
        yaml_hit = engine.search.lexical(SearchRequest(query="never", limit=5))["results"]
        assert yaml_hit and "---" in yaml_hit[0]["snippet"]
    conn = sqlite3.connect(db_path)
    try:
        version = conn.execute("SELECT value FROM schema_meta WHERE key = 'version'").fetchone()
        flag = conn.execute(
            "SELECT 1 FROM schema_meta WHERE key = 'rechunk_frontmatter'"
        ).fetchone()
        columns = [r[1] for r in conn.execute("PRAGMA table_info(documents_fts)")]
    finally:
        conn.close()
    assert int(version[0]) >= 10 and flag is None
    assert columns == ["filepath", "title", "body", "author", "tags", "categories"]
