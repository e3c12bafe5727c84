"""``query``, ``search`` and the read commands as a user runs them: flags, formats, refs.

The read-only tests share one sandbox with the gno-evals fixture corpus
indexed as collection ``evals`` (read in place, never copied) plus a few
small notes. Each output format is checked by parsing it the way a program
downstream would (``csv``, ``xml.etree``), not by looking for substrings.
"""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, QueryOptions, SearchRequest
from tests.conftest import write_corpus
from tests.support.cli_support import Cli, make_cli
from tests.support.shared import EVALS_CORPUS as EVALS
from tests.support.shared import required
from tests.support.stdio_session import open_mcp_server

SchemaCheck = Callable[[str, Any], None]
NOTES = {
    "kube.md": "# Kube\n\nokapi rollout plan\nsecond line\nthird line\n",
    "quoted.md": "# Quoted\n\nthe exact phrase lives here\n",
}


@pytest.fixture(scope="module")
def evals(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    required(EVALS, "the shared gno-evals fixture corpus")
    sandbox = make_cli(tmp_path_factory.mktemp("retrieval"))
    notes = write_corpus(sandbox.home / "notes", NOTES)
    sandbox.run("collection", "add", str(EVALS), "--name", "evals")
    sandbox.run("collection", "add", str(notes), "--name", "notes")
    sandbox.run("update")
    return sandbox


def _dirs(cli: Cli) -> Dirs:
    return Dirs(cli.config_dir, cli.data_dir, cli.data_dir.parent / "cache")


# ---------------------------------------------------------------------------
# query
# ---------------------------------------------------------------------------


def test_query_json_returns_results_on_the_evals_corpus(
    evals: Cli, schema_check: SchemaCheck
) -> None:
    result = evals.json("query", "deployment rollback", "-c", "evals")
    schema_check("search-results", result)
    assert result["results"], result
    assert all(hit["uri"].startswith("gno://evals/") for hit in result["results"])
    assert result["meta"]["query"] == "deployment rollback"


def test_query_prints_what_the_engine_returns(evals: Cli) -> None:
    """The CLI is a thin surface: same request, same answer as the engine's query."""
    shown = evals.json(
        "query", "error handling", "-n", "7", "--query-mode", "term:exceptions", "-C", "30"
    )
    with Engine.open(dirs=_dirs(evals), create=False) as engine:
        direct = engine.search.query(
            SearchRequest(query="error handling", limit=7),
            QueryOptions(query_modes=[("term", "exceptions")], candidate_limit=30),
        )
    assert [h["uri"] for h in shown["results"]] == [h["uri"] for h in direct["results"]]
    assert shown["meta"] == direct["meta"]
    assert shown["meta"]["queryModes"]["term"] == 1
    assert shown["meta"]["candidateLimit"] == 30


def test_query_flags_reach_the_engine(evals: Cli) -> None:
    thorough = evals.json("query", "deployment", "--thorough")
    assert thorough["meta"]["candidateLimit"] == 40
    fast = evals.json("query", "deployment", "--fast", "--no-graph", "--no-expand", "--no-rerank")
    assert fast["results"]
    filtered = evals.json("query", "deployment", "--min-score", "0.5", "-c", "evals")
    assert all(hit["score"] >= 0.5 for hit in filtered["results"])
    assert filtered["meta"]["minScore"] == 0.5


def test_query_explain_goes_to_stderr(evals: Cli) -> None:
    done = evals.run("query", "deployment", "--explain", "--files")
    assert "[explain] lexical:" in done.stderr
    assert re.search(r"\[explain\] result 1: score=\d\.\d{3}", done.stderr)
    assert "[explain]" not in done.stdout
    assert all(re.fullmatch(r"#[0-9a-f]{8},[\d.]+,gno://\S+", line) for line in done.stdout.split())


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--query-mode", "nonsense"), "--query-mode takes MODE:TEXT"),
        (("--query-mode", "vibe:x"), "--query-mode takes MODE:TEXT"),
        (("--fast", "--thorough"), "not allowed with argument"),
        (("-C", "0"), "candidateLimit must be between 1 and 100"),
        (("--query-mode", "hyde:a", "--query-mode", "hyde:b"), "At most one hyde"),
    ],
)
def test_query_rejects_bad_flags(evals: Cli, args: tuple[str, ...], needle: str) -> None:
    done = evals.run("query", "deployment", *args, code=1)
    assert needle in done.stderr


# ---------------------------------------------------------------------------
# Output formats
# ---------------------------------------------------------------------------


def test_files_format_is_the_line_protocol_with_the_json_row_count(evals: Cli) -> None:
    lines = evals.run("search", "in", "--files").stdout.splitlines()
    assert len(lines) == len(evals.json("search", "in")["results"]) > 5
    for line in lines:
        docid, score, uri = line.split(",", 2)
        assert re.fullmatch(r"#[0-9a-f]{8}", docid) and 0 <= float(score) <= 1
        assert uri.startswith("gno://")
    assert len(evals.run("search", "in").stdout.split("\n\n")) == 1 + 5  # heading + 5 hits


