"""A gateway started as a real command (``gno-trio serve`` / ``daemon``) and its index.

Tests that need the whole process (its announcement line, signal handling, the
exit code) start it here: the command runs over a fresh index in the test's
directory on a free port, and is stopped with SIGTERM, which must exit 0.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import httpx
import trio

from gno_trio.config import load_config
from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.engine.store.config_file import save_config
from tests.conftest import gno_env
from tests.support.http_gateway_support import modern_headers, modern_params, rpc
from tests.support.shared import EVALS_CORPUS, required

NOTE = "gno://notes/alpha.md"
"""The one note of :func:`notes_index`."""
SCOPE = "project:gno-trio"
"""The memory scope :func:`remember` files facts under."""


def make_index(tmp_path: Path, *, sync: bool = True, **gateway: Any) -> Path:
    """An index over the gno-evals corpus in ``tmp_path``; returns its config file."""
    required(EVALS_CORPUS, "the shared gno-evals fixture corpus")
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(EVALS_CORPUS), name="evals")
        if sync:
            engine.sync()
    if gateway:
        config = load_config(dirs.config_file)
        save_config(
            dirs.config_file, attrs.evolve(config, gateway=attrs.evolve(config.gateway, **gateway))
        )
    return dirs.config_file


@asynccontextmanager
async def gateway_process(tmp_path: Path, *args: str) -> AsyncIterator[dict[str, Any]]:
    """Start the command, yield its announcement, then SIGTERM it and expect exit 0."""
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "gno_trio", *args, "--port", "0", "--json"]
        if "--port" not in args
        else [sys.executable, "-m", "gno_trio", *args, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=gno_env(tmp_path),
        cwd=tmp_path,
    )
    assert process.stdout is not None and process.stderr is not None
    try:
        buffer = bytearray()
        with trio.fail_after(15):
            while b"\n" not in buffer:
                chunk = await process.stdout.receive_some(4096)
                if not chunk:
                    error = await process.stderr.receive_some(65536)
                    raise AssertionError(f"exited early: {error.decode(errors='replace')}")
                buffer += chunk
        announcement: dict[str, Any] = json.loads(buffer.split(b"\n", 1)[0])
        yield {**announcement, "process": process}
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        with trio.fail_after(10):
            code = await process.wait()
        assert code == 0
        assert not await process.stdout.receive_some(4096)  # nothing else on stdout
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def notes_index(base: Path) -> Path:
    """A one-note collection indexed under ``base``; returns the notes folder."""
    notes = base / "notes"
    notes.mkdir()
    (notes / "alpha.md").write_text("# Alpha\n\nFirst words.\n", encoding="utf-8")
    dirs = Dirs(config=base / "config", data=base / "data", cache=base / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(notes), name="notes")
        engine.sync()
    return notes


def memory_index(base: Path) -> None:
    """An index under ``base`` with one empty memory collection, ``facts``."""
    facts = base / "facts"
    facts.mkdir()
    dirs = Dirs(config=base / "config", data=base / "data", cache=base / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(facts), name="facts", memory_managed=True)
        engine.sync()


async def call(client: httpx.AsyncClient, url: str, name: str, **arguments: Any) -> dict[str, Any]:
    """Call tool ``name`` at ``url`` in the 2026-07-28 era; the tool result (HTTP 200 required)."""
    answer = await client.post(
        url,
        headers=modern_headers("tools/call", name),
        json=rpc("tools/call", modern_params(name=name, arguments=arguments)),
    )
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()["result"]
    return result


async def remember(client: httpx.AsyncClient, url: str, text: str, **more: Any) -> None:
    """Add one fact in the ``facts`` collection's scope; it must succeed."""
    added = await call(
        client,
        url,
        "gno_remember",
        text=text,
        collection="facts",
        scopes=[SCOPE],
        decision="add",
        **more,
    )
    assert not added.get("isError"), added
