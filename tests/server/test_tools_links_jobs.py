"""Links, backlinks, background jobs and the collection write tools.

Engine tests resolve links over a small two-collection vault written per
test (and over the shared ``mcp-docs`` corpus, whose pages link each other
by site paths). Job manager tests drive :class:`~gno_trio.jobs.JobManager`
with hand-made work. Handler tests call the tool adapters in process with a
real runtime, so a job can be held open deterministically. The wire tests
spawn ``python -m gno_trio mcp`` and speak raw JSON-RPC to it. Every
``structuredContent`` is checked against our advertised output schema and,
where GNO publishes one, against GNO's too.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gno_trio.config import Context, load_config
from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, SearchRequest
from gno_trio.engine.graph import link_lists
from gno_trio.engine.graph import links as links
from gno_trio.engine.jobs import JobControl, JobManager, JobPlan
from gno_trio.engine.store.lease import write_lease
from gno_trio.engine.store.links import SqliteLinks
from gno_trio.errors import GnoError
from gno_trio.protocol.versions import Era
from gno_trio.runtime import Runtime
from gno_trio.server.context import RequestContext, ToolCallContext
from gno_trio.server.schemas import output_schema, output_schema_errors
from gno_trio.server.tooltypes import ToolResult
from gno_trio.tools import CATALOGUE
from gno_trio.tools import collections as collection_tools
from gno_trio.tools import jobs as job_tools
from gno_trio.tools import links as link_tools
from gno_trio.tools.collections import AddCollectionInput, RemoveCollectionInput, SyncInput
from gno_trio.tools.jobs import JobStatusInput, ListJobsInput
from gno_trio.tools.links import BacklinksInput, LinksInput
from tests.conftest import error_code
from tests.support.shared import MCP_DOCS, required
from tests.support.stdio_session import server_environment
from tests.support.tool_pipe import mcp_server, write_tree
from tests.support.tool_results import handler_error_code, tool_error_code

VAULT: dict[str, dict[str, str]] = {
    "notes": {
        "index.md": (
            "# Index\n"
            "\n"
            "Wiki: [[Target Note]], [[target|the target]], [[Deep]] and [[other:Elsewhere#Top]].\n"
            "Markdown: [relative](sub/deep.md), [rooted](/sub/deep), [folder](guide) and "
            "[uri](gno://other/elsewhere.md).\n"
            "Broken: [[Nowhere]], [gone](missing.md) and [escape](../outside.md).\n"
        ),
        "target.md": "# Target Note\n\nBack to [the index](index.md).\n",
        "sub/deep.md": "# Deep Dive\n\nUp to [[Index]] and [target](../target.md).\n",
        "guide/index.md": "# Guide\n\nSee [[target]].\n",
    },
    "other": {
        "elsewhere.md": "# Elsewhere\n\n## Top\n\nHome: [[notes:index]]; not here: [[Index]].\n",
    },
}

INDEX_LINKS = [
    # (type, targetRef, resolved to, line)
    ("wiki", "Target Note", "gno://notes/target.md", 3),  # by title
    ("wiki", "target", "gno://notes/target.md", 3),  # by path without extension
    ("wiki", "Deep", "gno://notes/sub/deep.md", 3),  # by file stem
    ("wiki", "Elsewhere", "gno://other/elsewhere.md", 3),  # collection prefix
    ("markdown", "sub/deep.md", "gno://notes/sub/deep.md", 4),  # relative path
    ("markdown", "/sub/deep", "gno://notes/sub/deep.md", 4),  # rooted, extension implied
    ("markdown", "guide", "gno://notes/guide/index.md", 4),  # folder index page
    ("markdown", "gno://other/elsewhere.md", "gno://other/elsewhere.md", 4),
    ("wiki", "Nowhere", None, 5),
    ("markdown", "missing.md", None, 5),
    ("markdown", "../outside.md", None, 5),  # outside the collection root
]


@pytest.fixture
def vault(engine: Engine, tmp_path: Path) -> Engine:
    for name, files in VAULT.items():
        engine.collections.add(str(write_tree(tmp_path / "vault" / name, files)), name=name)
    engine.sync()
    return engine


def outgoing(engine: Engine, ref: str, **options: Any) -> dict[str, Any]:
    with engine.connection() as conn:
        result = link_lists.outgoing(conn, ref, **options)
    assert output_schema_errors(output_schema("links-list"), result) == []
    return result


def incoming(engine: Engine, ref: str, **options: Any) -> dict[str, Any]:
    with engine.connection() as conn:
        result = link_lists.backlinks(conn, ref, **options)
    assert output_schema_errors(output_schema("backlinks"), result) == []
    return result


# ---------------------------------------------------------------------------
# Links and backlinks in the engine
# ---------------------------------------------------------------------------


def test_outgoing_links_resolve_by_title_path_stem_prefix_and_relative_path(
    vault: Engine, schema_check: Callable[[str, Any], None]
) -> None:
    result = outgoing(vault, "gno://notes/index.md")
    schema_check("links-list", result)
    seen = [
        (link["linkType"], link["targetRef"], link.get("resolvedUri"), link["startLine"])
        for link in result["links"]
    ]
    assert seen == INDEX_LINKS
    assert result["meta"] == {
        "docid": result["meta"]["docid"],
        "uri": "gno://notes/index.md",
        "title": "Index",
        "totalLinks": 11,
        "resolvedCount": 8,
        "resolutionAvailable": True,
    }
    prefixed = result["links"][3]
    assert (prefixed["targetCollection"], prefixed["targetAnchor"]) == ("other", "Top")
    assert result["links"][1]["linkText"] == "the target"
    assert result["links"][0]["linkText"] == "Target Note"  # a bare wiki link shows its target
    assert result["links"][0]["resolvedTitle"] == "Target Note"
    assert result["links"][0]["startCol"] == 7
    assert "resolvedDocid" not in result["links"][8]


def test_type_filter_keeps_one_kind_and_says_so(vault: Engine) -> None:
    wiki = outgoing(vault, "notes/index.md", link_type="wiki")
    assert {link["linkType"] for link in wiki["links"]} == {"wiki"}
    assert (wiki["meta"]["totalLinks"], wiki["meta"]["resolvedCount"]) == (5, 4)
    assert wiki["meta"]["typeFilter"] == "wiki"
    markdown = outgoing(vault, "notes/index.md", link_type="markdown")
    assert len(markdown["links"]) == 6 and markdown["meta"]["typeFilter"] == "markdown"


def test_unprefixed_wiki_links_stay_in_their_own_collection(vault: Engine) -> None:
    result = outgoing(vault, "other/elsewhere.md")
    assert [(link["targetRef"], link.get("resolvedUri")) for link in result["links"]] == [
        ("index", "gno://notes/index.md"),
        ("Index", None),  # "other" has no index page
    ]


def test_backlinks_are_the_links_that_resolve_to_the_document(
    vault: Engine, schema_check: Callable[[str, Any], None]
) -> None:
    result = incoming(vault, outgoing(vault, "notes/index.md")["meta"]["docid"])
    schema_check("backlinks", result)
    assert [(b["sourceUri"], b["startLine"], b.get("linkText")) for b in result["backlinks"]] == [
        ("gno://notes/sub/deep.md", 3, "Index"),
        ("gno://notes/target.md", 3, "the index"),
        ("gno://other/elsewhere.md", 5, "index"),
    ]
    assert result["meta"]["uri"] == "gno://notes/index.md"
    assert result["meta"]["totalBacklinks"] == 3
    assert "collection" not in result["meta"]
    target = incoming(vault, "notes/target.md")
    assert Counter(b["sourceUri"] for b in target["backlinks"]) == {
        "gno://notes/index.md": 2,
        "gno://notes/sub/deep.md": 1,
        "gno://notes/guide/index.md": 1,
    }


def test_backlinks_collection_filter_is_case_insensitive_and_checked(vault: Engine) -> None:
    only_other = incoming(vault, "notes/index.md", collection="OTHER")
    assert [b["sourceUri"] for b in only_other["backlinks"]] == ["gno://other/elsewhere.md"]
    assert only_other["meta"]["collection"] == "other"
    assert incoming(vault, "notes/index.md", collection="notes")["meta"]["totalBacklinks"] == 2
    assert error_code(lambda: incoming(vault, "notes/index.md", collection="nope")) == "NOT_FOUND"


@pytest.mark.parametrize(
    ("ref", "code"),
    [
        ("notes/no-such-note.md", "NOT_FOUND"),
        ("#ffffffff", "NOT_FOUND"),
        ("gno://nowhere/index.md", "NOT_FOUND"),
        ("not a ref", "INVALID_INPUT"),
        ("#xyz", "INVALID_INPUT"),
        ("", "INVALID_INPUT"),
    ],
)
def test_bad_refs_fail_with_a_stable_code(vault: Engine, ref: str, code: str) -> None:
    assert error_code(lambda: outgoing(vault, ref)) == code
    assert error_code(lambda: incoming(vault, ref)) == code


def test_a_deleted_document_leaves_both_directions(vault: Engine, tmp_path: Path) -> None:
    (tmp_path / "vault" / "notes" / "target.md").unlink()
    vault.sync()
    assert error_code(lambda: outgoing(vault, "notes/target.md")) == "NOT_FOUND"
    assert error_code(lambda: incoming(vault, "notes/target.md")) == "NOT_FOUND"
    index = outgoing(vault, "notes/index.md")
    assert [link["resolved"] for link in index["links"][:2]] == [False, False]
    assert index["meta"]["resolvedCount"] == 6
    sources = [b["sourceUri"] for b in incoming(vault, "notes/index.md")["backlinks"]]
    assert "gno://notes/target.md" not in sources


def test_equal_candidates_resolve_to_the_smallest_path_and_stems_beat_titles(
    engine: Engine, tmp_path: Path
) -> None:
    files = {
        "b/plan.md": "# Plan B\n",
        "a/plan.md": "# Plan A\n",
        "roadmap.md": "# Plan\n",  # titled like the stem the link names
        "links.md": "[[plan]] [[Plan A]] [[ROADMAP]]\n",
    }
    engine.collections.add(str(write_tree(tmp_path / "amb", files)), name="amb")
    engine.sync()
    result = outgoing(engine, "amb/links.md")
    assert [link["resolvedUri"] for link in result["links"]] == [
        "gno://amb/a/plan.md",
        "gno://amb/a/plan.md",
        "gno://amb/roadmap.md",
    ]


def _inverse_holds(engine: Engine, docs: list[str], targets: list[str]) -> int:
    """Backlinks of each target equal the forward links that resolve to it."""
    expected: dict[str, Counter[tuple[str, int, int]]] = {uri: Counter() for uri in targets}
    with engine.connection() as conn:
        for uri in docs:
            for link in link_lists.outgoing(conn, uri)["links"]:
                if link.get("resolvedUri") in expected:
                    key = (uri, link["startLine"], link["startCol"])
                    expected[link["resolvedUri"]][key] += 1
        for uri in targets:
            found = link_lists.backlinks(conn, uri)["backlinks"]
            got = Counter((b["sourceUri"], b["startLine"], b["startCol"]) for b in found)
            assert got == expected[uri], uri
    return sum(sum(c.values()) for c in expected.values())


def test_backlinks_invert_outgoing_links_over_the_whole_vault(vault: Engine) -> None:
    with vault.connection() as conn:
        uris = [row[0] for row in conn.execute("SELECT uri FROM documents WHERE active = 1")]
    assert _inverse_holds(vault, uris, uris) == 13


def test_site_style_links_of_a_real_corpus_resolve_and_invert(engine: Engine) -> None:
    required(MCP_DOCS, "the shared mcp-docs fixture corpus")
    engine.collections.add(str(MCP_DOCS), name="docs")
    engine.sync()
    matrix = outgoing(engine, "docs/extensions/auth/oauth-client-credentials.md")
    assert "gno://docs/extensions/client-matrix.md" in {
        link.get("resolvedUri") for link in matrix["links"]
    }
    with engine.connection() as conn:
        uris = [row[0] for row in conn.execute("SELECT uri FROM documents WHERE active = 1")]
        popular = [
            row[0]
            for row in conn.execute(
                "SELECT uri FROM documents WHERE active = 1 AND rel_path LIKE 'extensions/%' "
                "ORDER BY rel_path LIMIT 12"
            )
        ]
    assert _inverse_holds(engine, uris, popular) > 10


@pytest.fixture(scope="module")
def fuzz_conn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sqlite3.Connection]:
    """One vault shared by the fuzz tests: hypothesis reruns a test body many times."""
    base = tmp_path_factory.mktemp("links-fuzz")
    with Engine.open(dirs=Dirs(config=base / "c", data=base / "d", cache=base / "k")) as engine:
        for name, files in VAULT.items():
            engine.collections.add(str(write_tree(base / name, files)), name=name)
        engine.sync()
        with engine.connection() as conn:
            yield conn


_TARGETS = st.text(
    alphabet=st.characters(exclude_categories=["Cs"]) | st.sampled_from("/.#:%~ "), max_size=40
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(target=_TARGETS, prefix=st.sampled_from([None, "notes", "other", "missing"]))
def test_resolving_any_target_text_never_fails(
    fuzz_conn: sqlite3.Connection, target: str, prefix: str | None
) -> None:
    resolver = links.Resolver(SqliteLinks(fuzz_conn))
    source = resolver.by_path("notes", "sub/deep.md")
    assert source is not None
    for kind in ("wiki", "markdown"):
        found = resolver.resolve(kind, target, prefix, source)
        assert found is None or found.collection in ("notes", "other")


@settings(max_examples=100, deadline=None)
@given(ref=st.text(max_size=60) | st.sampled_from(["notes/index.md", "#", "gno://notes/"]))
def test_any_ref_answers_a_valid_list_or_a_coded_error(
    fuzz_conn: sqlite3.Connection, ref: str
) -> None:
    try:
        result = link_lists.outgoing(fuzz_conn, ref)
    except GnoError as error:
        assert error.code in ("INVALID_INPUT", "NOT_FOUND")
    else:
        assert output_schema_errors(output_schema("links-list"), result) == []


# ---------------------------------------------------------------------------
# The job manager
# ---------------------------------------------------------------------------


def _plan(work: Callable[[JobControl], Mapping[str, Any]], *names: str) -> JobPlan:
    return JobPlan(work=work, collections=names)


def test_one_job_at_a_time_and_the_conflict_names_the_running_job() -> None:
    jobs = JobManager()
    release = threading.Event()
    first = jobs.start("sync", lambda hold: _plan(lambda c: {"n": release.wait(5)}, "notes"))
    running = jobs.status(first.job_id)
    assert (running["status"], running["type"], running["collections"]) == (
        "running",
        "sync",
        ["notes"],
    )
    assert "completedAt" not in running
    with pytest.raises(GnoError) as conflict:
        jobs.start("add", lambda hold: _plan(lambda c: {}))
    assert conflict.value.code == "JOB_CONFLICT"
    assert first.job_id in conflict.value.message
    assert jobs.listing(10) == {
        "active": [{"jobId": first.job_id, "type": "sync", "startedAt": running["startedAt"]}],
        "recent": [],
    }
    release.set()
    assert jobs.wait(first.job_id, 5)
    done = jobs.status(first.job_id)
    assert (done["status"], done["n"]) == ("completed", True)
    assert done["completedAt"] >= done["startedAt"]
    second = jobs.start("sync", lambda hold: _plan(lambda c: {}))
    assert jobs.wait(second.job_id, 5)
    assert [job["jobId"] for job in jobs.listing(10)["recent"]] == [second.job_id, first.job_id]
    assert len(jobs.listing(1)["recent"]) == 1


def test_a_failed_begin_frees_the_slot_releases_what_it_took_and_records_nothing() -> None:
    jobs = JobManager()
    released: list[str] = []

    def begin(hold: contextlib.ExitStack) -> JobPlan:
        hold.callback(released.append, "lease")
        raise GnoError("DUPLICATE", "already there")

    with pytest.raises(GnoError) as caught:
        jobs.start("add", begin)
    assert caught.value.code == "DUPLICATE"
    assert released == ["lease"]
    assert jobs.listing(10) == {"active": [], "recent": []}
    ticket = jobs.start("add", lambda hold: _plan(lambda c: {}))
    assert jobs.wait(ticket.job_id, 5)


def test_the_hold_is_released_before_the_job_reads_as_finished() -> None:
    jobs = JobManager()
    seen_at_release: list[str] = []
    ids: list[str] = []
    gate = threading.Event()

    def begin(hold: contextlib.ExitStack) -> JobPlan:
        hold.callback(lambda: seen_at_release.append(jobs.status(ids[0])["status"]))
        return _plan(lambda c: {"opened": gate.wait(5)})

    ticket = jobs.start("sync", begin)
    ids.append(ticket.job_id)
    gate.set()
    assert jobs.wait(ticket.job_id, 5)
    assert seen_at_release == ["running"]
    assert jobs.status(ticket.job_id)["status"] == "completed"


def test_failures_are_recorded_with_their_code() -> None:
    jobs = JobManager()

    def coded(control: JobControl) -> Mapping[str, Any]:
        raise GnoError("PATH_NOT_FOUND", "folder vanished")

    def crashed(control: JobControl) -> Mapping[str, Any]:
        raise sqlite3.OperationalError("disk I/O error")

    first = jobs.start("sync", lambda hold: _plan(coded))
    jobs.wait(first.job_id, 5)
    failed = jobs.status(first.job_id)
    assert (failed["status"], failed["errorCode"], failed["error"]) == (
        "failed",
        "PATH_NOT_FOUND",
        "folder vanished",
    )
    assert "result" not in failed
    second = jobs.start("sync", lambda hold: _plan(crashed))
    jobs.wait(second.job_id, 5)
    crash = jobs.status(second.job_id)
    assert (crash["errorCode"], crash["error"]) == ("RUNTIME", "OperationalError: disk I/O error")
    assert [job["status"] for job in jobs.listing(5)["recent"]] == ["failed", "failed"]


def test_finished_jobs_are_kept_an_hour_and_at_most_a_hundred() -> None:
    now = [1000.0]
    jobs = JobManager(clock=lambda: now[0])
    ids = []
    for _ in range(103):
        ticket = jobs.start("sync", lambda hold: _plan(lambda c: {}))
        assert jobs.wait(ticket.job_id, 5)
        ids.append(ticket.job_id)
        now[0] += 1
    recent = jobs.listing(100)["recent"]
    assert [job["jobId"] for job in recent] == ids[::-1][:100]
    assert error_code(lambda: jobs.status(ids[0])) == "NOT_FOUND"
    now[0] += 3600 - 50  # the 50 oldest survivors are now older than an hour
    assert len(jobs.listing(100)["recent"]) == 50
    now[0] += 100
    assert jobs.listing(100)["recent"] == []
    with pytest.raises(GnoError, match="restart"):
        jobs.status(ids[-1])


def test_close_stops_running_work_at_its_next_report_and_refuses_new_jobs() -> None:
    jobs = JobManager()
    started, proceed = threading.Event(), threading.Event()

    def work(control: JobControl) -> Mapping[str, Any]:
        control.report({"collection": "notes", "processed": 0, "total": 2})
        started.set()
        proceed.wait(5)
        control.report({"collection": "notes", "processed": 1, "total": 2})
        return {"unreachable": True}

    ticket = jobs.start("sync", lambda hold: _plan(work, "notes"))
    assert started.wait(5)
    assert jobs.status(ticket.job_id)["progress"] == {
        "collection": "notes",
        "processed": 0,
        "total": 2,
    }
    assert jobs.close(timeout=0.05) is False  # still waiting in the work
    assert error_code(lambda: jobs.start("sync", lambda hold: _plan(lambda c: {}))) == "RUNTIME"
    proceed.set()
    assert jobs.close(timeout=5) is True
    stopped = jobs.status(ticket.job_id)
    assert (stopped["status"], stopped["errorCode"]) == ("failed", "CANCELLED")
    assert "unreachable" not in stopped


# ---------------------------------------------------------------------------
# Tool handlers in process
# ---------------------------------------------------------------------------


def tool_context(name: str) -> ToolCallContext:
    request = RequestContext(era=Era.LEGACY, protocol_version="2025-11-25", session_id="test")
    return ToolCallContext(request, name)


STATUS_SCHEMA = output_schema("mcp-job-status")


class Tools:
    """The tool handlers of one runtime, each returning (result, structuredContent)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.handlers = {
            "gno_links": link_tools.make_links(runtime),
            "gno_backlinks": link_tools.make_backlinks(runtime),
            "gno_job_status": job_tools.make_job_status(runtime),
            "gno_list_jobs": job_tools.make_list_jobs(runtime),
            "gno_add_collection": collection_tools.make_add_collection(runtime),
            "gno_sync": collection_tools.make_sync(runtime),
            "gno_remove_collection": collection_tools.make_remove_collection(runtime),
        }
        self.schemas = {
            "gno_links": output_schema("links-list"),
            "gno_backlinks": output_schema("backlinks"),
            "gno_job_status": STATUS_SCHEMA,
            "gno_list_jobs": output_schema("mcp-job-list"),
            "gno_add_collection": output_schema("mcp-add-collection-result"),
            "gno_sync": output_schema("mcp-sync-result"),
            "gno_remove_collection": output_schema("mcp-remove-result"),
        }

    async def call(self, name: str, args: Any) -> ToolResult:
        result = await self.handlers[name](args, tool_context(name))
        assert (result.structured is None) is result.is_error, result
        if result.structured is not None:
            assert output_schema_errors(self.schemas[name], result.structured) == [], name
        return result

    async def ok(self, name: str, args: Any) -> dict[str, Any]:
        result = await self.call(name, args)
        assert not result.is_error, result
        assert result.structured is not None
        return dict(result.structured)

    async def fails(self, name: str, args: Any) -> str:
        result = await self.call(name, args)
        assert result.is_error and result.structured is None
        return handler_error_code(result.text)

    async def finished(self, job_id: str) -> dict[str, Any]:
        done = await trio.to_thread.run_sync(self.runtime.jobs.wait, job_id, 10.0)
        assert done
        return await self.ok("gno_job_status", JobStatusInput(jobId=job_id))


