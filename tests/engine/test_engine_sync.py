"""Configuration, the SQLite store, and ingestion through ``Engine.sync``."""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, Scope, SearchRequest, normalize_name
from gno_trio.engine.ingest import convert as convert
from gno_trio.engine.ingest import prepare
from gno_trio.engine.ingest import walker as walker
from gno_trio.engine.store.batches import BULK_CHECKPOINT_PAGES, SQLITE_CHECKPOINT_PAGES
from gno_trio.engine.store.database import _migration_scripts
from gno_trio.errors import GnoError
from tests.conftest import CORPUS, bump_mtime, db_snapshot, write_corpus
from tests.support.requests import flat_search


def uris(engine: Engine) -> set[str]:
    return {d["uri"] for d in engine.documents.ls()["documents"]}


def rel_paths(engine: Engine) -> set[str]:
    return {d["relPath"] for d in engine.documents.ls()["documents"]}


def hits(engine: Engine, query: str, **filters: Any) -> list[str]:
    found = engine.search.lexical(flat_search(query=query, limit=20, **filters))
    return [r["source"]["relPath"] for r in found["results"]]


def kinds(engine: Engine) -> list[str]:
    return [c["kind"] for c in engine.documents.changes(limit=1000)["changes"]]


def report_of(engine: Engine) -> dict[str, Any]:
    (report,) = engine.sync()
    return report.as_dict()


# ---------------------------------------------------------------------------
# Config, dirs and store
# ---------------------------------------------------------------------------


def test_add_collection_writes_gno_shaped_index_yml(engine: Engine, corpus: Path) -> None:
    engine.collections.add(str(corpus), name="Notes", pattern="**/*.md", include=[".md"])
    data = yaml.safe_load(engine.location.config_path.read_text("utf-8"))
    assert engine.location.config_path == engine.location.dirs.config / "index.yml"
    assert data["version"] == "1.0"
    assert "ftsTokenizer" in data
    (entry,) = data["collections"]
    assert entry["name"] == "notes"  # names are case-insensitive, stored lower-case
    assert entry["path"] == str(corpus.resolve())
    assert entry["pattern"] == "**/*.md"
    assert entry["include"] == [".md"]
    assert ".git" in entry["exclude"] and "node_modules" in entry["exclude"]


def test_database_lives_at_data_index_name_sqlite(dirs: Dirs) -> None:
    with Engine.open(dirs=dirs) as default:
        assert default.location.db_path == dirs.data / "index-default.sqlite"
    with Engine.open(dirs=dirs, index_name="Work") as work:
        assert work.location.db_path == dirs.data / "index-work.sqlite"
    assert sorted(p.name for p in dirs.data.glob("*.sqlite")) == [
        "index-default.sqlite",
        "index-work.sqlite",
    ]


def test_invalid_index_name_is_rejected_before_touching_disk(dirs: Dirs) -> None:
    with pytest.raises(GnoError) as info:
        Engine.open(dirs=dirs, index_name="../escape")
    assert info.value.code == "VALIDATION"
    assert not dirs.data.exists()


