"""The authorization epoch across gateways on one PostgreSQL store (team mode).

On one gateway, a request judged under one set of collection policies whose
answer is ready under another is answered 409 ``EGRESS_POLICY_CHANGED``.
In team mode the policies are the config row's, and its revision is the
epoch: a request judged on gateway B and answered after a writer on host A
moved the configuration on gets the same 409, whether or not B has heard
A's notice yet.

The request in flight is a ``gno_remember`` from a non-loopback peer (only
those are judged) that waits on the write lease held by a writer on A's
side; that writer changes the policy, then lets go.
"""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import trio

from gno_trio.engine.team.url import TeamStore
from tests.support.gateway_process import SCOPE, gateway_process
from tests.support.http_gateway_support import (
    modern_headers,
    modern_params,
    non_loopback_address,
    rpc,
)
from tests.support.shared import unavailable
from tests.support.team_hosts import hold_lease, host, listener_pids

GATEWAY_HOST = "gateway-b.test"
"""The ``Host`` gateway B accepts (any port it binds)."""

_CHANGE_POLICY = (
    "import sys\n"
    "import attrs\n"
    "from gno_trio.engine import Engine, Team\n"
    "from gno_trio.engine.team.url import TeamStore\n"
    "engine = Engine.open()  # the directories of host A, from the environment\n"
    "engine.join_team(Team.open(TeamStore(sys.argv[1]), 'default'))\n"
    "def narrowed(config):\n"
    "    facts = attrs.evolve(config.collection('facts'), egress_policy=sys.argv[2])\n"
    "    return config.with_collection(facts)\n"
    "with engine.lease() as held:\n"
    "    print('held', flush=True)\n"
    "    sys.stdin.readline()\n"
    "    engine.update_config(narrowed, lease=held)\n"
    "    print('changed', flush=True)\n"
    "    sys.stdin.readline()\n"
)


def policy_writer(store: TeamStore, base: Path, policy: str) -> subprocess.Popen[str]:
    """A writer on host ``base``'s side holding the lease; a line makes it set ``policy``."""
    return hold_lease(store, base, _CHANGE_POLICY, policy)


def step(writer: subprocess.Popen[str], expect: str | None) -> None:
    assert writer.stdin is not None and writer.stdout is not None
    writer.stdin.write("\n")
    writer.stdin.flush()
    if expect is not None:
        assert writer.stdout.readline() == expect


def set_policy_everywhere(store: TeamStore, base: Path, policy: str) -> None:
    writer = policy_writer(store, base, policy)
    step(writer, "changed\n")
    step(writer, None)
    assert writer.wait(timeout=60) == 0


@asynccontextmanager
async def far_gateway(base: Path, store: TeamStore, address: str) -> AsyncIterator[dict[str, Any]]:
    """Gateway B: a daemon on ``address`` (reached from a non-loopback peer), writes on."""
    token_file = base / "token"
    async with gateway_process(
        base,
        "daemon",
        "--store", store.url,
        "--host", address,
        "--mcp-token-file", str(token_file),
        "--mcp-allowed-host", GATEWAY_HOST,
        "--mcp-allowed-origin", f"http://{GATEWAY_HOST}",
        "--mcp-enable-write",
        "--no-embed",
        "--no-watch",
        "--no-sync-on-start",
    ) as announced:  # fmt: skip
        url = f"http://{address}:{announced['port']}/mcp"
        token = token_file.read_text().strip()
        yield {
            **announced,
            "url": url,
            "headers": {"host": GATEWAY_HOST, "authorization": f"Bearer {token}"},
        }


async def remember_far(client: httpx.AsyncClient, b: dict[str, Any], text: str) -> httpx.Response:
    arguments = {"text": text, "collection": "facts", "scopes": [SCOPE], "decision": "add"}
    return await client.post(
        b["url"],
        headers={**modern_headers("tools/call", "gno_remember"), **b["headers"]},
        json=rpc("tools/call", modern_params(name="gno_remember", arguments=arguments)),
    )


def cut_listener(store: TeamStore, gateway_pid: int) -> None:
    """End a gateway's listener connection: the notices sent until it is back are lost."""
    pids = listener_pids(store, gateway_pid)
    assert pids, "the gateway listens on the store"
    with psycopg.connect(store.url, autocommit=True) as conn:
        for pid in pids:
            conn.execute("SELECT pg_terminate_backend(%s)", (pid,))


async def test_a_policy_change_on_one_host_turns_a_request_in_flight_on_another_into_409(
    tmp_path: Path, team_store: TeamStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even when B's listener is away as A changes the policy (the notice is lost)."""
    address = non_loopback_address()
    if address is None:
        unavailable("no non-loopback address to reach gateway B from")
    monkeypatch.setenv("GNO_WRITE_LOCK_WAIT_MS", "60000")  # B's call waits for the lease
    a, b = host(tmp_path / "a"), host(tmp_path / "b")
    set_policy_everywhere(team_store, a, "remote")  # the team's policy: served to any peer
    async with (
        far_gateway(b, team_store, address) as gateway_b,
        httpx.AsyncClient(timeout=90) as client,
    ):
        allowed = await remember_far(client, gateway_b, "Releases ship on Fridays.")
        assert allowed.status_code == 200, allowed.text
        assert not allowed.json()["result"].get("isError"), allowed.text

        writer = await trio.to_thread.run_sync(policy_writer, team_store, a, "local_only")
        try:
            answered: list[httpx.Response] = []
            async with trio.open_nursery() as nursery:

                async def in_flight() -> None:
                    answered.append(await remember_far(client, gateway_b, "Hotfixes any day."))

                nursery.start_soon(in_flight)
                await trio.sleep(1.0)  # judged under "remote", now waiting for the lease
                assert not answered
                await trio.to_thread.run_sync(cut_listener, team_store, gateway_b["process"].pid)
                await trio.to_thread.run_sync(step, writer, "changed\n")
                await trio.to_thread.run_sync(step, writer, None)  # the lease goes to B's call
            assert await trio.to_thread.run_sync(writer.wait) == 0
        finally:
            writer.kill()
        refused = answered[0]
        assert refused.status_code == 409, refused.text
        assert refused.json()["error"]["data"]["code"] == "EGRESS_POLICY_CHANGED"
        # B judges the next request under the team's new policy.
        denied = await remember_far(client, gateway_b, "Nothing leaves the machine now.")
        assert denied.status_code == 403, denied.text
        assert denied.json()["error"]["data"]["reason"] == "POLICY_LOCAL_ONLY"