@pytest.fixture
def tools(vault: Engine) -> Iterator[Tools]:
    runtime = Runtime(engine=vault, write_enabled=True)
    yield Tools(runtime)
    runtime.jobs.close()


def lease_is_free(engine: Engine) -> bool:
    try:
        with write_lease(engine.location.dirs.write_lock, wait_seconds=0):
            return True
    except GnoError as error:
        assert error.code == "LOCKED"
        return False


def config_text(engine: Engine) -> str:
    return engine.location.config_path.read_text(encoding="utf-8")


def search_uris(engine: Engine, query: str) -> list[str]:
    return [
        hit["uri"] for hit in engine.search.lexical(SearchRequest(query=query, limit=20))["results"]
    ]


async def test_link_tools_answer_with_text_and_structured_content(tools: Tools) -> None:
    result = await tools.call("gno_links", LinksInput(ref="notes/index.md", type="markdown"))
    assert result.text.splitlines()[0] == "6 markdown links in gno://notes/index.md, 4 resolved"
    assert "[markdown] guide (line 4) -> gno://notes/guide/index.md" in result.text
    assert "[markdown] missing.md (line 5) -> unresolved" in result.text
    back = await tools.call("gno_backlinks", BacklinksInput(ref="notes/index.md"))
    assert back.text.startswith("3 backlinks to gno://notes/index.md")
    assert '  gno://notes/target.md "Target Note" (line 3)' in back.text
    assert await tools.fails("gno_links", LinksInput(ref="notes/none.md")) == "NOT_FOUND"
    missing = BacklinksInput(ref="notes/index.md", collection="nope")
    assert await tools.fails("gno_backlinks", missing) == "NOT_FOUND"


