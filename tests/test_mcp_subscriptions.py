"""Change notifications, opt-in: ``gno-trio mcp --subscriptions`` seen by the official client.

A 2025-11-25 client subscribes to a note, the note is edited on disk (the
resident's own folder watch indexes it), and the client hears
``notifications/resources/updated`` for it; a new note is heard as
``notifications/resources/list_changed``. Without the switch the server
answers exactly as it always did: no ``subscribe`` capability, and
``resources/subscribe`` is an unknown method in both eras.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from gno_trio.compose import build_app
from gno_trio.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.runtime import Runtime
from tests.http_gateway_support import running_gateway

REPO_ROOT = Path(__file__).resolve().parents[1]
NOTE = "gno://notes/alpha.md"
WAIT_S = 60.0


@pytest.fixture
def notes_env(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A one-note collection, indexed, and the environment pointing the server at it."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "alpha.md").write_text("# Alpha\n\nFirst words.\n", encoding="utf-8")
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.add_collection(str(notes), name="notes")
        engine.sync()
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


async def _until_watched(env: dict[str, str]) -> None:
    """Wait until the server's folder watch follows ``notes`` (an edit before would go unseen)."""
    dirs = _dirs(env)

    def watched() -> bool:
        with Engine.open(dirs=dirs) as engine:
            active: list[str] = engine.status()["background"]["watcher"]["activeCollections"]
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
    dirs = _dirs(env)
    heard = _Heard()
    with Engine.open(dirs=dirs) as engine, trio.fail_after(WAIT_S * 2):
        app = build_app(Runtime(engine=engine, write_enabled=False), subscriptions=True)
        assert app.change_feed is not None
        async with trio.open_nursery() as nursery:
            nursery.start_soon(app.change_feed.run)
            async with (
                running_gateway(app) as running,
                Client(
                    running.url, mode="legacy", cache=None, message_handler=heard.handler
                ) as client,
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
            nursery.cancel_scope.cancel()


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