def test_csv_format_parses_with_a_header(evals: Cli) -> None:
    out = evals.run("query", "okapi", "--csv", "-c", "notes").stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["uri"] for r in rows] == ["gno://notes/kube.md"]
    assert rows[0]["title"] == "Kube" and rows[0]["line"] == "3"
    assert "okapi rollout plan" in rows[0]["snippet"] and "<mark>" not in rows[0]["snippet"]


def test_xml_format_parses(evals: Cli) -> None:
    out = evals.run("search", "okapi", "--xml").stdout
    root = ET.fromstring(out.split("\n", 1)[1])
    assert root.tag == "results" and root.get("query") == "okapi"
    (hit,) = root.findall("result")
    assert hit.get("uri") == "gno://notes/kube.md" and hit.findtext("title") == "Kube"


def test_md_format_has_a_section_per_hit(evals: Cli) -> None:
    out = evals.run("search", "okapi", "--md").stdout
    assert out.startswith('# Found 1 result for "okapi"')
    assert "## 1. Kube" in out and "`gno://notes/kube.md:3`" in out
    assert re.search(r"^> .*\*\*okapi\*\* rollout plan", out, re.MULTILINE)


def test_two_formats_at_once_are_refused(evals: Cli) -> None:
    done = evals.run("search", "okapi", "--csv", "--json", code=1)
    assert "Choose one output format" in done.stderr


def test_read_commands_offer_their_formats(evals: Cli) -> None:
    listing = evals.run("ls", "notes", "--files").stdout.splitlines()
    assert [line.rsplit(",", 1)[1] for line in listing] == [
        "gno://notes/kube.md",
        "gno://notes/quoted.md",
    ]
    assert "| Docid | URI | Title |" in evals.run("ls", "--md").stdout
    many = evals.run("multi-get", "notes/*.md", "--files").stdout.splitlines()
    assert [line.split(",")[2] for line in many] == ["gno://notes/kube.md", "gno://notes/quoted.md"]
    page = evals.run("get", "notes/kube.md", "--md").stdout
    assert page.startswith("# Kube\n") and "```markdown\n# Kube\n" in page
    assert "| Collection |" in evals.run("status", "--md").stdout
    assert "| evals |" in evals.run("collection", "list", "--md").stdout


def test_full_and_line_numbers_on_search(evals: Cli) -> None:
    full = evals.json("search", "okapi", "--full")
    assert full["results"][0]["snippet"] == NOTES["kube.md"]
    numbered = evals.run("search", "okapi", "--line-numbers").stdout
    assert "  3: okapi rollout plan" in numbered
    both = evals.run("search", "okapi", "--full", "--line-numbers").stdout
    assert "  1: # Kube\n  2: \n  3: okapi rollout plan\n  4: second line" in both


def test_numbered_snippet_lines_are_the_documents_lines(evals: Cli) -> None:
    """Every numbered snippet line is that line of the document (checked with ``get``)."""
    result = evals.json("search", "configuration", "-c", "evals", "--line-numbers")
    assert result["results"]
    uris = ",".join(hit["uri"] for hit in result["results"])
    documents = evals.json("multi-get", uris, "--max-bytes", "10000000")["documents"]
    texts = {doc["uri"]: doc["content"].split("\n") for doc in documents}
    for hit in result["results"]:
        lines = texts[hit["uri"]]
        for numbered in hit["snippet"].split("\n"):
            number, _, text = numbered.partition(": ")
            plain = text.replace("<mark>", "").replace("</mark>", "").strip(". ")
            assert plain in lines[int(number) - 1], (hit["uri"], number, plain)


# ---------------------------------------------------------------------------
# get with a line anchor, and empty reads
# ---------------------------------------------------------------------------


def test_get_starts_at_the_line_a_hit_prints(evals: Cli, schema_check: SchemaCheck) -> None:
    uri = "gno://evals/en/api-reference.md"
    result = evals.json("get", f"{uri}:5", "-l", "2")
    schema_check("get", result)
    assert result["returnedLines"] == {"start": 5, "end": 6}
    whole = evals.json("get", uri)["content"].split("\n")
    assert result["content"] == "\n".join(whole[4:6])
    hit = evals.json("search", "okapi")["results"][0]
    text = evals.run("get", f"{hit['uri']}:{hit['line']}", "-l", "1").stdout
    assert text == "okapi rollout plan\n"
    assert evals.json("get", "notes/kube.md:3", "--from", "1", "-l", "1")["content"] == "# Kube"