async def test_add_collection_registers_indexes_and_reports_through_the_job(
    tools: Tools, tmp_path: Path, schema_check: Callable[[str, Any], None]
) -> None:
    folder = write_tree(tmp_path / "Fresh-Notes", {"a.md": "# Alpha\n\nokapi\n", "b.txt": "yak\n"})
    started = await tools.ok("gno_add_collection", AddCollectionInput(path=str(folder)))
    schema_check("mcp-add-collection-result", started)
    assert (started["collection"], started["status"]) == ("fresh-notes", "started")
    status = await tools.finished(started["jobId"])
    schema_check("mcp-job-status", status)
    assert (status["type"], status["status"], status["collections"]) == (
        "add",
        "completed",
        ["fresh-notes"],
    )
    assert status["serverInstanceId"] == tools.runtime.instance_id
    assert status["typedResult"] == {"kind": "sync", "value": status["result"]}
    (only,) = status["result"]["collections"]
    assert (only["collection"], only["filesProcessed"], only["filesAdded"]) == ("fresh-notes", 2, 2)
    assert status["result"]["totalFilesAdded"] == 2
    assert search_uris(tools.runtime.engine, "okapi") == ["gno://fresh-notes/a.md"]
    listing = await tools.ok("gno_list_jobs", ListJobsInput())
    schema_check("mcp-job-list", listing)
    assert listing["active"] == []
    assert [(j["jobId"], j["status"]) for j in listing["recent"]] == [
        (started["jobId"], "completed")
    ]


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"path": "/"}, "FORBIDDEN_ROOT"),
        ({"path": "/etc"}, "FORBIDDEN_ROOT"),
        ({"path": "~"}, "FORBIDDEN_ROOT"),
        ({"path": "/no/such/folder/anywhere"}, "PATH_NOT_FOUND"),
        ({"path": "{tmp}/fresh", "name": "Bad Name!"}, "INVALID_NAME"),
        ({"path": "{tmp}/fresh", "name": "NOTES"}, "DUPLICATE"),
        ({"path": "{tmp}/vault/notes", "name": "again"}, "DUPLICATE"),
    ],
)
async def test_add_collection_refusals_change_nothing(
    tools: Tools, tmp_path: Path, arguments: dict[str, Any], code: str
) -> None:
    (tmp_path / "fresh").mkdir()
    arguments = {
        k: v.format(tmp=tmp_path) if isinstance(v, str) else v for k, v in arguments.items()
    }
    before = config_text(tools.runtime.engine)
    assert await tools.fails("gno_add_collection", AddCollectionInput(**arguments)) == code
    assert config_text(tools.runtime.engine) == before
    assert (await tools.ok("gno_list_jobs", ListJobsInput()))["recent"] == []
    # The job slot was given back: a valid add starts at once.
    fine = await tools.ok("gno_add_collection", AddCollectionInput(path=str(tmp_path / "fresh")))
    assert (await tools.finished(fine["jobId"]))["status"] == "completed"


