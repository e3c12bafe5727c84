"""Mail, mailboxes, calendars, subtitles and JSON Lines: converted with structure, refused
with a reason code when broken, and searchable after ``update``."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from gno_trio.engine.ingest.convert import Converted
from gno_trio.engine.ingest.documents.reasons import parse_warning
from gno_trio.engine.ingest.documents.registry import document_converter_for
from gno_trio.engine.ingest.documents.runner import ConversionRunner
from tests.support import message_factory as make
from tests.support.cli_support import Cli, make_cli

WORD = "zebrafinch"


def _convert(rel_path: str, data: bytes) -> Converted:
    converter = document_converter_for(rel_path)
    assert converter is not None, rel_path
    return converter.convert(rel_path, data)


def _lines(markdown: str) -> list[str]:
    return markdown.split("\n")


def test_an_email_has_its_fields_body_and_attachments_converted_inline() -> None:
    result = _convert("inbox/budget.eml", make.eml_bytes(WORD))
    lines = _lines(result.markdown)
    assert result.mime == "message/rfc822"
    assert lines[0] == "# Quarterly budget review"
    assert "- **From:** Ana Lima <ana@example.org>" in lines
    assert "- **To:** Team <team@example.org>, bo@example.org" in lines
    assert "- **Cc:** Cy Doe <cy@example.org>" in lines
    assert "- **Date:** 2026-03-02 09:15:00+01:00" in lines
    assert f"We approved the {WORD} line." in lines
    assert "> quoted reply" in lines  # the text body, not the HTML alternative as well
    assert result.markdown.count(WORD) == 1
    assert "## Attachments" in lines
    assert any(ln.startswith("- report.pdf (application/pdf, ") for ln in lines)
    assert any(ln.startswith("- minutes.md (text/markdown, ") for ln in lines)
    # Attachments of an indexed type are converted under their own heading, their
    # headings moved below the mail's.
    pdf = lines.index("## Attachment: report.pdf")
    assert lines[pdf + 2] == "### Attached Report"
    assert "pdfattachmentword" in result.markdown
    assert "### Minutes" in lines and "minutesattachmentword" in result.markdown


def test_an_html_only_email_has_its_html_converted() -> None:
    message = make.email_message(WORD, html_only=True, attach=False)
    result = _convert("note.eml", message.as_bytes())
    assert "## Budget" in _lines(result.markdown)
    assert f"We approved the **{WORD}** line." in result.markdown
    assert "<p>" not in result.markdown


def test_a_forwarded_message_is_written_as_a_message() -> None:
    outer = make.email_message("outerword", subject="Fwd: plans", attach=False)
    outer.add_attachment(make.email_message(WORD, subject="Plans", attach=False))
    lines = _lines(_convert("fwd.eml", outer.as_bytes()).markdown)
    assert "## Attachment: Plans" in lines or any(ln.startswith("## Attachment: ") for ln in lines)
    assert "### Plans" in lines
    assert f"We approved the {WORD} line." in lines


def test_a_mailbox_is_one_document_with_a_section_per_message() -> None:
    result = _convert("archive/team.mbox", make.mbox_bytes(WORD, messages=3))
    lines = _lines(result.markdown)
    assert lines[0] == "# team"
    assert [ln for ln in lines if ln.startswith("<!-- message")] == [
        f"<!-- message {n} of 3 -->" for n in (1, 2, 3)
    ]
    assert [ln for ln in lines if ln.startswith("## ")] == [
        "## Message 0 about topic0",
        "## Message 1 about topic1",
        f"## Message 2 about {WORD}",
    ]
    # The writer quoted a body line starting "From " as ">From "; it reads back unquoted.
    assert f"From the desk of Ana: notes on {WORD}." in lines


def test_a_ten_thousand_message_mailbox_is_streamed() -> None:
    data = make.mbox_bytes(WORD, messages=10_000)
    converter = document_converter_for("big.mbox")
    assert converter is not None
    tracemalloc.start()
    try:
        result = converter.convert("big.mbox", data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.markdown.count("<!-- message ") == 10_000
    assert f"## Message 9999 about {WORD}" in result.markdown
    # Memory holds the mirror being written and one message, never the parsed mailbox
    # (parsing every message first took about five times the mailbox's size here).
    assert peak < 4 * len(result.markdown) + 2_000_000


def test_a_calendar_states_events_with_zones_attendees_and_rules() -> None:
    result = _convert("team.ics", make.ics_bytes(WORD))
    lines = _lines(result.markdown)
    assert result.mime == "text/calendar"
    assert lines[0] == "# Team calendar"
    assert "<!-- event 1 of 2 -->" in lines
    standup = lines.index("## Weekly standup")
    fields = lines[standup + 2 : standup + 8]
    assert fields == [
        "- **Start:** 2026-03-02 09:00 Europe/Berlin",
        "- **End:** 2026-03-02 09:15 Europe/Berlin",
        "- **Location:** Room 4, Harbour Office",
        "- **Repeats:** weekly on MO, WE (FREQ=WEEKLY;BYDAY=MO,WE)",
        "- **Organizer:** cy@example.org",
        "- **Attendees:** Ana Lima <ana@example.org>, bo@example.org",
    ]
    assert f"Bring the {WORD} numbers." in lines
    festival = lines.index("## Harbour festival")
    assert lines[festival + 2 : festival + 4] == [
        "- **Start:** 2026-06-21",
        "- **End:** 2026-06-22",
    ]


def test_an_unbounded_rule_is_stated_not_expanded() -> None:
    data = make.ics_bytes(WORD).replace(b"FREQ=WEEKLY;BYDAY=MO,WE", b"FREQ=SECONDLY")
    result = _convert("busy.ics", data)
    assert "- **Repeats:** every second (FREQ=SECONDLY)" in _lines(result.markdown)
    assert result.markdown.count("## Weekly standup") == 1


def test_subtitles_become_paragraphs_with_time_anchors_and_speakers() -> None:
    vtt = _lines(_convert("tour.vtt", make.vtt_bytes(WORD)).markdown)
    assert [ln for ln in vtt if ln] == [
        "[00:00:01] Ana Lima: Welcome to the harbour tour. We start at the old crane.",
        "[00:00:05] Bo: Is the crane still working?",
        f"[00:00:12] Ana Lima: Only for the {WORD} festival.",
    ]
    srt = _convert("film.srt", make.srt_bytes(WORD))
    assert srt.mime == "application/x-subrip"
    assert [ln for ln in _lines(srt.markdown) if ln] == [
        "[00:00:01] JOHN: The storm is coming. We should close the shutters.",
        f"[00:00:09] MARY: Bring the {WORD} inside.",
    ]


def test_json_lines_read_as_a_dialogue_and_records_with_a_bad_line_listed() -> None:
    result = _convert("chat.jsonl", make.jsonl_bytes(WORD))
    lines = _lines(result.markdown)
    assert "**user:** How do I prune an apple tree?" in lines
    assert f"**assistant:** Cut in late winter; keep the {WORD}." in lines
    assert "- **id:** conv-2" in lines
    assert "**system:** You are a gardener." in lines and "**user:** And pears?" in lines
    assert "- **species:** heron" in lines and '- **site:** {"name":"pond"}' in lines
    assert "<!-- line 4 -->" in lines
    assert any(ln.startswith("(line 5 is not valid JSON: ") for ln in lines)
    assert [parse_warning(w) for w in result.warnings] == [
        {"code": "PARTIAL", "message": "lines not valid JSON, left out: 5"}
    ]


BROKEN = {
    "junk.eml": b"just a line of text without any header\n",
    "junk.mbox": b"Subject: no envelope line\n\nbody\n",
    "junk.ics": b"BEGIN:VCALENDAR\nthis is not a content line\nEND:VCALENDAR\n",
    "junk.vtt": b"not a caption file\nat all\n",
    "junk.srt": b"1\nnot a time line\nhello\n",
    "junk.jsonl": b"{not json\nalso not\n",
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_input_is_refused_with_a_reason_code_in_the_worker(name: str) -> None:
    with ConversionRunner(workers=1) as runner:
        outcome = next(iter(runner.run([make_job(name, BROKEN[name])])))
    assert outcome.error is not None
    assert outcome.error.code == "CONVERSION_FAILED"
    assert outcome.error.message.startswith(f"{name}: ")


def make_job(name: str, data: bytes) -> Any:
    from gno_trio.engine.ingest.documents.runner import ConversionJob

    return ConversionJob(name, data)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    cli = make_cli(tmp_path_factory.mktemp("messages"))
    root = cli.home / "kept"
    root.mkdir()
    for ext, writer in make.WRITERS.items():
        (root / f"sample{ext}").write_bytes(writer(f"{ext[1:]}{WORD}"))
    (root / "broken.jsonl").write_bytes(BROKEN["junk.jsonl"])
    cli.run("init", str(root), "--name", "kept")
    cli.run("update")
    return cli


@pytest.mark.parametrize("ext", sorted(make.WRITERS))
def test_update_indexes_each_format_and_search_finds_it(folder: Cli, ext: str) -> None:
    hits: list[dict[str, Any]] = folder.json("search", f"{ext[1:]}{WORD}")["results"]
    assert [h["source"]["relPath"] for h in hits] == [f"sample{ext}"]
    assert hits[0]["conversion"]["converterId"] == document_converter_for(f"x{ext}").id  # type: ignore[union-attr]


def test_status_lists_broken_input_with_its_reason(folder: Cli, tmp_path: Path) -> None:
    (collection,) = folder.json("status")["collections"]
    assert {e["relPath"]: e["code"] for e in collection["errors"]} == {
        "broken.jsonl": "CONVERSION_FAILED"
    }
    assert json.dumps(collection["skipped"]) == "[]"
