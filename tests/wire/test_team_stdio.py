"""A stdio MCP server in team mode follows what other hosts write.

``gno-trio mcp --store ...`` is told nothing by NOTIFY (only HTTP gateways
listen), so it polls the team's change sequence while it serves: a note
another host indexes after the server started is found within seconds.
"""

from __future__ import annotations

from pathlib import Path

import trio

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, Team
from gno_trio.engine.team.url import TeamStore
from tests.support.stdio_session import server_environment, spawn, tool


async def test_a_stdio_server_finds_what_another_host_indexed_after_it_started(
    tmp_path: Path, team_store: TeamStore
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "okapi.md").write_text("# Okapi\n\nThe okapi is a forest giraffe.\n")
    a = Engine.open(
        dirs=Dirs(tmp_path / "a" / "config", tmp_path / "a" / "data", tmp_path / "a" / "cache")
    )
    try:
        a.join_team(Team.open(team_store, "default"))
        a.collections.add(str(notes), name="notes")
        a.sync()
        b = Dirs(tmp_path / "b" / "config", tmp_path / "b" / "data", tmp_path / "b" / "cache")
        b.config.mkdir(parents=True)
        environment = server_environment(b, GNO_STORE=team_store.url)
        async with spawn(environment, tmp_path) as wire:
            await wire.handshake()
            found = await tool(wire, 1, "gno_search", query="okapi")
            assert [r["uri"] for r in found["structuredContent"]["results"]] == [
                "gno://notes/okapi.md"
            ]
            (notes / "quagga.md").write_text("# Quagga\n\nThe quagga was a plains zebra.\n")
            await trio.to_thread.run_sync(a.sync)
            with trio.fail_after(30):
                for request_id in range(2, 1000):
                    found = await tool(wire, request_id, "gno_search", query="quagga")
                    if found["structuredContent"]["results"]:
                        break
                    await trio.sleep(0.5)
            assert [r["uri"] for r in found["structuredContent"]["results"]] == [
                "gno://notes/quagga.md"
            ]
    finally:
        a.close()