async def test_a_running_job_holds_the_lease_and_the_slot_until_it_ends(
    tools: Tools, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = tools.runtime.engine
    gate = threading.Event()
    real_sync = engine.sync

    def held_sync(*args: Any, **kwargs: Any) -> Any:
        gate.wait(10)
        return real_sync(*args, **kwargs)

    monkeypatch.setattr(engine, "sync", held_sync)
    monkeypatch.setenv("GNO_WRITE_LOCK_WAIT_MS", "50")
    started = await tools.ok("gno_sync", SyncInput())
    assert started["collections"] == ["notes", "other"]
    assert started["options"] == {"gitPull": False, "runUpdateCmd": False}
    running = await tools.ok("gno_job_status", JobStatusInput(jobId=started["jobId"]))
    assert running["status"] == "running"
    assert running["progress"] == {"collection": "notes", "processed": 0, "total": 0}

    assert not lease_is_free(engine)  # for any other writer, the CLI say
    conflict = await tools.call("gno_sync", SyncInput(collection="other"))
    assert handler_error_code(conflict.text) == "JOB_CONFLICT"
    assert started["jobId"] in conflict.text
    refused = await tools.fails("gno_remove_collection", RemoveCollectionInput(collection="other"))
    assert refused == "LOCKED"
    listing = await tools.ok("gno_list_jobs", ListJobsInput())
    assert [job["jobId"] for job in listing["active"]] == [started["jobId"]]

    gate.set()
    done = await tools.finished(started["jobId"])
    assert done["status"] == "completed"
    assert [c["collection"] for c in done["result"]["collections"]] == ["notes", "other"]
    assert done["result"]["totalFilesProcessed"] == 5
    assert "Files: 5 seen, 0 added, 0 updated, 0 errors" in job_tools.job_status_text(done)
    assert lease_is_free(engine)


async def test_sync_picks_up_disk_changes_and_rejects_what_it_cannot_do(
    tools: Tools, tmp_path: Path
) -> None:
    notes = tmp_path / "vault" / "notes"
    (notes / "new.md").write_text("# New\n\n[[Target Note]]\n", encoding="utf-8")
    (notes / "guide" / "index.md").unlink()
    started = await tools.ok("gno_sync", SyncInput(collection="NOTES"))
    assert started["collections"] == ["notes"]
    result = (await tools.finished(started["jobId"]))["result"]["collections"][0]
    assert (result["filesAdded"], result["filesMarkedInactive"]) == (1, 1)
    sources = await tools.ok("gno_backlinks", BacklinksInput(ref="notes/target.md"))
    assert "gno://notes/new.md" in {b["sourceUri"] for b in sources["backlinks"]}
    assert "gno://notes/guide/index.md" not in {b["sourceUri"] for b in sources["backlinks"]}

    assert await tools.fails("gno_sync", SyncInput(collection="nope")) == "NOT_FOUND"
    assert await tools.fails("gno_sync", SyncInput(runUpdateCmd=True)) == "INVALID_INPUT"
    unknown = JobStatusInput(jobId="8c1f0000-0000-4000-8000-000000000000")
    assert await tools.fails("gno_job_status", unknown) == "NOT_FOUND"


async def test_remove_keeps_the_indexed_data_inactive_and_re_adding_restores_it(
    tools: Tools, tmp_path: Path, schema_check: Callable[[str, Any], None]
) -> None:
    engine = tools.runtime.engine
    removed = await tools.ok("gno_remove_collection", RemoveCollectionInput(collection="Notes"))
    schema_check("mcp-remove-result", removed)
    assert removed["collection"] == "notes"
    assert (removed["removed"], removed["configUpdated"], removed["indexedDataRetained"]) == (
        True,
        True,
        True,
    )
    assert removed["documentsDeactivated"] == 4
    assert "inactive" in removed["note"]
    assert engine.config.collection("notes") is None
    assert load_config(engine.location.config_path).collection("notes") is None
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT d.active, c.mirror_hash IS NOT NULL FROM documents d "
            "LEFT JOIN content c ON c.mirror_hash = d.mirror_hash WHERE d.collection = 'notes'"
        ).fetchall()
    assert sorted(tuple(row) for row in rows) == [(0, 1)] * 4  # kept, with their text
    assert search_uris(engine, "target") == []
    assert await tools.fails("gno_links", LinksInput(ref="notes/index.md")) == "NOT_FOUND"
    elsewhere = await tools.ok("gno_links", LinksInput(ref="other/elsewhere.md"))
    assert elsewhere["links"][0]["resolved"] is False

    again = await tools.ok(
        "gno_add_collection", AddCollectionInput(path=str(tmp_path / "vault" / "notes"))
    )
    restored = (await tools.finished(again["jobId"]))["result"]["collections"][0]
    assert (restored["filesReactivated"], restored["filesAdded"]) == (4, 0)
    assert (await tools.ok("gno_links", LinksInput(ref="notes/index.md")))["meta"][
        "resolvedCount"
    ] == 8
    assert await tools.fails("gno_remove_collection", RemoveCollectionInput(collection="gone")) == (
        "NOT_FOUND"
    )