def test_store_uses_wal_and_records_the_latest_migration(engine: Engine) -> None:
    conn = sqlite3.connect(engine.location.db_path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        version = conn.execute("SELECT value FROM schema_meta WHERE key='version'").fetchone()[0]
    finally:
        conn.close()
    assert int(version) == _migration_scripts()[-1][0]


def test_reopening_an_index_is_idempotent(indexed: Engine, dirs: Dirs) -> None:
    before = db_snapshot(indexed.location.db_path)
    indexed.close()
    for _ in range(2):
        Engine.open(dirs=dirs).close()
    assert db_snapshot(indexed.location.db_path) == before


def test_opening_for_reads_does_not_wait_for_a_running_writer(indexed: Engine, dirs: Dirs) -> None:
    writer = sqlite3.connect(indexed.location.db_path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # what a long sync holds
    try:
        # A reader that waited would give up on the held lock (SQLITE_BUSY) and fail.
        with Engine.open(dirs=dirs) as reader:
            assert hits(reader, "zebra") == ["plain.txt"]
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_open_refuses_an_index_from_a_newer_schema(engine: Engine, dirs: Dirs) -> None:
    engine.close()
    conn = sqlite3.connect(engine.location.db_path)
    conn.execute("UPDATE schema_meta SET value = '999' WHERE key = 'version'")
    conn.commit()
    conn.close()
    with pytest.raises(GnoError) as info:
        Engine.open(dirs=dirs)
    assert info.value.code == "RUNTIME"
    assert "999" in info.value.message and "newer" in info.value.message


def test_open_reports_a_file_that_is_not_a_database(dirs: Dirs) -> None:
    dirs.data.mkdir(parents=True)
    (dirs.data / "index-default.sqlite").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(GnoError) as info:
        Engine.open(dirs=dirs)
    assert info.value.code == "RUNTIME"


def test_open_without_create_does_not_make_a_database(dirs: Dirs) -> None:
    with pytest.raises(GnoError) as info:
        Engine.open(dirs=dirs, create=False)
    assert info.value.code == "NOT_FOUND"
    assert not (dirs.data / "index-default.sqlite").exists()


# ---------------------------------------------------------------------------
# Collections: names and roots
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "stored"),
    [("Notes", "notes"), ("  WORK_2024-q1 ", "work_2024-q1"), ("0", "0"), ("a" * 64, "a" * 64)],
)
def test_collection_names_are_normalised(
    engine: Engine, corpus: Path, raw: str, stored: str
) -> None:
    added = engine.collections.add(str(corpus), name=raw)
    assert added.name == stored
    assert engine.collection(raw.upper()).name == stored


@pytest.mark.parametrize("raw", ["", "-lead", "_lead", "has space", "a" * 65, "ünï", "a/b", "a.b"])
def test_invalid_collection_names_change_nothing(engine: Engine, corpus: Path, raw: str) -> None:
    before = db_snapshot(engine.location.db_path)
    with pytest.raises(GnoError) as info:
        engine.collections.add(str(corpus), name=raw)
    assert info.value.code == "INVALID_NAME"
    assert not engine.location.config_path.exists()
    assert db_snapshot(engine.location.db_path) == before


COLLECTION_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


@given(st.text(max_size=80))
def test_collection_name_rule_property(raw: str) -> None:
    try:
        name = normalize_name(raw)
    except GnoError as error:
        assert error.code == "INVALID_NAME"
        assert not COLLECTION_NAME.fullmatch(raw.strip().lower())
    else:
        assert name == raw.strip().lower()
        assert COLLECTION_NAME.fullmatch(name)


def _forbidden_cases(tmp_path: Path) -> list[str]:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    return ["/", "/etc", str(home), str(home / ".ssh"), "~", "~/.ssh"]


