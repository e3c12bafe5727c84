"""Change notifications, opt-in: ``gno-trio mcp --subscriptions`` seen by the official client.

A 2025-11-25 client subscribes to a note, the note is edited on disk (the
resident's own folder watch indexes it), and the client hears
``notifications/resources/updated`` for it; a new note is heard as
``notifications/resources/list_changed``, on stdio and on an HTTP session's
GET stream. A 2026-07-28 client's ``subscriptions/listen`` stream is
acknowledged first, hears the same changes stamped with its id, is capped,
cancellable, and completed when the server's input ends (stdio) or the
gateway drains (HTTP). Without the switch
the server answers exactly as it always did: no ``subscribe`` capability,
and ``resources/subscribe`` and ``subscriptions/listen`` are unknown methods.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp.shared.exceptions import MCPError

from gno_trio.compose import build_app
from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.protocol.subscriptions import MAX_LISTENS
from gno_trio.protocol.subscriptions import SUBSCRIPTION_ID_KEY as SUBSCRIPTION_ID
from gno_trio.runtime import Runtime
from tests.support.gateway_process import notes_index
from tests.support.http_gateway_support import (
    RunningGateway,
    modern_headers,
    modern_params,
    rpc,
    running_gateway,
)
from tests.support.stdio_session import RawWire, open_stdio_process

REPO_ROOT = Path(__file__).resolve().parents[2]
NOTE = "gno://notes/alpha.md"
WAIT_S = 60.0


@pytest.fixture
def notes_env(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A one-note collection, indexed, and the environment pointing the server at it."""
    notes = notes_index(tmp_path)
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    yield (
        notes,
        {
            "GNO_CONFIG_DIR": str(dirs.config),
            "GNO_DATA_DIR": str(dirs.data),
            "GNO_CACHE_DIR": str(dirs.cache),
        },
    )


def _dirs(env: dict[str, str]) -> Dirs:
    return Dirs(
        config=Path(env["GNO_CONFIG_DIR"]),
        data=Path(env["GNO_DATA_DIR"]),
        cache=Path(env["GNO_CACHE_DIR"]),
    )


@contextlib.asynccontextmanager
async def _gateway_with_feed(engine: Engine) -> AsyncIterator[RunningGateway]:
    """A gateway over ``engine`` with subscriptions on, its change feed running beside it."""
    app = build_app(Runtime(engine=engine, write_enabled=False), subscriptions=True)
    assert app.change_feed is not None
    async with trio.open_nursery() as nursery:
        nursery.start_soon(app.change_feed.run)
        async with running_gateway(app) as running:
            yield running
        nursery.cancel_scope.cancel()


async def _until_watched(env: dict[str, str]) -> None:
    """Wait until the server's folder watch follows ``notes`` (an edit before would go unseen)."""
    dirs = _dirs(env)

    def watched() -> bool:
        with Engine.open(dirs=dirs) as engine:
            active: list[str] = engine.index.status()["background"]["watcher"]["activeCollections"]
        return active == ["notes"]

    with trio.move_on_after(WAIT_S):
        while not await trio.to_thread.run_sync(watched):
            await trio.sleep(0.2)
        return
    raise AssertionError(f"the server did not watch notes within {WAIT_S} s")


def _params(env: dict[str, str], *flags: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "gno_trio", "mcp", *flags], env=env, cwd=REPO_ROOT
    )