async def test_remove_refuses_a_collection_that_contexts_refer_to(tools: Tools) -> None:
    engine = tools.runtime.engine
    guidance = Context(scope_type="collection", scope_key="other:", text="Archive, may be stale")
    engine.update_config(lambda current: attrs.evolve(current, contexts=(guidance,)))
    before = config_text(engine)
    refused = await tools.call("gno_remove_collection", RemoveCollectionInput(collection="other"))
    assert handler_error_code(refused.text) == "HAS_REFERENCES"
    assert "other:" in refused.text
    assert config_text(engine) == before
    assert outgoing(engine, "other/elsewhere.md")["meta"]["totalLinks"] == 2


async def test_write_handlers_refuse_when_writes_are_disabled(
    vault: Engine, tmp_path: Path
) -> None:
    runtime = Runtime(engine=vault, write_enabled=False)
    tools = Tools(runtime)
    before = config_text(vault)
    for name, args in [
        ("gno_add_collection", AddCollectionInput(path=str(tmp_path))),
        ("gno_sync", SyncInput()),
        ("gno_remove_collection", RemoveCollectionInput(collection="notes")),
    ]:
        assert await tools.fails(name, args) == "WRITE_DISABLED"
    assert config_text(vault) == before
    assert runtime.jobs.listing(10) == {"active": [], "recent": []}