def test_forbidden_roots_are_refused(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = _forbidden_cases(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    before = db_snapshot(engine.location.db_path)
    for root in cases:
        with pytest.raises(GnoError) as info:
            engine.collections.add(root, name="x")
        assert info.value.code == "FORBIDDEN_ROOT", root
    # A folder inside the home directory is the common, allowed case.
    (tmp_path / "home" / "notes").mkdir()
    assert engine.collections.add("~/notes", name="x").path == tmp_path / "home" / "notes"
    engine.collections.remove("x")
    assert db_snapshot(engine.location.db_path)["collections"] == before["collections"]


def test_missing_and_non_directory_roots(engine: Engine, tmp_path: Path) -> None:
    with pytest.raises(GnoError) as missing:
        engine.collections.add(str(tmp_path / "nope"), name="x")
    assert missing.value.code == "PATH_NOT_FOUND"
    file_root = tmp_path / "file.md"
    file_root.write_text("x")
    with pytest.raises(GnoError) as not_dir:
        engine.collections.add(str(file_root), name="x")
    assert not_dir.value.code == "INVALID_PATH"
    assert not engine.location.config_path.exists()


def test_duplicate_names_and_roots_are_refused(engine: Engine, tmp_path: Path) -> None:
    first = write_corpus(tmp_path / "one", {"a.md": "a"})
    second = write_corpus(tmp_path / "two", {"b.md": "b"})
    engine.collections.add(str(first), name="notes")
    config_before = engine.location.config_path.read_bytes()
    db_before = db_snapshot(engine.location.db_path)
    with pytest.raises(GnoError) as same_name:
        engine.collections.add(str(second), name="NOTES")
    assert same_name.value.code == "DUPLICATE"
    with pytest.raises(GnoError) as same_root:
        engine.collections.add(str(first) + "/.", name="other")
    assert same_root.value.code == "DUPLICATE"
    assert engine.location.config_path.read_bytes() == config_before
    assert db_snapshot(engine.location.db_path) == db_before


# ---------------------------------------------------------------------------
# What gets indexed
# ---------------------------------------------------------------------------


def test_default_walk_indexes_supported_files_and_skips_default_excludes(indexed: Engine) -> None:
    assert rel_paths(indexed) == {
        "alpha.md",
        "beta.md",
        "gamma.md",
        "code/hello.py",
        "plain.txt",
        "sub dir/my note #1?%.md",
        "unicode/café ünï.md",
    }
    assert hits(indexed, "quokka") == ["sub dir/my note #1?%.md"]


def test_markdown_text_and_code_get_their_own_converters(indexed: Engine) -> None:
    by_path = {d["relPath"]: d for d in indexed.documents.ls()["documents"]}
    assert by_path["alpha.md"]["mime"] == "text/markdown"
    assert by_path["plain.txt"]["mime"] == "text/plain"
    assert by_path["code/hello.py"]["mime"] == "text/x-python"
    hit = indexed.search.lexical(SearchRequest(query="greets"))["results"][0]
    assert hit["conversion"]["converterId"] == "native/code"
    assert hit["snippetLanguage"] == "python"


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"pattern": "**/*.md"}, {"alpha.md", "beta.md", "gamma.md", "sub dir/my note #1?%.md"}),
        ({"include": ["txt", ".PY"]}, {"plain.txt", "code/hello.py"}),
        ({"pattern": "code/*"}, {"code/hello.py"}),
        (
            {"exclude": ["sub dir", "*.py", "unicode/**"]},
            {
                "alpha.md",
                "beta.md",
                "gamma.md",
                "plain.txt",
                ".git/ignored.md",
                "node_modules/pkg/readme.md",
            },
        ),
    ],
)
def test_pattern_include_and_exclude(
    engine: Engine, corpus: Path, options: dict[str, Any], expected: set[str]
) -> None:
    engine.collections.add(str(corpus), name="notes", **options)
    engine.sync()
    found = rel_paths(engine)
    if "pattern" in options and options["pattern"] == "**/*.md":
        expected = expected | {"unicode/café ünï.md"}
    assert found == expected


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"pattern": "**/*.md"},
        {"include": ("txt", ".PY")},
        {"exclude": ("sub dir", "*.py", "unicode/**")},
        {"pattern": "code/*", "exclude": ()},
    ],
)
def test_admits_agrees_with_the_walk(corpus: Path, options: dict[str, Any]) -> None:
    every = {p.relative_to(corpus).as_posix() for p in corpus.rglob("*") if p.is_file()}
    walked = {rel for listed in walker.listing(corpus, **options) for rel in listed.rel_paths}
    assert walked == {rel for rel in every if walker.admits(rel, **options)}


def test_symlinks_are_never_followed(engine: Engine, tmp_path: Path) -> None:
    outside = write_corpus(
        tmp_path / "outside", {"secret.md": "wombat secret\n", "d/x.md": "wombat"}
    )
    root = write_corpus(tmp_path / "root", {"real.md": "# Real\n\nordinary text\n"})
    os.symlink(outside / "secret.md", root / "link.md")
    os.symlink(outside / "d", root / "linkdir")
    os.symlink(root / "real.md", root / "inner-link.md")
    engine.collections.add(str(root), name="notes")
    report = report_of(engine)
    assert report["added"] == 1
    assert rel_paths(engine) == {"real.md"}
    assert hits(engine, "wombat") == []


# ---------------------------------------------------------------------------
# Metadata: frontmatter, titles, ids and URIs
# ---------------------------------------------------------------------------


def test_frontmatter_fields_reach_results(indexed: Engine) -> None:
    result = indexed.search.lexical(SearchRequest(query="kubernetes rollout"))["results"][0]
    assert result["source"]["relPath"] == "alpha.md"
    assert result["title"] == "Alpha Planning"
    assert result["tags"] == ["planning", "project", "roadmap"]  # inline #roadmap too
    assert result["categories"] == ["meeting"]
    assert result["source"]["documentDate"] == "2024-03-01T00:00:00.000Z"  # its UTC instant
    assert hits(indexed, "kubernetes", author="jane") == ["alpha.md"]
    create = next(
        c
        for c in indexed.documents.changes(limit=100)["changes"]
        if c["current"]["relPath"] == "alpha.md"
    )
    assert create["structureDelta"]["typedEdges"]["added"] == ["depends_on:beta"]
    assert create["structureDelta"]["dates"]["added"] == ["2024-03-01"]


