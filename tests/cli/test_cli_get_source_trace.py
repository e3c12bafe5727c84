"""``get --source`` and retrieval trace receipts (``Trace: ID``, ``get --trace-id``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gno_trio.config.dirs import resolve_dirs
from gno_trio.engine import Engine
from tests.conftest import write_corpus
from tests.support.cli_support import TRACING, Cli, make_cli

RECEIPT = re.compile(r"^Trace: ([0-9a-f-]{36})$", re.MULTILINE)


@pytest.fixture
def notes(tmp_path: Path) -> Cli:
    cli = make_cli(tmp_path)
    root = write_corpus(cli.home / "notes", {"plan.md": "# Plan\n\nline three okapi\nfour\n"})
    cli.run("init", str(root), "--name", "notes")
    cli.run("update")
    return cli


def _trace_runs(cli: Cli, trace_id: str) -> list[tuple[str, list[tuple[int, int]]]]:
    with Engine.open(dirs=resolve_dirs(cli.env), create=False) as engine:
        shown = engine.traces.show(trace_id)
    return [
        (
            run["kind"],
            [
                (e["startLine"], e["endLine"])
                for e in run["payload"].get("evidence", run["payload"].get("ranked", []))
            ],
        )
        for run in shown["runs"]
    ]


def test_get_source_prints_the_file_behind_the_text(notes: Cli) -> None:
    plain = notes.run("get", "notes/plan.md").stdout
    assert plain == "# Plan\n\nline three okapi\nfour\n"  # unchanged without the flag
    shown = notes.run("get", "notes/plan.md", "--source").stdout
    header, _, text = shown.partition("\n\n")
    assert text == plain
    fields = dict(line.split(": ", 1) for line in header.splitlines())
    assert fields["Path"] == str(notes.home / "notes" / "plan.md")
    assert fields["Type"] == "text/markdown (.md)"
    assert fields["Size"] == f"{len(plain)} bytes"
    assert re.fullmatch(r"[0-9a-f]{64}", fields["Source hash"])
    assert fields["URI"].startswith("gno://notes/plan.md #")
    md = notes.run("get", "notes/plan.md", "--source", "--md").stdout
    assert "- **Type:** text/markdown (.md)" in md and "- **Source hash:** " in md
    as_json = notes.json("get", "notes/plan.md", "--source")
    assert as_json == notes.json("get", "notes/plan.md")  # JSON always carries source
    assert "source file's metadata" in notes.run("get", "--help").stdout


def test_tracing_off_prints_no_receipt_and_get_says_why(notes: Cli) -> None:
    assert "Trace:" not in notes.run("search", "okapi").stderr
    done = notes.run("get", "notes/plan.md:3", "-l", "1", "--trace-id", "x")
    assert "retrieval tracing is off" in done.stderr
    assert done.stdout == "line three okapi\n"


def test_search_receipt_then_get_records_the_returned_lines(notes: Cli) -> None:
    notes.config_file.write_text(notes.config_file.read_text() + TRACING)
    done = notes.run("search", "okapi", "--json")
    assert json.loads(done.stdout)["results"][0]["uri"] == "gno://notes/plan.md"  # payload only
    found = RECEIPT.search(done.stderr)
    assert found is not None, done.stderr
    trace_id = found.group(1)
    assert _trace_runs(notes, trace_id) == [("retrieval", [(1, 4)])]

    read = notes.run("get", "notes/plan.md:3", "-l", "1", "--trace-id", trace_id)
    assert read.stdout == "line three okapi\n"
    assert read.stderr.strip() == f"Trace: {trace_id}"
    assert _trace_runs(notes, trace_id)[1] == ("get", [(3, 3)])

    whole = notes.run("get", "notes/plan.md", "--trace-id", trace_id)
    assert "only a line range is recorded" in whole.stderr
    unknown = notes.run("get", "notes/plan.md:3", "--trace-id", "0" * 8)
    assert "no open trace has that id" in unknown.stderr
    assert len(_trace_runs(notes, trace_id)) == 2  # neither was recorded

    for command in (("query", "okapi"), ("query", "okapi", "--json")):
        assert RECEIPT.search(notes.run(*command).stderr), command


def test_trace_commands_list_show_label_export_delete_and_purge(
    notes: Cli, schema_check: Callable[[str, Any], None]
) -> None:
    notes.config_file.write_text(notes.config_file.read_text() + TRACING)
    found = RECEIPT.search(notes.run("context", "build", "okapi", "--budget", "4000").stderr)
    assert found is not None
    capsule_trace = found.group(1)  # a Capsule's trace is finished at once
    search = RECEIPT.search(notes.run("search", "okapi").stderr)
    assert search is not None

    listed = notes.json("trace", "list")
    schema_check("retrieval-trace-list", listed)
    assert {t["traceId"] for t in listed["traces"]} == {capsule_trace, search.group(1)}
    shown = notes.json("trace", "show", capsule_trace)
    schema_check("retrieval-trace-show", shown)
    assert [run["kind"] for run in shown["runs"]] == ["context"]
    assert notes.run("trace", "show", capsule_trace).stdout.startswith(f"Trace {capsule_trace}: ")

    labelled = notes.json(
        "trace",
        "label",
        capsule_trace,
        "--label",
        "missing-expected",
        "--target",
        "gno://notes/other.md",
    )
    schema_check("retrieval-trace-judgment", labelled)
    assert labelled["judgment"]["label"] == "missing_expected"
    exported = notes.json("trace", "export", capsule_trace)
    schema_check("retrieval-trace-export", exported)
    assert notes.json("trace", "export", capsule_trace, "--format", "qrels", code=1)["error"] == (
        "VALIDATION"
    )

    assert notes.json("trace", "delete", search.group(1))["deleted"] is True
    refused = notes.json("trace", "purge", code=1)
    assert "gno-trio --yes trace purge" in refused["message"]
    purged = notes.json("--yes", "trace", "purge")
    schema_check("retrieval-trace-purge", purged)
    assert notes.json("trace", "list")["traces"] == []
    assert notes.json("trace", "show", capsule_trace, code=1)["error"] == "NOT_FOUND"