# ---------------------------------------------------------------------------
# Over the wire
# ---------------------------------------------------------------------------


@pytest.fixture
def server_env(vault: Engine) -> dict[str, str]:
    dirs = vault.location.dirs
    return server_environment(dirs, GNO_WRITE_LOCK_WAIT_MS="200")


NEW_READ_TOOLS = {"gno_links", "gno_backlinks", "gno_job_status", "gno_list_jobs"}
NEW_WRITE_TOOLS = {"gno_add_collection", "gno_sync", "gno_remove_collection"}


async def test_read_only_server_serves_links_and_jobs_but_no_collection_writes(
    server_env: dict[str, str],
) -> None:
    async with mcp_server(server_env) as pipe:
        listed = await pipe.list_tools()
        assert set(listed) >= NEW_READ_TOOLS
        assert not NEW_WRITE_TOOLS & set(listed)
        assert CATALOGUE.write_names >= NEW_WRITE_TOOLS
        for name in NEW_READ_TOOLS:
            assert listed[name]["annotations"]["readOnlyHint"] is True
        for name in NEW_WRITE_TOOLS:
            answer = await pipe.call(
                "tools/call", {"name": name, "arguments": {"collection": "notes", "path": "/tmp"}}
            )
            assert answer["error"]["code"] == -32602

        found = await pipe.tool("gno_links", {"ref": "gno://notes/index.md"})
        assert [link.get("resolvedUri") for link in found["links"]] == [
            uri for _, _, uri, _ in INDEX_LINKS
        ]
        back = await pipe.tool("gno_backlinks", {"ref": "notes/target.md", "collection": "notes"})
        assert back["meta"]["totalBacklinks"] == 4
        assert await pipe.tool("gno_list_jobs", {}) == {"active": [], "recent": []}

        assert await pipe.tool_error("gno_links", {"ref": "notes/none.md"}) == "NOT_FOUND"
        assert await pipe.tool_error("gno_job_status", {"jobId": "no-such-job"}) == "NOT_FOUND"
        malformed: list[tuple[str, dict[str, Any]]] = [
            ("gno_links", {"ref": "notes/index.md", "type": "html"}),
            ("gno_links", {}),
            ("gno_list_jobs", {"limit": 0}),
            ("gno_list_jobs", {"limit": 101}),
            ("gno_job_status", {"jobId": ""}),
        ]
        for name, arguments in malformed:
            assert await pipe.tool_error(name, arguments) == "INVALID_INPUT", (name, arguments)