@pytest.mark.parametrize(
    ("rel", "title"),
    [
        ("alpha.md", "Alpha Planning"),  # frontmatter title wins
        ("beta.md", "Beta Notes On Caching"),  # first # heading
        ("gamma.md", "Gamma Decision Record"),  # a generic "Notes" heading is skipped
        ("plain.txt", "plain"),  # no heading: the file name stem
        ("code/hello.py", "hello"),
    ],
)
def test_title_rule(indexed: Engine, rel: str, title: str) -> None:
    assert indexed.documents.get(f"notes/{rel}")["title"] == title


def test_docid_is_hash_prefix_of_source_bytes(indexed: Engine, corpus: Path) -> None:
    for rel in ("alpha.md", "plain.txt", "unicode/café ünï.md"):
        digest = hashlib.sha256((corpus / rel).read_bytes()).hexdigest()
        doc = indexed.documents.get(f"notes/{rel}")
        assert doc["docid"] == "#" + digest[:8]
        assert doc["source"]["sourceHash"] == digest
        assert indexed.documents.get(doc["docid"])["uri"] == doc["uri"]


def test_identical_files_share_a_docid(engine: Engine, tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "r", {"a.md": "same bytes\n", "b/a.md": "same bytes\n"})
    engine.collections.add(str(root), name="notes")
    engine.sync()
    docids = {d["docid"] for d in engine.documents.ls()["documents"]}
    assert len(docids) == 1 and len(engine.documents.ls()["documents"]) == 2


@pytest.mark.parametrize(
    ("rel", "uri"),
    [
        ("sub dir/my note #1?%.md", "gno://notes/sub%20dir/my%20note%20%231%3F%25.md"),
        ("unicode/café ünï.md", "gno://notes/unicode/caf%C3%A9%20%C3%BCn%C3%AF.md"),
        ("alpha.md", "gno://notes/alpha.md"),
    ],
)
def test_uris_percent_encode_each_segment(indexed: Engine, rel: str, uri: str) -> None:
    assert uri in uris(indexed)
    by_uri = indexed.documents.get(uri)
    by_path = indexed.documents.get(f"notes/{rel}")
    assert by_uri["uri"] == by_path["uri"] == uri
    assert by_uri["source"]["relPath"] == rel


# ---------------------------------------------------------------------------
# Incremental sync, soft deletes, renames and the journal
# ---------------------------------------------------------------------------


