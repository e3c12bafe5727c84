"""A sandboxed ``gno-trio`` command line for subprocess tests, shared by the CLI test files.

Every run gets ``GNO_CONFIG_DIR``/``GNO_DATA_DIR``/``GNO_CACHE_DIR``,
``HOME`` and ``XDG_CONFIG_HOME`` inside a temporary directory (``APPDATA``
unset) and runs there, so nothing touches the real user's files: their
index, nor any MCP client's configuration.

:meth:`Cli.run` runs each command in its own process forked from a parent
that has imported the package already (:mod:`tests.support.cli_zygote`): the same
``python -m gno_trio`` with the run's argv, environment, directory and
streams, without paying the imports a thousand times. ``GNO_TEST_FRESH_CLI=1``
runs every command in a fresh interpreter instead, as does a run whose
``env`` sets a ``PYTHON*`` variable (those act at interpreter start).
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

from tests.conftest import db_snapshot

REPO = Path(__file__).resolve().parents[2]
COMMAND_TIMEOUT_S = 60

TRACING = """retrievalTraces:
  enabled: true
  redactionMode: metadata
  retention: {maxAgeDays: 30, maxTraces: 1000, maxRecordsPerTrace: 10000, maxBytes: 16777216}
"""
"""index.yml lines that turn retrieval tracing on (metadata mode), for tests that append them."""


@dataclass
class Cli:
    """A sandboxed ``gno-trio``: its directories and a way to run it."""

    home: Path
    config_dir: Path
    data_dir: Path
    env: dict[str, str]

    @property
    def config_file(self) -> Path:
        return self.config_dir / "index.yml"

    @property
    def db(self) -> Path:
        return self.data_dir / "index-default.sqlite"

    @property
    def dirs_env(self) -> dict[str, str]:
        """The sandbox's ``GNO_*_DIR`` variables, for a server started on the same index."""
        return {
            name: self.env[name] for name in ("GNO_CONFIG_DIR", "GNO_DATA_DIR", "GNO_CACHE_DIR")
        }

    def run(
        self,
        *args: str,
        code: int = 0,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        stdin: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run one command (with ``env`` entries replacing the sandbox's); assert its exit code."""
        run_env = {**self.env, **(env or {})}
        where = cwd or self.home
        # PYTHON* variables act when an interpreter starts, which a forked child skips.
        starts_fresh = any(name.startswith("PYTHON") for name in env or {})
        if starts_fresh or os.environ.get("GNO_TEST_FRESH_CLI"):
            done = subprocess.run(
                [sys.executable, "-m", "gno_trio", *args],
                env=run_env,
                cwd=where,
                input=stdin if stdin is not None else "",
                capture_output=True,
                text=True,
                timeout=COMMAND_TIMEOUT_S,
                check=False,
            )
        else:
            done = _forked(list(args), run_env, where, stdin or "")
        assert done.returncode == code, (args, done.returncode, done.stdout, done.stderr)
        return done

    def run_many(self, commands: list[tuple[str, ...]]) -> list[tuple[int, str, str]]:
        """Run independent commands concurrently: (exit code, stdout, stderr) each."""
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "gno_trio", *args],
                env=self.env,
                cwd=self.home,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for args in commands
        ]
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=COMMAND_TIMEOUT_S)
            results.append((proc.returncode, out, err))
        return results

    def json(self, *args: str, code: int = 0, cwd: Path | None = None) -> Any:
        return json.loads(self.run(*args, "--json", code=code, cwd=cwd).stdout)

    def state(self) -> tuple[bytes | None, dict[str, list[tuple[Any, ...]]] | None]:
        """The config file bytes and every database row: "did anything change?"."""
        config = self.config_file.read_bytes() if self.config_file.exists() else None
        db = db_snapshot(self.db) if self.db.exists() else None
        return config, db


class _Zygote:
    """This test process's warm parent for CLI commands (started on first use)."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.cli_zygote", str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        theirs.close()
        self.sock = ours
        atexit.register(self.close)

    def close(self) -> None:
        self.sock.close()
        self.process.wait(timeout=COMMAND_TIMEOUT_S)

    def run(
        self, argv: list[str], env: dict[str, str], cwd: Path, stdin: str
    ) -> tuple[int, str, str]:
        with (
            tempfile.TemporaryFile() as given,
            tempfile.TemporaryFile() as out,
            tempfile.TemporaryFile() as err,
        ):
            given.write(stdin.encode())
            given.seek(0)
            request = json.dumps({"argv": argv, "env": env, "cwd": str(cwd)}).encode()
            socket.send_fds(self.sock, [request], [given.fileno(), out.fileno(), err.fileno()])
            self.sock.settimeout(COMMAND_TIMEOUT_S)
            pid = json.loads(self.sock.recv(4096))["pid"]
            try:
                status = json.loads(self.sock.recv(4096))["status"]
            except TimeoutError:
                os.kill(pid, 9)
                self.sock.settimeout(None)
                self.sock.recv(4096)
                raise subprocess.TimeoutExpired(argv, COMMAND_TIMEOUT_S) from None
            return int(status), _text(out), _text(err)


def _text(stream: IO[bytes]) -> str:
    """The stream's bytes as ``subprocess.run(text=True)`` gives them (universal newlines)."""
    stream.seek(0)
    return stream.read().decode().replace("\r\n", "\n").replace("\r", "\n")


_zygote: _Zygote | None = None


def _forked(
    argv: list[str], env: dict[str, str], cwd: Path, stdin: str
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m gno_trio ARGV`` as a child of the warm parent."""
    global _zygote
    if _zygote is None or _zygote.process.poll() is not None:
        _zygote = _Zygote()
    status, out, err = _zygote.run(argv, env, cwd, stdin)
    return subprocess.CompletedProcess([sys.executable, "-m", "gno_trio", *argv], status, out, err)


def make_cli(base: Path) -> Cli:
    home = base / "home"
    home.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GNO_", "XDG_"))}
    env.pop("APPDATA", None)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        GNO_CONFIG_DIR=str(base / "config"),
        GNO_DATA_DIR=str(base / "data"),
        GNO_CACHE_DIR=str(base / "cache"),
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        COLUMNS="100",
    )
    return Cli(home, base / "config", base / "data", env)


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return make_cli(tmp_path)


MODULES_AT_EXIT = """
import atexit, json, runpy, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
runpy.run_module("gno_trio", run_name="__main__", alter_sys=True)
"""
"""``python -m gno_trio ARGS`` that writes the names in ``sys.modules`` to a file at exit."""


def modules_under(modules: set[str], prefix: str) -> set[str]:
    """The names in ``modules`` that are ``prefix`` or inside it."""
    return {name for name in modules if name == prefix or name.startswith(prefix + ".")}
