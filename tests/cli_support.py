"""A sandboxed ``gno-trio`` command line for subprocess tests, shared by the CLI test files.

Every run gets ``GNO_CONFIG_DIR``/``GNO_DATA_DIR``/``GNO_CACHE_DIR``,
``HOME`` and ``XDG_CONFIG_HOME`` inside a temporary directory (``APPDATA``
unset) and runs there, so nothing touches the real user's files: their
index, nor any MCP client's configuration.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import db_snapshot

REPO = Path(__file__).resolve().parents[1]

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

    def run(
        self,
        *args: str,
        code: int = 0,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        stdin: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run one command (with ``env`` entries replacing the sandbox's); assert its exit code."""
        done = subprocess.run(
            [sys.executable, "-m", "gno_trio", *args],
            env={**self.env, **(env or {})},
            cwd=cwd or self.home,
            input=stdin if stdin is not None else "",
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
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
            out, err = proc.communicate(timeout=60)
            results.append((proc.returncode, out, err))
        return results

    def json(self, *args: str, code: int = 0, cwd: Path | None = None) -> Any:
        return json.loads(self.run(*args, "--json", code=code, cwd=cwd).stdout)

    def state(self) -> tuple[bytes | None, dict[str, list[tuple[Any, ...]]] | None]:
        """The config file bytes and every database row: "did anything change?"."""
        config = self.config_file.read_bytes() if self.config_file.exists() else None
        db = db_snapshot(self.db) if self.db.exists() else None
        return config, db


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
