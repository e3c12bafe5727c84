"""A full re-sync skips a file only when its path, size and mtime are all as indexed.

The walk compares each file's fingerprint with the indexed ones and builds a
record only for the files that differ; these tests pin what that fast path
must still notice (a new size under the old mtime, a nanosecond of mtime, a
file turned into a folder or a symbolic link, a move into an excluded
folder) and that it really is taken (an unchanged re-sync reads no file).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from gno_trio.engine import Engine
from gno_trio.engine.ingest import prepare, walker
from gno_trio.engine.ingest.walker import FoundFile
from gno_trio.engine.search.lexical import SearchRequest
from tests.conftest import bump_mtime, write_corpus


def report_of(engine: Engine) -> dict[str, Any]:
    (report,) = engine.sync()
    return report.as_dict()


def rel_paths(engine: Engine) -> set[str]:
    return {d["relPath"] for d in engine.documents.ls()["documents"]}


def hits(engine: Engine, query: str) -> list[str]:
    found = engine.search.lexical(SearchRequest(query=query, limit=20))
    return [r["source"]["relPath"] for r in found["results"]]


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every file a sync reads from disk."""
    read: list[str] = []
    real = prepare.read_source

    def counting(found: FoundFile, limit: int) -> bytes:
        read.append(found.rel_path)
        return real(found, limit)

    monkeypatch.setattr(prepare, "read_source", counting)
    return read


def test_an_unchanged_resync_reads_no_file(indexed: Engine, corpus: Path, reads: list[str]) -> None:
    report = report_of(indexed)
    assert (report["scanned"], report["unchanged"], report["skipped"]) == (8, 7, 1)
    assert reads == []
    bump_mtime(corpus / "alpha.md")
    assert report_of(indexed)["unchanged"] == 7
    assert reads == ["alpha.md"]  # a touched file is read (and found to be the same bytes)


def test_a_new_size_under_the_old_mtime_is_an_update(indexed: Engine, corpus: Path) -> None:
    path = corpus / "beta.md"
    before = path.stat()
    path.write_text("# Beta\n\nNow it is about pangolins and nothing else at all.\n", "utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size != before.st_size
    report = report_of(indexed)
    assert (report["updated"], report["unchanged"]) == (1, 6)
    assert hits(indexed, "pangolins") == ["beta.md"]


def test_one_nanosecond_of_mtime_is_a_change(indexed: Engine, corpus: Path) -> None:
    path = corpus / "gamma.md"
    before = path.stat()
    text = path.read_bytes()
    swapped = text.replace(b"a", b"o", 1)
    assert len(swapped) == len(text) and swapped != text
    path.write_bytes(swapped)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1))
    assert report_of(indexed)["updated"] == 1


def test_a_file_replaced_by_a_folder_and_a_folder_by_a_file(indexed: Engine, corpus: Path) -> None:
    (corpus / "plain.txt").unlink()
    write_corpus(corpus / "plain.txt", {"inner.md": "# Inner\n\nwalrus notes\n"})
    shutil.rmtree(corpus / "code")
    (corpus / "code").write_text("now a plain file about otters\n", "utf-8")
    report = report_of(indexed)
    assert (report["added"], report["removed"]) == (1, 2)
    paths = rel_paths(indexed)
    assert {"plain.txt/inner.md"} <= paths
    assert not paths & {"plain.txt", "code/hello.py", "code"}  # "code" has no extension we index
    assert hits(indexed, "walrus") == ["plain.txt/inner.md"]
    assert hits(indexed, "zebra") == []


def test_a_file_turned_into_a_symlink_to_itself_is_gone(
    indexed: Engine, corpus: Path, tmp_path: Path
) -> None:
    # The link's target is the very file, moved: same bytes, size and mtime.
    outside = tmp_path / "outside"
    outside.mkdir()
    os.rename(corpus / "alpha.md", outside / "alpha.md")
    os.symlink(outside / "alpha.md", corpus / "alpha.md")
    report = report_of(indexed)
    assert report["removed"] == 1
    assert "alpha.md" not in rel_paths(indexed)


def test_a_move_into_an_excluded_folder_is_a_removal(indexed: Engine, corpus: Path) -> None:
    # A move keeps size and mtime; only the path says the file left the collection.
    os.rename(corpus / "beta.md", corpus / "node_modules" / "beta.md")
    (corpus / ".git" / "new.md").write_text("# New\n\nhidden capybara\n", "utf-8")
    report = report_of(indexed)
    assert (report["removed"], report["added"]) == (1, 0)
    assert "beta.md" not in rel_paths(indexed)
    assert hits(indexed, "capybara") == []
    # Back out of it: the same document comes back.
    os.rename(corpus / "node_modules" / "beta.md", corpus / "beta.md")
    assert report_of(indexed)["reactivated"] == 1


def test_a_move_within_the_collection_is_a_rename(indexed: Engine, corpus: Path) -> None:
    os.rename(corpus / "beta.md", corpus / "sub dir" / "beta moved.md")
    report = report_of(indexed)
    assert (report["renamed"], report["added"], report["removed"]) == (1, 0, 0)
    assert "sub dir/beta moved.md" in rel_paths(indexed)


@pytest.mark.parametrize(
    ("pattern", "by_folder"), [("**/*", True), ("**/*", False), ("**/*.md", True)]
)
def test_links_folders_and_odd_entries_under_either_listing(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pattern: str, by_folder: bool
) -> None:
    """A collection without file filters lists names and lstats them (through a descriptor
    of the folder where the system has ``fstatat``, by whole paths elsewhere); one with
    them uses the folder's file types first. All must see the same files."""
    monkeypatch.setattr(walker, "_BY_FOLDER", by_folder and walker._BY_FOLDER)
    root = write_corpus(
        tmp_path / "root",
        {"a.md": "# A\n\nbadger\n", "dir.md/inner.md": "# Inner\n\nheron\n", "b.md": "# B\n"},
    )
    engine.collections.add(str(root), name="notes", pattern=pattern)
    assert report_of(engine)["added"] == 3
    os.rename(root / "b.md", tmp_path / "b.md")
    os.symlink(tmp_path / "b.md", root / "b.md")  # the same file, now behind a link
    os.symlink(root / "dir.md", root / "link.md")  # a link to a folder
    os.mkfifo(root / "pipe.md")
    report = report_of(engine)
    assert (report["removed"], report["added"], report["unchanged"]) == (1, 0, 2)
    assert rel_paths(engine) == {"a.md", "dir.md/inner.md"}
