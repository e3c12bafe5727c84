"""A gateway in daemon mode over a small writable index, for the guard and egress tests.

The index has one collection, ``notes``; a test builds the app over it with
``engine_app`` (read-only unless asked); the daemon's settings name one host and one token,
so a request carrying :data:`AUTH` passes the boundary and egress is judged by
the collection's policy, which :func:`set_policy` rewrites in the config file.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import attrs
import pytest

from gno_trio.config import load_config
from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.engine.store.config_file import save_config
from gno_trio.server.dispatch import McpApp
from gno_trio.transports.http.asgi import GatewayApp
from gno_trio.transports.http.guards import PolicyBook
from gno_trio.transports.http.settings import GatewaySettings
from tests.support.http_gateway_support import RELAXED, gateway_app

TOKEN = "f" * 48
GATEWAY_HOST = "gw.test:4444"


@pytest.fixture
def notes_dirs(tmp_path: Path) -> Dirs:
    """An index whose one collection, ``notes``, lives in a scratch folder."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "alpha.md").write_text("# Alpha\n\nThe kubernetes rollout plan.\n", "utf-8")
    (folder / "beta.md").write_text("# Beta\n\nCaching notes and giraffes.\n", "utf-8")
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(folder), name="notes")
        engine.sync()
    return dirs


def set_policy(config_path: Path, collection: str, policy: str) -> None:
    """Write ``policy`` as ``collection``'s egress policy in the config file."""
    config = load_config(config_path)
    target = config.collection(collection)
    assert target is not None
    changed = attrs.evolve(target, egress_policy=cast(Any, policy))
    save_config(config_path, config.with_collection(changed))


def daemon_settings(tmp_path: Path) -> GatewaySettings:
    """Daemon settings on every interface, one allowed host, the token in a 0600 file."""
    token = tmp_path / "token"
    token.write_text(TOKEN)
    token.chmod(0o600)
    return GatewaySettings(
        mode="daemon",
        host="0.0.0.0",
        port=0,
        token_file=token,
        allowed_hosts=(GATEWAY_HOST,),
        allowed_origins=("https://gw.test",),
        limits=RELAXED,
    )


AUTH = {"host": GATEWAY_HOST, "authorization": f"Bearer {TOKEN}"}


@asynccontextmanager
async def remote_gateway(
    app: McpApp, tmp_path: Path, config_path: Path, engine: Engine | None = None
) -> AsyncIterator[GatewayApp]:
    """The daemon gateway app over ``app`` with the egress policies of ``config_path``."""
    policies = PolicyBook(config_path, engine.config.collections if engine is not None else None)
    async with gateway_app(app, daemon_settings(tmp_path), policies=policies) as gateway:
        yield gateway
