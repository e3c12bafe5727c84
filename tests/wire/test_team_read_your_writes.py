"""Read-your-writes across team gateways: ``Gno-Change-Seq`` out, ``Gno-Min-Change-Seq`` in.

A write answered by gateway A names the change it produced; a read sent to
gateway B with that change as its minimum is answered only once B's index
file holds it. Here B cannot catch up by itself (the test holds B's own lock
file while A writes, so B's catch-up on A's notice, and its poll, give way):
the note is found on the very first read only because the read waited for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import trio

from gno_trio.config.dirs import Dirs
from gno_trio.engine.store.lease import FileLease
from gno_trio.engine.team.url import TeamStore
from tests.support.gateway_process import call
from tests.support.http_gateway_support import modern_headers, modern_params, rpc
from tests.support.team_hosts import okapi_gateways


def search_body(query: str) -> dict[str, Any]:
    return rpc("tools/call", modern_params(name="gno_search", arguments={"query": query}))


async def test_a_read_on_another_gateway_waits_for_the_write_it_names(
    tmp_path: Path, team_store: TeamStore
) -> None:
    b = tmp_path / "b"
    async with (
        okapi_gateways(tmp_path, team_store) as (_, url_a, url_b),
        httpx.AsyncClient(timeout=60) as client,
    ):
        first = await call(client, url_b, "gno_search", query="okapi")
        assert first["structuredContent"]["results"], first  # B holds A's seed

        search = modern_headers("tools/call", "gno_search")
        malformed = await client.post(
            url_b, headers={**search, "gno-min-change-seq": "soon"}, json=search_body("okapi")
        )
        assert malformed.status_code == 400
        assert "Gno-Min-Change-Seq" in malformed.json()["error"]["message"]
        rest = await client.get(url_a.removesuffix("/mcp") + "/api/search?query=okapi")
        assert rest.status_code == 200 and ":" in rest.headers["gno-change-seq"]

        answers: list[httpx.Response] = []

        async def read_on_b(token: str) -> None:
            answers.append(
                await client.post(
                    url_b,
                    headers={**search, "gno-min-change-seq": token},
                    json=search_body("quagga"),
                )
            )

        async with trio.open_nursery() as nursery:
            with FileLease(Dirs(b / "config", b / "data", b / "cache").write_lock).hold(
                wait_seconds=30
            ):
                captured = await client.post(
                    url_a,
                    headers=modern_headers("tools/call", "gno_capture"),
                    json=rpc(
                        "tools/call",
                        modern_params(
                            name="gno_capture",
                            arguments={
                                "collection": "notes",
                                "title": "Quagga",
                                "content": "The quagga was a plains zebra.\n",
                            },
                        ),
                    ),
                )
                assert captured.status_code == 200
                assert not captured.json()["result"].get("isError"), captured.text
                token = captured.headers["gno-change-seq"]
                nursery.start_soon(read_on_b, token)
                await trio.sleep(1.0)  # B has heard A's notice and given way to the lock
        [answer] = answers
        assert answer.status_code == 200, answer.text
        results = answer.json()["result"]["structuredContent"]["results"]
        assert [r["title"] for r in results] == ["Quagga"], results
        epoch, _, seq = token.partition(":")
        caught_up = answer.headers["gno-change-seq"].partition(":")
        assert caught_up[0] == epoch and int(caught_up[2]) >= int(seq)
