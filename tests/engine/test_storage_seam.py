"""The storage seam: the engine owns its connections, and the database driver stays behind it.

Surfaces (the runtime, tools, server, transports, CLI) never hold a
connection: they call ``Engine`` methods, and the engine binds one pooled
connection to each call (``engine/store/binding.py``). The driver is read
from the source, as ``tests/test_layers.py`` reads imports: a surface module
that imports ``sqlite3`` fails here, and inside the engine the modules that
still speak SQLite directly are listed by name, a list that only shrinks
as their statements move behind the store's protocols.
"""

from __future__ import annotations

import ast
import inspect
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.runtime import Runtime

ROOT = Path(__file__).resolve().parents[2]
DRIVERS = frozenset({"sqlite3"})
STORE_PACKAGES = ("gno_trio.engine.store", "gno_trio.engine.team")
"""The embedded store and the team backend's store on PostgreSQL."""
STATEMENT_CALLS = frozenset({"execute", "executemany", "executescript"})

# Engine modules that still run statements or name the driver's types themselves.
# Remove a module from here when its statements move into the store package;
# add one only when it is split off a module listed here. A module that only
# hands the call's connection on names it ``store.database.Connection``.
ENGINE_MODULES_ON_THE_DRIVER: frozenset[str] = frozenset([])


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules_on_the_driver() -> set[str]:
    found = set()
    for path in sorted((ROOT / "gno_trio").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            if any(name.split(".")[0] in DRIVERS for name in names):
                found.add(_module_name(path))
                break
    return found


def _modules_running_statements() -> set[str]:
    found = set()
    for path in sorted((ROOT / "gno_trio").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in STATEMENT_CALLS
            ):
                found.add(_module_name(path))
                break
    return found


def test_no_surface_imports_the_database_driver() -> None:
    outside = {
        module for module in _modules_on_the_driver() if not module.startswith("gno_trio.engine")
    }
    assert outside == set(), "surfaces call the engine; only the store speaks to the database"


def test_the_engine_modules_on_the_driver_only_shrink() -> None:
    """Engine modules outside the stores that import the driver or run a statement."""
    inside = {
        module.removeprefix("gno_trio.engine.")
        for module in _modules_on_the_driver() | _modules_running_statements()
        if module.startswith("gno_trio.engine.") and not module.startswith(STORE_PACKAGES)
    }
    assert inside - ENGINE_MODULES_ON_THE_DRIVER == set(), "new SQL belongs in the store package"
    assert ENGINE_MODULES_ON_THE_DRIVER - inside == set(), "moved behind the store: unlist it"


def test_no_engine_method_takes_a_connection() -> None:
    taking = sorted(
        name
        for name, method in inspect.getmembers(Engine, inspect.isfunction)
        if not name.startswith("_") and "conn" in inspect.signature(method).parameters
    )
    assert taking == [], "the engine binds the connection of a call itself"


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=dirs) as opened:
        yield opened


async def test_one_call_runs_on_one_connection_and_gives_it_back(engine: Engine) -> None:
    runtime = Runtime(engine=engine, limiter=trio.CapacityLimiter(1))

    def call() -> tuple[sqlite3.Connection, sqlite3.Connection, int]:
        with engine.connection() as first:
            first.execute("CREATE TEMP TABLE seen (x)")  # visible on this connection only
            with engine.connection() as second:
                engine.index.status()  # an engine method on the way reads the same connection
                return first, second, second.execute("SELECT count(*) FROM seen").fetchone()[0]

    first, second, rows = await runtime.run(call)
    assert first is second and rows == 0

    def which() -> sqlite3.Connection:
        with engine.connection() as conn:
            return conn

    assert await runtime.run(which) is first  # back in the pool, handed out again


def test_a_call_on_one_index_reads_another_through_its_own_pool(tmp_path: Path) -> None:
    def opened(name: str) -> Engine:
        base = tmp_path / name
        return Engine.open(dirs=Dirs(config=base / "c", data=base / "d", cache=base / "k"))

    with opened("one") as one, opened("two") as two:
        with one.connection() as mine, two.connection() as theirs:
            assert mine is not theirs
            assert (
                theirs.execute("PRAGMA database_list")
                .fetchone()[2]
                .startswith(str(tmp_path / "two"))
            )
        with one.connection() as again:
            assert again is mine  # the block ended: nothing stays bound, the pool has it back