async def test_write_server_adds_syncs_and_removes_through_jobs(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    folder = write_tree(tmp_path / "inbox", {"todo.md": "# Todo\n\nSee [[Target Note]].\n"})
    async with mcp_server(server_env, "--enable-write") as pipe:
        listed = await pipe.list_tools()
        assert set(listed) >= NEW_WRITE_TOOLS | NEW_READ_TOOLS
        assert listed["gno_remove_collection"]["inputSchema"]["required"] == ["collection"]

        added = await pipe.tool("gno_add_collection", {"path": str(folder), "name": "Inbox"})
        assert added["collection"] == "inbox"
        status = await pipe.wait_for_job(added["jobId"])
        assert (status["status"], status["result"]["totalFilesAdded"]) == ("completed", 1)
        found = await pipe.tool("gno_search", {"query": "todo"})
        assert [hit["uri"] for hit in found["results"]] == ["gno://inbox/todo.md"]
        # The new note links into another collection by title: unresolved, no prefix.
        todo = await pipe.tool("gno_links", {"ref": "inbox/todo.md"})
        assert todo["meta"]["resolvedCount"] == 0

        synced = await pipe.tool("gno_sync", {})
        assert synced["collections"] == ["notes", "other", "inbox"]
        assert (await pipe.wait_for_job(synced["jobId"]))["result"]["totalFilesProcessed"] == 6
        jobs = await pipe.tool("gno_list_jobs", {"limit": 1})
        assert [job["jobId"] for job in jobs["recent"]] == [synced["jobId"]]

        assert await pipe.tool_error("gno_add_collection", {"path": "/"}) == "FORBIDDEN_ROOT"
        assert await pipe.tool_error("gno_add_collection", {"path": str(folder)}) == "DUPLICATE"
        removed = await pipe.tool("gno_remove_collection", {"collection": "inbox"})
        assert removed["documentsDeactivated"] == 1
        assert (await pipe.tool("gno_search", {"query": "todo"}))["results"] == []
        gone = {"collection": "inbox"}
        assert await pipe.tool_error("gno_remove_collection", gone) == "NOT_FOUND"


async def test_a_second_job_while_one_runs_is_a_conflict_over_the_wire(
    server_env: dict[str, str],
) -> None:
    required(MCP_DOCS, "the shared mcp-docs fixture corpus")
    async with mcp_server(server_env, "--enable-write") as pipe:
        # Indexing ~350 pages takes far longer than the next request's round trip.
        started = await pipe.tool("gno_add_collection", {"path": str(MCP_DOCS), "name": "docs"})
        answer = await pipe.call("tools/call", {"name": "gno_sync", "arguments": {}})
        assert answer["result"]["isError"] is True
        assert tool_error_code(answer["result"]) == "JOB_CONFLICT"
        assert started["jobId"] in answer["result"]["content"][0]["text"]
        running = await pipe.tool("gno_list_jobs", {})
        assert [job["jobId"] for job in running["active"]] in ([started["jobId"]], [])
        done = await pipe.wait_for_job(started["jobId"])
        assert done["status"] == "completed"
        assert done["result"]["totalFilesAdded"] > 300


async def test_closing_stdin_mid_job_stops_it_and_the_process_exits_cleanly(
    server_env: dict[str, str], vault: Engine
) -> None:
    required(MCP_DOCS, "the shared mcp-docs fixture corpus")
    async with mcp_server(server_env, "--enable-write") as pipe:
        started = await pipe.tool("gno_add_collection", {"path": str(MCP_DOCS), "name": "docs"})
        assert started["status"] == "started"
        assert pipe.process.stdin is not None
        await pipe.process.stdin.aclose()
        with trio.fail_after(20):
            code = await pipe.process.wait()
        assert code == 0
    # The lease is free again and the index opens and answers.
    assert lease_is_free(vault)
    with Engine.open(dirs=vault.location.dirs) as reopened:
        assert reopened.config.collection("docs") is not None
        assert outgoing(reopened, "notes/index.md")["meta"]["resolvedCount"] == 8
