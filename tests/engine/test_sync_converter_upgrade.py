"""An index converted by an older converter is converted again by the next sync.

A converter's version (its rendering rules and its parsing library's
version) is stamped on each document. When today's code converts a type
differently (PDF soft hyphens, a workbook's real rows), an unchanged file
stamped with another version must not keep yesterday's text for good.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from tests.support import document_factory as make
from tests.support.cli_support import Cli, make_cli


def _conversions(cli: Cli) -> dict[str, tuple[str, str]]:
    with sqlite3.connect(cli.db) as conn:
        rows = conn.execute("SELECT rel_path, converter_id, converter_version FROM documents")
        return {rel: (cid, version) for rel, cid, version in rows}


def _stamp(cli: Cli, rel_path: str, converter_id: str, version: str) -> None:
    """Leave the document as an earlier release (another converter version) left it."""
    with sqlite3.connect(cli.db) as conn:
        conn.execute(
            "UPDATE documents SET converter_id = ?, converter_version = ? WHERE rel_path = ?",
            (converter_id, version, rel_path),
        )


def _report(cli: Cli) -> dict[str, Any]:
    (report,) = cli.json("update")["collections"]
    return report  # type: ignore[no-any-return]


def test_a_document_stamped_by_another_converter_version_is_converted_again(
    tmp_path: Any,
) -> None:
    cli = make_cli(tmp_path)
    root = cli.home / "papers"
    root.mkdir()
    (root / "field.pdf").write_bytes(make.pdf_bytes("okapi"))
    (root / "intro.md").write_text("# Intro\n\nWelcome to the papers.\n", "utf-8")
    cli.run("init", str(root), "--name", "papers")
    cli.run("update")
    today = _conversions(cli)
    pdf_id, pdf_version = today["field.pdf"]
    assert pdf_id == "document/pdf"

    _stamp(cli, "field.pdf", pdf_id, "0+pypdfium2.0.0")
    _stamp(cli, "intro.md", "native/retired", "1")  # a converter that is gone
    report = _report(cli)
    assert report["updated"] == 2 and report["unchanged"] == 0, report
    assert _conversions(cli) == today

    # Converted by today's versions, nothing is converted again.
    report = _report(cli)
    assert report["updated"] == 0 and report["unchanged"] == 2, report
    hit = cli.json("search", "okapi")["results"][0]
    assert hit["conversion"]["converterVersion"] == pdf_version