class _Heard:
    """The server notifications a client received, in order, waited on with a bound."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self._changed = trio.Event()

    async def handler(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if isinstance(method, str) and method.startswith("notifications/resources/"):
            params = getattr(message, "params", None)
            uri = getattr(params, "uri", None) if params is not None else None
            self.seen.append((method, {"uri": str(uri)} if uri is not None else {}))
            self._changed.set()
            self._changed = trio.Event()

    async def until(
        self, wanted: tuple[str, dict[str, Any]], after: int = 0, within: float = WAIT_S
    ) -> int:
        """Wait until ``wanted`` is heard at or after position ``after``; its position."""
        with trio.move_on_after(within):
            while True:
                for index in range(after, len(self.seen)):
                    if self.seen[index] == wanted:
                        return index
                await self._changed.wait()
        raise AssertionError(f"not heard within {within} s: {wanted}; heard {self.seen}")


async def test_a_subscribed_note_edited_on_disk_is_heard_and_new_notes_change_the_list(
    notes_env: tuple[Path, dict[str, str]],
) -> None:
    notes, env = notes_env
    heard = _Heard()
    with trio.fail_after(WAIT_S * 4):
        async with Client(
            _params(env, "--subscriptions"),
            mode="legacy",
            cache=None,
            message_handler=heard.handler,
        ) as client:
            capabilities = client.server_capabilities
            assert capabilities is not None and capabilities.resources is not None
            assert capabilities.resources.subscribe is True
            assert capabilities.resources.list_changed is True

            await client.subscribe_resource(NOTE)
            await _until_watched(env)
            (notes / "alpha.md").write_text("# Alpha\n\nSecond words.\n", encoding="utf-8")
            edited = await heard.until(("notifications/resources/updated", {"uri": NOTE}))

            (notes / "beta.md").write_text("# Beta\n\nA new note.\n", encoding="utf-8")
            added = await heard.until(("notifications/resources/list_changed", {}), edited + 1)
            assert ("notifications/resources/updated", {"uri": NOTE}) not in heard.seen[
                edited + 1 : added + 1
            ], "an untouched subscribed note is not reported"

            await client.unsubscribe_resource(NOTE)
            (notes / "alpha.md").write_text("# Alpha\n\nThird words.\n", encoding="utf-8")
            (notes / "gamma.md").write_text("# Gamma\n\nAnother note.\n", encoding="utf-8")
            last = await heard.until(("notifications/resources/list_changed", {}), added + 1)
            assert ("notifications/resources/updated", {"uri": NOTE}) not in heard.seen[
                added + 1 : last + 1
            ], "nothing is heard for a note after unsubscribing"

            with pytest.raises(MCPError) as bad:
                await client.subscribe_resource("https://example.com/x")
            assert bad.value.error.code == -32602


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_without_the_switch_subscribe_is_unknown_as_before(
    mode: str, notes_env: tuple[Path, dict[str, str]]
) -> None:
    _, env = notes_env
    with trio.fail_after(WAIT_S * 2):
        async with Client(_params(env, "--no-watch"), mode=mode, cache=None) as client:
            if mode == "legacy":
                capabilities = client.server_capabilities
                assert capabilities is not None and capabilities.resources is not None
                assert not capabilities.resources.subscribe
                assert not capabilities.resources.list_changed
            for call in (client.subscribe_resource, client.unsubscribe_resource):
                with pytest.raises(MCPError) as refused:
                    await call(NOTE)
                assert refused.value.error.code == -32601


async def test_with_the_switch_the_2026_era_still_refuses_resources_subscribe(
    notes_env: tuple[Path, dict[str, str]],
) -> None:
    _, env = notes_env
    with trio.fail_after(WAIT_S * 2):
        async with Client(
            _params(env, "--subscriptions", "--no-watch"), mode="2026-07-28", cache=None
        ) as client:
            with pytest.raises(MCPError) as refused:
                await client.subscribe_resource(NOTE)
            assert refused.value.error.code == -32601


async def test_an_http_session_hears_changes_on_its_get_stream(
    notes_env: tuple[Path, dict[str, str]],
) -> None:
    notes, env = notes_env
    heard = _Heard()
    with Engine.open(dirs=_dirs(env)) as engine, trio.fail_after(WAIT_S * 2):
        async with (
            _gateway_with_feed(engine) as running,
            Client(running.url, mode="legacy", cache=None, message_handler=heard.handler) as client,
        ):
            capabilities = client.server_capabilities
            assert capabilities is not None and capabilities.resources is not None
            assert capabilities.resources.subscribe is True
            await client.subscribe_resource(NOTE)
            # Notices reach an open GET stream only, and the client opens it on
            # its own time: edit until one is heard.
            for edit in range(int(WAIT_S)):
                text = f"# Alpha\n\nEdit number {edit}.\n"
                (notes / "alpha.md").write_text(text, encoding="utf-8")
                await trio.to_thread.run_sync(engine.sync)
                try:
                    await heard.until(("notifications/resources/updated", {"uri": NOTE}), 0, 1)
                    break
                except AssertionError:
                    continue
            else:
                raise AssertionError(f"no update heard over HTTP; heard {heard.seen}")
            seen = len(heard.seen)
            (notes / "beta.md").write_text("# Beta\n\nNew.\n", encoding="utf-8")
            await trio.to_thread.run_sync(engine.sync)
            await heard.until(("notifications/resources/list_changed", {}), seen)


async def test_the_config_key_switches_subscriptions_on(
    notes_env: tuple[Path, dict[str, str]],
) -> None:
    _, env = notes_env
    config = Path(env["GNO_CONFIG_DIR"]) / "index.yml"
    config.write_text(
        config.read_text(encoding="utf-8") + "watch:\n  subscriptions: true\n", encoding="utf-8"
    )
    with trio.fail_after(WAIT_S * 2):
        async with Client(_params(env, "--no-watch"), mode="legacy", cache=None) as client:
            capabilities = client.server_capabilities
            assert capabilities is not None and capabilities.resources is not None
            assert capabilities.resources.subscribe is True
            await client.subscribe_resource(NOTE)


async def test_a_2026_listen_stream_is_acknowledged_and_hears_changes(
    notes_env: tuple[Path, dict[str, str]],
) -> None:
    notes, env = notes_env
    with trio.fail_after(WAIT_S * 4):
        async with (
            Client(_params(env, "--subscriptions"), mode="2026-07-28", cache=None) as client,
            client.listen(
                resources_list_changed=True,
                tools_list_changed=True,
                resource_subscriptions=[NOTE, "https://example.com/not-ours"],
            ) as subscription,
        ):
            # Only what is served is honoured: no tools changes, no foreign URIs.
            assert subscription.honored.resources_list_changed is True
            assert not subscription.honored.tools_list_changed
            assert list(subscription.honored.resource_subscriptions or []) == [NOTE]
            await _until_watched(env)
            (notes / "alpha.md").write_text("# Alpha\n\nSecond words.\n", encoding="utf-8")
            events = aiter(subscription)
            event = await anext(events)
            assert isinstance(event, ResourceUpdated) and str(event.uri) == NOTE
            (notes / "beta.md").write_text("# Beta\n\nA new note.\n", encoding="utf-8")
            event = await anext(events)
            assert isinstance(event, ResourcesListChanged)
            # The open stream holds no request slot: requests are still answered.
            assert not (await client.call_tool("gno_status", {})).is_error


ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw-listener", "version": "1"},
}


async def test_listen_streams_are_capped_cancellable_and_completed_when_input_ends(
    notes_env: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    _, env = notes_env
    command = [sys.executable, "-m", "gno_trio", "mcp", "--subscriptions", "--no-watch"]
    stderr = tmp_path / "stderr.log"
    with stderr.open("wb") as errors, trio.fail_after(WAIT_S * 2):
        async with open_stdio_process(command, env={**os.environ, **env}, stderr=errors) as proc:
            wire = RawWire(proc, stderr, timeout=WAIT_S)
            listen = {"_meta": ENVELOPE, "notifications": {"resourcesListChanged": True}}
            for stream in range(MAX_LISTENS):
                await wire.request(f"listen-{stream}", "subscriptions/listen", listen)
                ack = await wire.read()
                assert (
                    ack is not None and ack["method"] == "notifications/subscriptions/acknowledged"
                )
                assert ack["params"]["_meta"][SUBSCRIPTION_ID] == f"listen-{stream}"
                assert ack["params"]["notifications"] == {"resourcesListChanged": True}
            refused = await wire.call("one-too-many", "subscriptions/listen", listen)
            assert refused["error"]["data"] == {"maxListens": MAX_LISTENS}
            # Open streams hold no request slot: requests are still answered.
            listed = await wire.call("tools", "tools/list", {"_meta": ENVELOPE})
            assert listed["result"]["tools"]
            # The client ends one stream: it owes no answer and frees its place.
            await wire.notify("notifications/cancelled", {"requestId": "listen-0"})
            await wire.request("listen-again", "subscriptions/listen", listen)
            ack = await wire.read()
            assert ack is not None and ack["params"]["_meta"][SUBSCRIPTION_ID] == "listen-again"

            await wire.close_stdin()
            ends = await wire.read_to_eof()
            completed = {message["id"] for message in ends}
            assert completed == {f"listen-{n}" for n in range(1, MAX_LISTENS)} | {"listen-again"}
            for message in ends:
                assert message["result"]["resultType"] == "complete"
                assert message["result"]["_meta"][SUBSCRIPTION_ID] == message["id"]
            assert await wire.exit_code() == 0


async def test_without_the_switch_listen_is_unknown_as_before(
    notes_env: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    _, env = notes_env
    command = [sys.executable, "-m", "gno_trio", "mcp", "--no-watch"]
    with trio.fail_after(WAIT_S * 2):
        async with open_stdio_process(command, env={**os.environ, **env}) as proc:
            wire = RawWire(proc, tmp_path / "unused.log", timeout=WAIT_S)
            listen = {"_meta": ENVELOPE, "notifications": {"resourcesListChanged": True}}
            refused = await wire.call(1, "subscriptions/listen", listen)
            assert refused["error"]["code"] == -32601


async def test_an_http_listen_stream_hears_changes_and_completes_when_the_gateway_drains(
    notes_env: tuple[Path, dict[str, str]],
) -> None:
    notes, env = notes_env
    with Engine.open(dirs=_dirs(env)) as engine, trio.fail_after(WAIT_S * 2):
        async with (
            _gateway_with_feed(engine) as running,
            Client(running.url, mode="2026-07-28", cache=None) as client,
            client.listen(
                resources_list_changed=True, resource_subscriptions=[NOTE]
            ) as subscription,
        ):
            assert subscription.honored.resources_list_changed is True
            assert list(subscription.honored.resource_subscriptions or []) == [NOTE]
            # The open stream holds no capacity slot: requests are still answered.
            assert not (await client.call_tool("gno_status", {})).is_error
            (notes / "alpha.md").write_text("# Alpha\n\nOver HTTP.\n", encoding="utf-8")
            await trio.to_thread.run_sync(engine.sync)
            events = aiter(subscription)
            event = await anext(events)
            assert isinstance(event, ResourceUpdated) and str(event.uri) == NOTE
            running.drain.trigger()
            # A graceful end: the loop finishes (an abrupt one raises SubscriptionLost).
            assert [event async for event in events] == []


async def test_http_listen_streams_are_capped_per_identity(
    notes_env: tuple[Path, dict[str, str]],
) -> None:
    _, env = notes_env
    body = rpc(
        "subscriptions/listen", modern_params(notifications={"resourcesListChanged": True}), 1
    )
    headers = modern_headers("subscriptions/listen")
    with Engine.open(dirs=_dirs(env)) as engine, trio.fail_after(WAIT_S * 2):
        app = build_app(Runtime(engine=engine, write_enabled=False), subscriptions=True)
        async with (
            running_gateway(app) as running,
            httpx.AsyncClient(timeout=WAIT_S) as http,
            contextlib.AsyncExitStack() as streams,
        ):
            readers = []
            for stream in range(MAX_LISTENS):
                body["id"] = f"listen-{stream}"
                opened = await streams.enter_async_context(
                    http.stream("POST", running.url, headers=headers, content=json.dumps(body))
                )
                assert opened.status_code == 200
                lines = opened.aiter_lines()
                readers.append(lines)  # kept: a dropped reader closes its stream
                assert await anext(lines) == "event: message"
            body["id"] = "one-too-many"
            refused = await http.post(running.url, headers=headers, content=json.dumps(body))
            assert refused.json()["error"]["data"] == {"maxListens": MAX_LISTENS}
            listed = await http.post(
                running.url,
                headers=modern_headers("tools/list"),
                content=json.dumps(rpc("tools/list", modern_params(), 2)),
            )
            assert listed.status_code == 200 and listed.json()["result"]["tools"]
