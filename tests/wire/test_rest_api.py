"""The REST API on a real ``serve`` listener (hypercorn), over the gno-evals and mcp-docs corpora.

What a script or a shell user sees: the same answers as the MCP tools, the
OpenAPI document describing every route (each answering, each answer
valid against it), precise errors, and the gateway's boundary (token,
Origin, body limit, write gate) in front of every route.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import jsonschema  # type: ignore[import-untyped]
import pytest
import trio

from gno_trio.compose import build_app
from gno_trio.config import GatewayLimits
from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.protocol.subscriptions import MAX_LISTENS
from gno_trio.runtime import Runtime
from tests.support.guarded_gateway import (
    AUTH,
    remote_gateway,
    set_policy,
)
from tests.support.http_gateway_support import (
    RELAXED,
    RunningGateway,
    asgi_call,
    engine_app,
    evals_dirs,  # noqa: F401
    modern_headers,
    modern_params,
    read_events,
    rpc,
    running_gateway,
)
from tests.support.shared import MCP_DOCS, required
from tests.support.waiting import wait_until


@asynccontextmanager
async def rest(
    dirs: Dirs, *, write: bool = False, **overrides: Any
) -> AsyncIterator[tuple[RunningGateway, httpx.AsyncClient]]:
    with engine_app(dirs, write_enabled=write) as (app, _):
        async with (
            running_gateway(
                app, **{"limits": RELAXED, "enable_write": write, **overrides}
            ) as running,
            httpx.AsyncClient(base_url=running.base, timeout=30) as client,
        ):
            yield running, client


async def mcp_structured(client: httpx.AsyncClient, url: str, name: str, args: Any) -> Any:
    params = modern_params(name=name, arguments=args)
    response = await client.post(
        url, json=rpc("tools/call", params), headers=modern_headers("tools/call", name)
    )
    result = response.json()["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]


@pytest.fixture
def docs_dirs(tmp_path: Path) -> Dirs:
    """A fresh index over a copy of the mcp-docs corpus (writes may change it)."""
    required(MCP_DOCS, "the shared mcp-docs fixture corpus")
    corpus = tmp_path / "corpus"
    shutil.copytree(MCP_DOCS, corpus)
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(corpus), name="docs")
        memory = tmp_path / "memory"
        memory.mkdir()
        engine.collections.add(str(memory), name="memory", memory_managed=True)
        engine.sync()
    return dirs


async def test_rest_answers_equal_the_mcp_tools_structured_content(evals_dirs: Dirs) -> None:  # noqa: F811
    async with rest(evals_dirs) as (running, client):
        args = {"query": "kubernetes deployment", "limit": 3}
        over_mcp = await mcp_structured(client, running.url, "gno_search", args)
        by_post = (await client.post("/api/search", json=args)).json()
        by_get = (await client.get("/api/search", params=args)).json()
        assert by_post == over_mcp == by_get
        assert over_mcp["results"], "the query should find something in gno-evals"
        hit = over_mcp["results"][0]
        for ref in (hit["uri"], hit["docid"]):
            doc = await client.get("/api/doc", params={"uri" if "://" in ref else "docid": ref})
            assert doc.status_code == 200
            assert doc.json() == await mcp_structured(client, running.url, "gno_get", {"ref": ref})
        status = (await client.get("/api/status")).json()
        over_mcp = await mcp_structured(client, running.url, "gno_status", {})
        assert status.keys() == over_mcp.keys()  # activation stamps its own time
        assert status["background"] == over_mcp["background"]


async def test_every_openapi_route_answers_and_validates(docs_dirs: Dirs) -> None:
    async with rest(docs_dirs, write=True) as (_, client):
        more = docs_dirs.config.parent / "more"
        more.mkdir()
        (more / "note.md").write_text("# More\n\nanother note\n")
        spec = (await client.get("/api/openapi.json")).json()
        schemas = spec["components"]["schemas"]
        listing = (await client.get("/api/docs")).json()
        doc = listing["documents"][0]
        ref = doc["docid"]
        sync = await client.post("/api/sync", json={"collection": "docs"})
        assert sync.status_code == 200, sync.text
        job_id = sync.json()["jobId"]
        searched = (await client.post("/api/search", json={"query": "server"})).json()
        trace_ids = [t["traceId"] for t in (await client.get("/api/traces")).json()["traces"]]
        capsule = (
            await client.post("/api/context", json={"goal": "transports", "budgetTokens": 800})
        ).json()
        samples: dict[str, dict[str, Any]] = {
            "get_gno_search": {"query": "server"},
            "post_gno_search": {"query": "server"},
            "get_gno_vsearch": {"query": "server"},
            "post_gno_vsearch": {"query": "server"},
            "get_gno_query": {"query": "server", "fast": "true"},
            "post_gno_query": {"query": "server", "fast": True},
            "post_gno_ask": {"query": "what is a transport?", "verify": True},
            "get_gno_get": {"ref": ref},
            "post_gno_multi_get": {"refs": [ref]},
            "post_gno_add_collection": {"path": str(more), "name": "more"},
            "post_gno_sync": {"collection": "docs"},
            "post_gno_context": {"goal": "transports", "budgetTokens": 800},
            "post_gno_context_verify": {"capsule": capsule},
            "post_gno_recall": {"query": "transport", "collection": "memory", "scopes": ["x"]},
            "post_gno_remember": {"text": "t", "collection": "memory", "scopes": ["x"]},
            "post_gno_capture": {"collection": "docs", "content": "# Captured\n\nhello\n"},
        }
        path_values = {
            "ref": ref,
            "jobId": job_id,
            "traceId": trace_ids[0] if trace_ids else "none",
            "auditId": "none",
            "collection": "docs",
        }
        assert searched["results"]
        answered = 0
        refused: dict[str, str] = {}
        for pattern, methods in spec["paths"].items():
            for method, operation in methods.items():
                if operation["operationId"] == "events":
                    continue  # a stream: its own test below
                path = pattern
                for name, value in path_values.items():
                    path = path.replace("{" + name + "}", quote(value, safe=""))
                sample = samples.get(operation["operationId"], {})
                if method == "post":
                    response = await client.post(path, json=sample)
                elif method == "delete":
                    continue  # removing the collection would empty the rest of the walk
                else:
                    response = await client.get(path, params=sample)
                status = str(response.status_code)
                described = operation["responses"].get(status)
                assert described is not None, (method, path, status, response.text)
                schema = described["content"]["application/json"]["schema"]
                if "$ref" in schema:
                    schema = schemas[schema["$ref"].rsplit("/", 1)[-1]]
                jsonschema.Draft202012Validator(schema).validate(response.json())
                if response.status_code != 200:
                    refused[f"{method} {pattern}"] = response.json()["error"]["code"]
                answered += 1
        assert answered >= 30
        # The collection added just before may still be syncing: one job at a time.
        assert refused.pop("post /api/sync", "JOB_CONFLICT") == "JOB_CONFLICT"
        # No vectors in this index (the semantic routes say so); no trace or audit record
        # exists under the ids asked for. Every other route answered 200.
        assert refused == {
            "get /api/vsearch": "VECTORS_UNAVAILABLE",
            "post /api/vsearch": "VECTORS_UNAVAILABLE",
            "get /api/doc/{ref}/similar": "VECTORS_UNAVAILABLE",
            "get /api/traces/{traceId}": "NOT_FOUND",
            "get /api/egress/audit/{auditId}": "NOT_FOUND",
        }, sorted(refused.items())
        removed = await client.delete("/api/collections/docs")
        assert removed.status_code in (200, 409), removed.text


async def test_errors_are_precise_and_change_nothing(evals_dirs: Dirs) -> None:  # noqa: F811
    async with rest(evals_dirs) as (_, client):
        missing = await client.post("/api/search", json={})
        assert missing.status_code == 400
        assert missing.json()["error"]["code"] == "INVALID_INPUT"
        no_doc = await client.get("/api/doc", params={"uri": "gno://evals/no-such-note.md"})
        assert no_doc.status_code == 404
        assert no_doc.json()["error"]["code"] == "NOT_FOUND"
        twice = await client.get("/api/doc?ref=a&ref=b")
        assert twice.status_code == 400
        not_json = await client.post(
            "/api/search", content=b"{", headers={"content-type": "application/json"}
        )
        assert not_json.status_code == 400
        form = await client.post("/api/search", data={"query": "x"})
        assert form.status_code == 415
        unknown = await client.get("/api/nothing-here")
        assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "NOT_FOUND")
        wrong = await client.put("/api/search")
        assert wrong.status_code == 405
        assert wrong.headers["allow"] == "GET, POST"
        add = await client.post("/api/collections", json={"path": "/tmp"})
        assert add.status_code == 403
        assert add.json()["error"]["code"] == "WRITE_DISABLED"
        names = [c["name"] for c in (await client.get("/api/collections")).json()["collections"]]
        assert names == ["evals"]


async def test_the_boundary_guards_every_route(evals_dirs: Dirs, tmp_path: Path) -> None:  # noqa: F811
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token-value-for-the-rest-api-tests\n")
    token_file.chmod(0o600)
    small = GatewayLimits(max_requests_per_minute=100_000, max_body_bytes=2048)
    async with rest(evals_dirs, token_file=token_file, limits=small) as (_, client):
        anonymous = await client.get("/api/search", params={"query": "x"})
        assert anonymous.status_code == 401
        assert anonymous.json()["error"]["code"] == "UNAUTHORIZED"
        client.headers["authorization"] = "Bearer s3cret-token-value-for-the-rest-api-tests"
        assert (await client.get("/api/search", params={"query": "x"})).status_code == 200
        assert (await client.get("/api/health")).json() == {"ok": True}
        hostile = await client.get("/api/health", headers={"origin": "https://evil.example"})
        assert hostile.status_code == 403
        big = await client.post("/api/search", json={"query": "x" * 4096})
        assert big.status_code == 413
        assert big.json()["error"]["code"] == "BODY_TOO_LARGE"


async def test_events_stream_job_progress_and_is_capped_per_caller(docs_dirs: Dirs) -> None:
    async with rest(docs_dirs, write=True) as (_, client):
        with trio.fail_after(120):
            async with client.stream("GET", "/api/events") as stream:
                assert stream.headers["content-type"].startswith("text/event-stream")
                lines = stream.aiter_lines()
                ready = await read_events(lines, lambda event, _: event == "ready")
                assert ready == [("ready", {"changes": True, "jobs": True})]
                sync = await client.post("/api/sync", json={"collection": "docs"})
                assert sync.status_code == 200, sync.text
                job_id = sync.json()["jobId"]
                events = await read_events(
                    lines, lambda event, data: event == "job" and data["status"] != "running"
                )
                assert {data["jobId"] for _, data in events} == {job_id}
                assert events[-1][1]["status"] == "completed"
                async with AsyncExitStack() as more:
                    for _ in range(MAX_LISTENS - 1):
                        opened = await more.enter_async_context(client.stream("GET", "/api/events"))
                        assert opened.status_code == 200
                    refused = await client.get("/api/events")
                    assert refused.status_code == 429
                    assert refused.json()["error"]["code"] == "TOO_MANY_STREAMS"


async def test_events_carry_document_changes_without_the_subscriptions_switch(
    docs_dirs: Dirs,
) -> None:
    engine = Engine.open(dirs=docs_dirs)
    try:
        runtime = Runtime(engine=engine, write_enabled=True)
        app = build_app(runtime)
        assert app.change_feed is not None
        # The switch only governs MCP: no subscription is offered there.
        assert app.capabilities["resources"]["subscribe"] is False
        assert "resources/subscribe" not in app.legacy_methods
        async with (
            trio.open_nursery() as background,
            running_gateway(app, limits=RELAXED, enable_write=True) as running,
            httpx.AsyncClient(base_url=running.base, timeout=30) as client,
        ):
            background.start_soon(app.change_feed.run)
            with trio.fail_after(120):
                async with client.stream("GET", "/api/events") as stream:
                    lines = stream.aiter_lines()
                    ready = await read_events(lines, lambda event, _: event == "ready")
                    assert ready == [("ready", {"changes": True, "jobs": True})]
                    await wait_until(
                        lambda: app.change_feed is not None and app.change_feed.following
                    )
                    captured = await client.post(
                        "/api/capture",
                        json={"collection": "docs", "title": "Fresh", "content": "# Fresh\n"},
                    )
                    assert captured.status_code == 200, captured.text
                    uri = captured.json()["uri"]
                    changes = await read_events(lines, lambda event, _: event == "change")
                    change = changes[-1][1]
                    assert (change["kind"], change["collection"]) == ("create", "docs")
                    assert uri.endswith(change["current"]["relPath"])
            background.cancel_scope.cancel()
    finally:
        engine.close()


async def test_egress_judges_a_rest_call_as_it_judges_the_same_tool_call(
    notes_dirs: Dirs,
    tmp_path: Path,
) -> None:
    config_path = notes_dirs.config_file
    search = json.dumps({"query": "giraffes", "collection": "notes"}).encode()
    headers = {**AUTH, "content-type": "application/json"}
    with engine_app(notes_dirs) as (app, engine):
        async with remote_gateway(app, tmp_path, config_path, engine) as gateway:
            refused = await asgi_call(
                gateway, peer="192.168.1.20", path="/api/search", headers=headers, body=search
            )
            assert refused.status == 403
            assert refused.json()["error"]["code"] == "EGRESS_DENIED"
            set_policy(config_path, "notes", "lan")
            served = await asgi_call(
                gateway, peer="192.168.1.20", path="/api/search", headers=headers, body=search
            )
            assert served.status == 200, served.body
            assert served.json()["results"]
            remote = await asgi_call(
                gateway, peer="203.0.113.5", path="/api/search", headers=headers, body=search
            )
            assert remote.status == 403
            assert remote.json()["error"]["code"] == "EGRESS_DENIED"
