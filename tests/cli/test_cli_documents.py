"""The issue's acceptance: a folder of everyday documents, indexed or listed with a reason.

One PDF, DOCX, XLSX, PPTX and HTML file, each with a unique word, and a
Latin-1 text file: after ``gno-trio update`` a search finds each word in its
own file, and ``status --json`` lists every file that was not indexed with
its reason (a random-bytes ``.xyz`` file included, never silently dropped).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support import document_factory as make
from tests.support.cli_support import Cli, make_cli

WORDS = {
    "report.pdf": "pdfaardvark",
    "memo.docx": "docxbadger",
    "budget.xlsx": "xlsxcapybara",
    "deck.pptx": "pptxdingo",
    "page.html": "htmlechidna",
}
LATIN1_WORD = "latinferret"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Cli, Path]:
    cli = make_cli(tmp_path_factory.mktemp("documents"))
    root = cli.home / "papers"
    root.mkdir()
    for name, word in WORDS.items():
        ext = name[name.rindex(".") :]
        (root / name).write_bytes(make.WRITERS[ext](word))
    (root / "old.txt").write_bytes(f"Crème brûlée à la {LATIN1_WORD}.\n".encode("latin-1"))
    (root / "noise.xyz").write_bytes(make.random_bytes(2048))
    (root / "locked.pdf").write_bytes(make.locked_pdf_bytes())
    (root / "cut.pdf").write_bytes(make.pdf_bytes("nothing")[:700])
    (root / "bomb.docx").write_bytes(make.zip_bomb_like(make.docx_bytes("x"), inflated_mb=64))
    (root / "notes.proto").write_text('syntax = "proto3";\n', "utf-8")
    cli.run("init", str(root), "--name", "papers")
    cli.run("update")
    return cli, root


def _search(cli: Cli, word: str) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = cli.json("search", word)["results"]
    return results


@pytest.mark.parametrize("name", sorted(WORDS))
def test_search_finds_each_planted_word_in_its_own_file(
    folder: tuple[Cli, Path], name: str
) -> None:
    cli, _ = folder
    (hit,) = _search(cli, WORDS[name])
    assert hit["source"]["relPath"] == name
    assert hit["conversion"]["converterId"].startswith("document/")
    assert hit["conversion"]["mirrorHash"]
    expected_mime = {
        ".pdf": "application/pdf",
        ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        ".html": "text/html",
    }[name[name.rindex(".") :]]
    assert hit["source"]["mime"] == expected_mime
    # The line anchor points into the mirror, and get returns that line with the word.
    line = hit["line"]
    got = cli.json("get", hit["uri"], "--from", str(line), "-l", "200")
    assert WORDS[name] in got["content"]
    assert got["conversion"] == hit["conversion"]
    # The mirror is not the source: writing it back would destroy the document.
    assert got["capabilities"]["editable"] is False
    assert got["capabilities"]["reason"] == "converted from a non-text source"


def test_latin1_text_is_decoded_with_its_warning(folder: tuple[Cli, Path]) -> None:
    cli, _ = folder
    (hit,) = _search(cli, LATIN1_WORD)
    assert hit["source"]["relPath"] == "old.txt"
    assert hit["conversion"]["warnings"] == [
        {"code": "LOW_CONFIDENCE", "message": "decoded as Windows-1252 (detected)"}
    ]
    got = cli.json("get", hit["uri"])
    assert "Crème brûlée" in got["content"]
    assert got["capabilities"]["mode"] == "read_only"
    assert "legacy text encoding" in got["capabilities"]["reason"]


def test_status_lists_every_file_not_indexed_with_its_reason(folder: tuple[Cli, Path]) -> None:
    cli, root = folder
    (collection,) = cli.json("status")["collections"]
    errors = {e["relPath"]: e["code"] for e in collection["errors"]}
    skipped = {e["relPath"]: e["code"] for e in collection["skipped"]}
    assert errors == {
        "locked.pdf": "ENCRYPTED",
        "cut.pdf": "CONVERSION_FAILED",
        "bomb.docx": "TOO_LARGE",
    }
    assert skipped == {"noise.xyz": "BINARY_FILE", "notes.proto": "UNSUPPORTED_TYPE"}
    assert collection["errorCount"] == 3 and collection["skippedCount"] == 2
    indexed = {d["relPath"] for d in cli.json("ls")["documents"]}
    on_disk = {p.name for p in root.iterdir()}
    assert indexed | set(errors) | set(skipped) == on_disk
    assert not indexed & (set(errors) | set(skipped))


def test_human_status_names_the_skipped_files(folder: tuple[Cli, Path]) -> None:
    cli, _ = folder
    out = cli.run("status").stdout
    assert "3 errors, 2 skipped" in out
    assert "locked.pdf: ENCRYPTED" in out and "noise.xyz: BINARY_FILE" in out


def test_a_second_update_judges_nothing_again(folder: tuple[Cli, Path]) -> None:
    cli, _ = folder
    (report,) = cli.json("update")["collections"]
    assert report["unchanged"] == 6
    assert report["skipped"] == 2
    assert sorted(e["relPath"] for e in report["errors"]) == ["bomb.docx", "cut.pdf", "locked.pdf"]
    assert report["added"] == report["updated"] == 0
