"""Serving processes collect reference cycles at a serving pace; one-shot commands keep
CPython's own.

Each command runs as a real child (``python -m gno_trio`` through a wrapper that
writes the collector's thresholds when the process exits), so the test follows
the entry points a user starts.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from gno_trio.collector import SERVING_THRESHOLDS
from tests.conftest import write_corpus
from tests.support.cli_support import Cli, make_cli

THRESHOLDS_AT_EXIT = """
import atexit, gc, json, runpy, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(json.dumps(gc.get_threshold())))
runpy.run_module("gno_trio", run_name="__main__", alter_sys=True)
"""
"""``python -m gno_trio ARGS`` that writes ``gc.get_threshold()`` to a file at exit."""

TIMEOUT_S = 60


def _indexed(tmp_path: Path) -> Cli:
    cli = make_cli(tmp_path)
    cli.run("init", str(write_corpus(tmp_path / "notes")), "--name", "notes")
    cli.run("update")
    return cli


def _command(out: Path, *argv: str) -> list[str]:
    return [sys.executable, "-c", THRESHOLDS_AT_EXIT, str(out), *argv]


def _read(out: Path) -> tuple[int, ...]:
    return tuple(json.loads(out.read_text("utf-8")))


def _python_default() -> tuple[int, ...]:
    shown = subprocess.run(
        [sys.executable, "-c", "import gc; print(*gc.get_threshold())"],
        capture_output=True,
        text=True,
        check=True,
        timeout=TIMEOUT_S,
    )
    return tuple(int(part) for part in shown.stdout.split())


def test_mcp_collects_at_the_serving_pace_and_a_one_shot_command_does_not(
    tmp_path: Path,
) -> None:
    cli = _indexed(tmp_path)
    served = tmp_path / "mcp.json"
    ended = subprocess.run(  # stdin at its end at once: the server stops
        _command(served, "mcp"),
        env=cli.env,
        cwd=tmp_path,
        input="",
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert ended.returncode == 0, ended.stderr
    assert _read(served) == SERVING_THRESHOLDS

    one_shot = tmp_path / "search.json"
    searched = subprocess.run(
        _command(one_shot, "search", "the", "--json"),
        env=cli.env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert searched.returncode == 0, searched.stderr
    assert json.loads(searched.stdout)["results"]  # it did search the index
    assert _read(one_shot) == _python_default() != SERVING_THRESHOLDS


def test_serve_collects_at_the_serving_pace(tmp_path: Path) -> None:
    cli = _indexed(tmp_path)
    served = tmp_path / "serve.json"
    with subprocess.Popen(
        _command(served, "serve", "--port", "0", "--json"),
        env=cli.env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdout is not None
        announced = json.loads(process.stdout.readline())  # it listens
        assert announced["mode"] == "serve"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=TIMEOUT_S) == 0
    assert _read(served) == SERVING_THRESHOLDS