@pytest.mark.parametrize(
    ("ref", "needle"),
    [("notes/kube.md:0", "line suffix"), ("#abcdef:3", "docid")],
)
def test_get_rejects_bad_line_suffixes(evals: Cli, ref: str, needle: str) -> None:
    done = evals.run("get", ref, code=1)
    assert needle in done.stderr


async def test_gno_get_honours_the_line_suffix_too(evals: Cli) -> None:
    env = dict(evals.env)
    async with open_mcp_server(env, client_name="line-suffix") as session:
        answer = await session.tool("gno_get", {"ref": "notes/kube.md:3", "lineCount": 1})
    structured = answer["structuredContent"]
    assert structured["returnedLines"] == {"start": 3, "end": 3}
    assert structured["content"] == "3: okapi rollout plan"


def test_reads_past_the_end_and_empty_matches_say_so(evals: Cli) -> None:
    done = evals.run("get", "notes/kube.md", "--from", "99999")
    assert done.stdout == ""
    assert "line 99999 is past the end of gno://notes/kube.md (6 lines)" in done.stderr
    assert evals.json("get", "notes/kube.md", "--from", "99999")["content"] == ""
    nothing = evals.run("multi-get", "nomatch/*")
    assert nothing.stdout == "" and "No documents match nomatch/*" in nothing.stderr
    assert evals.json("multi-get", "nomatch/*")["documents"] == []
    assert "No results for" in evals.run("search", "zzyzxnothing").stdout


def test_quiet_prints_the_result_only_and_gno_global_flags_are_accepted(
    evals: Cli, tmp_path: Path
) -> None:
    done = evals.run("get", "notes/kube.md", "--from", "99999", "--quiet")
    assert done.stdout == "" and done.stderr == ""
    nothing = evals.run("--quiet", "multi-get", "nomatch/*")
    assert nothing.stdout == "" and nothing.stderr == ""
    loud = evals.run("--no-color", "--no-pager", "--offline", "-y", "get", "notes/kube.md")
    assert loud.stdout.startswith("# Kube")
    fresh = make_cli(tmp_path)
    fresh.run("init", str(write_corpus(tmp_path / "inbox", {"a.md": "# A\n"})), "--name", "inbox")
    captured = fresh.run("capture", "a quiet thought", "--quiet")
    assert re.fullmatch(r"gno://inbox/\S+\.md\n", captured.stdout), captured.stdout
    assert fresh.json("capture", "another", "--quiet")["uri"].startswith("gno://inbox/")


def test_multi_get_takes_comma_separated_refs_and_index_uris(evals: Cli) -> None:
    result = evals.json("multi-get", "notes/kube.md,notes/quoted.md")
    assert [d["uri"] for d in result["documents"]] == [
        "gno://notes/kube.md",
        "gno://notes/quoted.md",
    ]
    named = evals.json("multi-get", "gno://notes/kube.md?index=default")
    assert [d["uri"] for d in named["documents"]] == ["gno://notes/kube.md"]


# ---------------------------------------------------------------------------
# Words
# ---------------------------------------------------------------------------


def test_counts_and_queries_read_naturally(evals: Cli) -> None:
    one = evals.run("search", "okapi").stdout
    assert one.startswith('Found 1 result for "okapi"\n')
    phrase = evals.run("search", '"exact phrase"').stdout
    assert phrase.startswith("Found 1 result for '\"exact phrase\"'\n")
    assert '""' not in phrase


def test_unknown_commands_suggest_the_nearest(cli: Cli) -> None:
    done = cli.run("serach", "x", code=1)
    assert "did you mean search?" in done.stderr
    assert "did you mean collection?" in cli.run("colection", "list", code=1).stderr


def test_hints_name_the_command_to_run(cli: Cli) -> None:
    done = cli.run("--index", "other", "status", code=2)
    assert "run `gno-trio --index other init` first" in done.stderr
    config = cli.home / "my.yml"
    done = cli.run("--index", "other", "--config", str(config), "search", "x", code=2)
    assert f"run `gno-trio --index other --config {config} init` first" in done.stderr


def test_query_diagnose_traces_a_target(evals: Cli, schema_check: SchemaCheck) -> None:
    traced = evals.json("query", "diagnose", "okapi", "--target", "notes/kube.md")
    schema_check("query-diagnose", traced)
    assert traced["target"]["status"] == "diagnosed"
    assert traced["stages"][0]["id"] == "bm25" and traced["stages"][0]["rank"] == 1
    human = evals.run("query", "diagnose", "okapi", "--target", "notes/kube.md").stdout
    assert human.startswith('gno://notes/kube.md: diagnosed for "okapi"')
    assert "needs --target" in evals.run("query", "diagnose", "okapi", code=1).stderr
    assert "put the query in quotes" in evals.run("query", "two", "words", code=1).stderr
    assert "--target belongs to" in evals.run("query", "okapi", "--target", "x/y", code=1).stderr
