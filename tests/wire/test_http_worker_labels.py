"""``serve --workers 2``: one caller has one memory label on every worker.

A 2026-era request has no session, so the gateway labels the caller
(``http:<16 hex>``) and the memory tools use that label as the session a
recall receipt is issued to. Both workers must derive the same label for the
same caller, or a receipt issued by one is refused by the other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.support.gateway_process import (
    SCOPE,
    call,
    gateway_process,
    memory_index,
    remember,
)

FACT = "Releases ship on Fridays after the smoke tests pass."


async def worker_of(client: httpx.AsyncClient, base: str) -> int:
    pid: int = (await client.get(base + "/api/resident/metrics")).json()["worker"]["pid"]
    return pid


async def recall_on_each_worker(base: str, url: str) -> dict[int, dict[str, Any]]:
    """A recall receipt from each worker, each over a connection known to reach that worker."""
    receipts: dict[int, dict[str, Any]] = {}
    for _ in range(64):
        async with httpx.AsyncClient(timeout=30) as client:  # one kept-alive connection
            pid = await worker_of(client, base)
            if pid in receipts:
                continue
            recalled = await call(
                client,
                url,
                "gno_recall",
                query="when do releases ship",
                collection="facts",
                scopes=[SCOPE],
            )
            if await worker_of(client, base) == pid:  # still the same connection and worker
                receipts[pid] = recalled["structuredContent"]["receipt"]
        if len(receipts) == 2:
            return receipts
    raise AssertionError("the kernel never handed a connection to the second worker")


async def test_a_receipt_from_one_worker_verifies_on_the_other(tmp_path: Path) -> None:
    memory_index(tmp_path)
    async with gateway_process(
        tmp_path, "serve", "--workers", "2", "--mcp-enable-write", "--no-embed"
    ) as announced:
        url = announced["url"]
        base = url.removesuffix("/mcp")
        async with httpx.AsyncClient(timeout=30) as client:
            await remember(client, url, FACT)
        receipts = await recall_on_each_worker(base, url)
        first, second = receipts.values()
        assert first["session"] == second["session"]  # one caller, one label
        assert first["session"].startswith("http:")
        # A receipt issued by one worker is honoured by the other.
        second_pid = list(receipts)[1]
        for _ in range(64):
            async with httpx.AsyncClient(timeout=30) as client:
                if await worker_of(client, base) != second_pid:
                    continue
                await remember(client, url, "Hotfixes ship on any weekday.", receipt=first)
                assert await worker_of(client, base) == second_pid
                return
        raise AssertionError("the kernel never handed a connection to the second worker again")