@pytest.fixture
def parse_counter(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every file that goes through conversion and parsing."""
    parsed: list[str] = []
    real = prepare.prepare

    def counting(found: walker.FoundFile, data: bytes, converted: Any) -> Any:
        parsed.append(found.rel_path)
        return real(found, data, converted)

    monkeypatch.setattr(prepare, "prepare", counting)
    return parsed


def test_unchanged_resync_parses_nothing(indexed: Engine, parse_counter: list[str]) -> None:
    journal_before = kinds(indexed)
    report = report_of(indexed)
    assert report["scanned"] == 8
    assert report["unchanged"] == 7
    assert report["skipped"] == 1  # image.png: not a type we index, judged by a stat
    assert report["added"] == report["updated"] == report["removed"] == 0
    assert parse_counter == []
    assert kinds(indexed) == journal_before


def test_touched_identical_file_is_not_reindexed(
    indexed: Engine, corpus: Path, parse_counter: list[str]
) -> None:
    bump_mtime(corpus / "alpha.md")
    journal_before = kinds(indexed)
    report = report_of(indexed)
    assert report["unchanged"] == 7 and report["updated"] == 0
    assert parse_counter == []
    assert kinds(indexed) == journal_before
    # ... and the new mtime is remembered, so the next sync is stat-only again.
    report_of(indexed)
    assert parse_counter == []


def test_edited_file_is_updated(indexed: Engine, corpus: Path, parse_counter: list[str]) -> None:
    path = corpus / "beta.md"
    path.write_text("# Beta Notes On Caching\n\nNow all about ocelots.\n", "utf-8")
    bump_mtime(path)
    report = report_of(indexed)
    assert report["updated"] == 1 and report["unchanged"] == 6
    assert parse_counter == ["beta.md"]
    assert hits(indexed, "ocelots") == ["beta.md"]
    assert "beta.md" not in hits(indexed, "desserts")
    assert indexed.documents.get("notes/beta.md")["docid"] == (
        "#" + hashlib.sha256(path.read_bytes()).hexdigest()[:8]
    )
    assert kinds(indexed)[-1] == "update"


def test_missing_file_is_soft_deleted_then_reactivated(indexed: Engine, corpus: Path) -> None:
    original = (corpus / "plain.txt").read_bytes()
    (corpus / "plain.txt").unlink()
    assert report_of(indexed)["removed"] == 1
    with pytest.raises(GnoError) as info:
        indexed.documents.get("notes/plain.txt")
    assert info.value.code == "NOT_FOUND"
    assert hits(indexed, "zebra") == []
    assert "plain.txt" not in rel_paths(indexed)
    (corpus / "plain.txt").write_bytes(original)
    report = report_of(indexed)
    assert report["reactivated"] == 1 and report["added"] == 0
    assert hits(indexed, "zebra") == ["plain.txt"]
    assert kinds(indexed)[-2:] == ["inactivate", "reactivate"]


def test_restored_file_with_new_content_is_reactivated_with_it(
    indexed: Engine, corpus: Path
) -> None:
    (corpus / "plain.txt").unlink()
    report_of(indexed)
    (corpus / "plain.txt").write_text("now about pangolins\n", "utf-8")
    assert report_of(indexed)["reactivated"] == 1
    assert hits(indexed, "pangolins") == ["plain.txt"]
    assert hits(indexed, "zebra") == []


def test_rename_is_recognised(indexed: Engine, corpus: Path) -> None:
    before = indexed.documents.get("notes/beta.md")
    (corpus / "beta.md").rename(corpus / "beta-renamed.md")
    report = report_of(indexed)
    assert report["renamed"] == 1
    assert report["added"] == report["removed"] == 0
    after = indexed.documents.get("notes/beta-renamed.md")
    assert after["docid"] == before["docid"]
    with pytest.raises(GnoError):
        indexed.documents.get("notes/beta.md")
    change = indexed.documents.changes(limit=1000)["changes"][-1]
    assert change["kind"] == "rename"
    assert change["previous"]["relPath"] == "beta.md"
    assert change["current"]["relPath"] == "beta-renamed.md"
    assert hits(indexed, "desserts") == ["beta-renamed.md"]


def test_every_change_kind_is_journaled(indexed: Engine, corpus: Path) -> None:
    assert kinds(indexed) == ["create"] * 7
    (corpus / "beta.md").write_text("# Beta\n\nchanged\n", "utf-8")
    bump_mtime(corpus / "beta.md")
    report_of(indexed)
    (corpus / "gamma.md").rename(corpus / "gamma2.md")
    report_of(indexed)
    (corpus / "plain.txt").unlink()
    report_of(indexed)
    (corpus / "plain.txt").write_text(CORPUS["plain.txt"], "utf-8")
    report_of(indexed)
    assert kinds(indexed)[7:] == ["update", "rename", "inactivate", "reactivate"]


# ---------------------------------------------------------------------------
# Files that cannot be indexed
# ---------------------------------------------------------------------------


def _errors(engine: Engine) -> dict[str, str]:
    (collection,) = engine.index.status()["collections"]
    return {e["relPath"]: e["code"] for e in collection["errors"]}


def test_unconvertible_files_are_recorded_and_never_abort(engine: Engine, tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "r", {"good.md": "# Good\n\nbison\n"})
    (root / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (root / "latin1.md").write_bytes("caf\xe9 au lait".encode("latin-1"))
    (root / "nul.md").write_bytes(b"text\x00with a NUL byte")
    engine.collections.add(str(root), name="notes")
    report = report_of(engine)
    assert report["added"] == 2  # good.md, and latin1.md decoded as Windows-1252
    assert {e["relPath"]: e["code"] for e in report["errors"]} == {
        "binary.md": "BINARY_FILE",
        "nul.md": "BINARY_FILE",
    }
    assert _errors(engine) == {"binary.md": "BINARY_FILE", "nul.md": "BINARY_FILE"}
    assert engine.index.status()["collections"][0]["errorCount"] == 2
    assert hits(engine, "bison") == ["good.md"]
    assert engine.documents.get("notes/latin1.md")["content"] == "1: café au lait"
    # Fixing a file clears its error on the next sync.
    (root / "nul.md").write_text("no NUL any more", "utf-8")
    report_of(engine)
    assert _errors(engine) == {"binary.md": "BINARY_FILE"}
    (root / "binary.md").unlink()
    report_of(engine)
    assert _errors(engine) == {}


def test_huge_file_is_refused_by_size(dirs: Dirs, tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "r", {"small.md": "tiny\n", "big.md": "x" * 65})
    dirs.config.mkdir(parents=True, exist_ok=True)
    (dirs.config / "index.yml").write_text("conversion:\n  maxBytes: 64\n", "utf-8")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(root), name="notes")
        report = report_of(engine)
        assert report["added"] == 1
        assert [(e["relPath"], e["code"]) for e in report["errors"]] == [("big.md", "TOO_LARGE")]
        assert _errors(engine) == {"big.md": "TOO_LARGE"}
        # Judged once: the next sync costs the big file a stat, and still lists it.
        again = report_of(engine)
        assert [(e["relPath"], e["code"]) for e in again["errors"]] == [("big.md", "TOO_LARGE")]


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root can read a chmod 000 file"
)
def test_unreadable_file_is_recorded(engine: Engine, tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "r", {"ok.md": "fine\n", "locked.md": "secret\n"})
    (root / "locked.md").chmod(0)
    try:
        engine.collections.add(str(root), name="notes")
        report = report_of(engine)
        assert report["added"] == 1
        assert _errors(engine) == {"locked.md": "READ_ERROR"}
    finally:
        (root / "locked.md").chmod(0o644)


def test_file_that_becomes_unconvertible_keeps_its_last_good_content(
    indexed: Engine, corpus: Path
) -> None:
    before = indexed.documents.get("notes/beta.md")
    (corpus / "beta.md").write_bytes(b"\x00\x01\x02 broken now")
    bump_mtime(corpus / "beta.md")
    report = report_of(indexed)
    assert [e["code"] for e in report["errors"]] == ["BINARY_FILE"]
    assert indexed.documents.get("notes/beta.md")["content"] == before["content"]
    assert hits(indexed, "desserts") == ["beta.md"]
    assert _errors(indexed) == {"beta.md": "BINARY_FILE"}
    # It stays an error on later syncs until the file is fixed.
    report_of(indexed)
    assert _errors(indexed) == {"beta.md": "BINARY_FILE"}
    (corpus / "beta.md").write_text("# Beta\n\nrepaired with lemurs\n", "utf-8")
    bump_mtime(corpus / "beta.md", 10)
    assert report_of(indexed)["updated"] == 1
    assert _errors(indexed) == {}
    assert hits(indexed, "lemurs") == ["beta.md"]


@pytest.mark.parametrize("pattern", ["**/*", "**/*.md"])  # a listing of names, or of entries
def test_unlistable_folder_does_not_soft_delete_its_documents(
    engine: Engine, corpus: Path, monkeypatch: pytest.MonkeyPatch, pattern: str
) -> None:
    engine.collections.add(str(corpus), name="notes", pattern=pattern)
    engine.sync()
    indexed = engine
    blocked = os.fspath(corpus / "sub dir")

    def flaky(real: Any) -> Any:
        def listing(path: Any, *args: Any) -> Any:
            if not isinstance(path, int) and os.fspath(path) == blocked:
                raise PermissionError(13, "Permission denied")
            return real(path, *args)

        return listing

    # Whichever way the walk lists a folder (names, through a descriptor of it or not,
    # or entries with their types).
    monkeypatch.setattr(os, "scandir", flaky(os.scandir))
    monkeypatch.setattr(os, "listdir", flaky(os.listdir))
    monkeypatch.setattr(os, "open", flaky(os.open))
    report = report_of(indexed)
    assert report["removed"] == 0
    assert [(e["relPath"], e["code"]) for e in report["errors"]] == [("sub dir", "READ_ERROR")]
    assert hits(indexed, "quokka") == ["sub dir/my note #1?%.md"]


def test_malformed_frontmatter_is_indexed_with_a_warning(engine: Engine, tmp_path: Path) -> None:
    root = write_corpus(
        tmp_path / "r", {"bad.md": "---\ntitle: [unclosed\n---\n# Heading\n\ncapybara\n"}
    )
    engine.collections.add(str(root), name="notes")
    report = report_of(engine)
    assert report["added"] == 1 and report["errors"] == []
    (warning,) = report["warnings"]
    assert warning["code"] == "FRONTMATTER_INVALID" and warning["relPath"] == "bad.md"
    assert "line" in warning["message"]
    assert hits(engine, "capybara") == ["bad.md"]
    (collection,) = engine.index.status()["collections"]
    assert [w["relPath"] for w in collection["warnings"]] == ["bad.md"]
    (root / "bad.md").write_text("---\ntitle: Fixed\n---\ncapybara\n", "utf-8")
    bump_mtime(root / "bad.md")
    assert report_of(engine)["warnings"] == []
    assert engine.index.status()["collections"][0]["warnings"] == []
    assert engine.documents.get("notes/bad.md")["title"] == "Fixed"


# ---------------------------------------------------------------------------
# Collection lifecycle
# ---------------------------------------------------------------------------


def test_remove_collection_drops_its_documents_and_readding_restores_them(
    indexed: Engine, corpus: Path
) -> None:
    result = indexed.collections.remove("NOTES")
    assert result == {"removed": True, "collection": "notes", "documents": 7}
    assert indexed.documents.ls()["documents"] == []
    assert indexed.index.status()["collections"] == []
    assert kinds(indexed).count("inactivate") == 7
    with pytest.raises(GnoError) as info:
        indexed.search.lexical(SearchRequest(query="zebra", scope=Scope(collections=("notes",))))
    assert info.value.code == "NOT_FOUND"
    indexed.collections.add(str(corpus), name="notes")
    report = report_of(indexed)
    assert report["reactivated"] == 7 and report["added"] == 0
    assert hits(indexed, "zebra") == ["plain.txt"]


def test_collection_removed_from_index_yml_by_hand_leaves_the_index(
    indexed: Engine, dirs: Dirs
) -> None:
    text = indexed.location.config_path.read_text("utf-8")
    indexed.close()
    data = yaml.safe_load(text)
    data["collections"] = []
    indexed.location.config_path.write_text(yaml.safe_dump(data), "utf-8")
    before = db_snapshot(indexed.location.db_path)
    with Engine.open(dirs=dirs) as reopened:
        # Opening and reading write nothing: the next writer reconciles, and says so.
        assert [c["name"] for c in reopened.index.status()["collections"]] == ["notes"]
        assert db_snapshot(reopened.location.db_path) == before
        changes = reopened.reconcile()
        assert changes == {
            "added": [],
            "updated": [],
            "removed": [{"collection": "notes", "documents": 7}],
        }
        assert reopened.index.status()["collections"] == []
        assert reopened.documents.ls()["documents"] == []
        assert hits(reopened, "zebra") == []
        assert kinds(reopened).count("inactivate") == 7
        assert reopened.reconcile() == {"added": [], "updated": [], "removed": []}


def test_unreadable_file_is_recorded_without_chmod(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same as the chmod 000 case, in a way that also works as root."""
    root = write_corpus(tmp_path / "r", {"ok.md": "fine\n", "locked.md": "secret\n"})
    real_open = os.open

    def guarded_open(path: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fspath(path).endswith("locked.md"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", guarded_open)
    engine.collections.add(str(root), name="notes")
    report = report_of(engine)
    assert report["added"] == 1
    (error,) = report["errors"]
    assert error["code"] == "READ_ERROR" and "Permission denied" in error["message"]
    assert _errors(engine) == {"locked.md": "READ_ERROR"}


def test_vanished_root_reports_an_error_and_keeps_the_index(
    indexed: Engine, corpus: Path, tmp_path: Path
) -> None:
    corpus.rename(tmp_path / "elsewhere")
    report = report_of(indexed)
    assert report["removed"] == 0
    assert report["errors"][0]["code"] == "PATH_NOT_FOUND"
    assert len(indexed.documents.ls()["documents"]) == 7


def test_status_counts_and_last_sync(indexed: Engine) -> None:
    status = indexed.index.status()
    (collection,) = status["collections"]
    assert collection["name"] == "notes"
    assert collection["documentCount"] == status["totalDocuments"] == 7
    assert collection["chunkCount"] == status["totalChunks"] >= 7
    assert collection["lastSyncedAt"] == status["lastUpdated"]
    assert collection["lastSyncedAt"].endswith("Z")
    assert status["healthy"] is True and collection["errors"] == []


def test_sync_paths_indexes_only_the_named_files(indexed: Engine, corpus: Path) -> None:
    (corpus / "new.md").write_text("# New\n\nmarmot\n", "utf-8")
    (corpus / "other.md").write_text("# Other\n\nmarmot too\n", "utf-8")
    report = indexed.sync_paths("notes", ["new.md"])
    assert report.added == 1 and report.scanned == 1
    assert hits(indexed, "marmot") == ["new.md"]


def test_sync_paths_applies_the_collection_rules(
    indexed: Engine, corpus: Path, tmp_path: Path
) -> None:
    outside = write_corpus(tmp_path / "outside", {"secret.md": "wombat\n", "d/x.md": "wombat\n"})
    os.symlink(outside / "secret.md", corpus / "link.md")
    os.symlink(outside / "d", corpus / "linkdir")
    (corpus / "node_modules" / "new.md").write_text("wombat\n", "utf-8")
    (corpus / "data.bin").write_text("wombat\n", "utf-8")
    report = indexed.sync_paths(
        "notes",
        [
            "link.md",
            "linkdir/x.md",
            "../outside/secret.md",
            "/etc/hostname",
            "node_modules/new.md",
            "data.bin",
            "missing.md",
        ],
    )
    # Only data.bin passes the rules; its type is not indexed, so it is skipped.
    assert report.scanned == 1 and report.skipped == 1 and report.added == 0
    assert hits(indexed, "wombat") == []


def test_unknown_collection_in_sync_is_not_found(indexed: Engine) -> None:
    with pytest.raises(GnoError) as info:
        indexed.sync(["nope"])
    assert info.value.code == "NOT_FOUND"


def _segments(engine: Engine) -> tuple[int, int]:
    conn = sqlite3.connect(engine.location.db_path)
    try:
        return tuple(  # type: ignore[return-value]
            int(conn.execute(f"SELECT COUNT(DISTINCT segid) FROM {table}_idx").fetchone()[0])
            for table in ("documents_fts", "chunks_fts")
        )
    finally:
        conn.close()


def test_a_bulk_sync_leaves_each_full_text_index_in_one_segment(
    engine: Engine, tmp_path: Path
) -> None:
    """Search looks every term up once per segment; a large sync is merged afterwards."""
    corpus = tmp_path / "bulk"
    write_corpus(corpus, {f"a/n{i:03}.md": f"# Note {i}\n\nword{i} text\n" for i in range(60)})
    engine.collections.add(str(corpus), name="bulk")
    engine.sync()
    # A second bulk import is written as new segments beside the first ones.
    write_corpus(corpus, {f"b/n{i:03}.md": f"# Note {i}\n\nother{i} text\n" for i in range(60)})
    (report,) = engine.sync()
    assert report.added == 60
    assert _segments(engine) == (1, 1)
    # A small change is left to FTS5's own lazy merging: no full rewrite.
    (corpus / "a/n007.md").write_text("# Note 7\n\nedited once\n", "utf-8")
    bump_mtime(corpus / "a/n007.md")
    (report,) = engine.sync()
    assert report.updated == 1
    assert min(_segments(engine)) > 1
    assert hits(engine, "edited") == ["a/n007.md"]


def test_a_bulk_sync_checkpoints_its_log_less_often_and_only_while_it_writes(
    engine: Engine, tmp_path: Path
) -> None:
    """A bulk sync's batches copy the write-ahead log back every many pages; then the
    connection goes back to SQLite's default for every later write (a small sync too)."""

    def interval() -> int:
        with engine.connection() as conn:
            return int(conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0])

    seen: list[int] = []
    corpus = tmp_path / "bulk"
    write_corpus(corpus, {f"a/n{i:03}.md": f"# Note {i}\n\nword{i} text\n" for i in range(40)})
    engine.collections.add(str(corpus), name="bulk")
    engine.sync(progress=lambda *_: seen.append(interval()))
    assert set(seen) == {BULK_CHECKPOINT_PAGES}
    assert interval() == SQLITE_CHECKPOINT_PAGES
    seen.clear()
    (corpus / "a/n007.md").write_text("# Note 7\n\nedited once\n", "utf-8")
    bump_mtime(corpus / "a/n007.md")
    (report,) = engine.sync(progress=lambda *_: seen.append(interval()))
    assert report.updated == 1
    assert set(seen) == {SQLITE_CHECKPOINT_PAGES}
