"""No module lying in the working directory runs inside a gno-trio child process.

Each test starts gno-trio from a folder holding booby-trapped ``json.py``,
``zipfile.py`` and ``html.py``: each records that it was imported (then hands
over the real module, so the child still works) in a marker file outside that
folder. The parent itself runs without the folder on its path (as the
``gno-trio`` script does), so every line in the marker comes from a child:
the conversion worker (``update`` over an HTML page), the ``serve --workers
2`` children, the ``--detach`` resident and the processes a large sync
prepares files in.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gno_trio.cli.mcp_setup import gno_command
from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.engine.ingest import textpool
from tests.conftest import write_corpus
from tests.support.cli_support import Cli, make_cli

TRAPPED = ("json", "zipfile", "html")
TRAP = """\
import importlib, os, sys
with open({marker!r}, "a", encoding="utf-8") as _marker:
    _marker.write(f"{{__name__}} imported by pid {{os.getpid()}}: {{sys.argv[:3]}}\\n")
_here = os.path.dirname(os.path.abspath(__file__))
_saved = list(sys.path)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]
del sys.modules[__name__]
try:
    sys.modules[__name__] = importlib.import_module(__name__)
finally:
    sys.path[:] = _saved
"""


def booby_trapped(folder: Path, marker: Path, names: tuple[str, ...] = TRAPPED) -> Path:
    """``folder`` holding modules named like the standard library's; each writes to ``marker``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / f"{name}.py").write_text(TRAP.format(marker=str(marker)), encoding="utf-8")
    return folder


def imported(marker: Path) -> list[str]:
    return marker.read_text(encoding="utf-8").splitlines() if marker.exists() else []


@pytest.fixture
def trapped(tmp_path: Path) -> tuple[Path, Path]:
    """A booby-trapped folder to start gno-trio in, and the marker its modules write."""
    marker = tmp_path / "imported.txt"
    return booby_trapped(tmp_path / "cloned-repo", marker), marker


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Cli]:
    sandbox = make_cli(tmp_path)
    notes = write_corpus(
        tmp_path / "notes",
        {
            "tea.md": "# Tea\n\nGreen tea steeps briefly.\n",
            "page.html": "<html><head><title>Kettle</title></head>"
            "<body><p>The kettle whistles at the boil.</p></body></html>",
        },
    )
    sandbox.run("init", str(notes), "--name", "notes")
    yield sandbox
    if (sandbox.data_dir / "serve.pid").exists():
        subprocess.run(
            [sys.executable, "-m", "gno_trio", "serve", "--stop"],
            env=sandbox.env,
            capture_output=True,
            timeout=30,
            check=False,
        )


def test_the_conversion_worker_imports_nothing_from_the_working_directory(
    cli: Cli, trapped: tuple[Path, Path]
) -> None:
    folder, marker = trapped
    cli.run("update", cwd=folder)
    found = json.loads(cli.run("search", "kettle", "--json", cwd=folder).stdout)
    assert any("page.html" in json.dumps(hit) for hit in found["results"]), found
    assert imported(marker) == []


def test_a_detached_resident_imports_nothing_from_the_working_directory(
    cli: Cli, trapped: tuple[Path, Path]
) -> None:
    folder, marker = trapped
    started = json.loads(
        cli.run("serve", "--detach", "--port", "0", "--no-embed", "--json", cwd=folder).stdout
    )
    health = httpx.get(started["url"].replace("/mcp", "/api/resident/status"), timeout=10)
    assert health.status_code == 200
    cli.run("serve", "--stop", "--json", cwd=folder)
    assert imported(marker) == []


def test_gateway_workers_import_nothing_from_the_working_directory(
    cli: Cli, trapped: tuple[Path, Path]
) -> None:
    folder, marker = trapped
    # -P: the parent, like the installed ``gno-trio`` script, has no working directory on its path.
    command = [sys.executable, "-P", "-m", "gno_trio", "serve", "--workers", "2"]
    process = subprocess.Popen(
        [*command, "--port", "0", "--json", "--no-embed"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli.env,
        cwd=folder,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line, process.stderr.read().decode() if process.stderr else ""
        announced = json.loads(line)
        for _ in range(4):
            status = httpx.get(announced["statusUrl"], timeout=10)
            assert status.status_code == 200
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert imported(marker) == []


def test_sync_workers_import_nothing_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A spawned worker imports pickle, socket and selectors before it takes its
    # parent's sys.path; the working directory must not be on its path then either.
    marker = tmp_path / "imported.txt"
    folder = booby_trapped(tmp_path / "cloned-repo", marker, ("pickle", "selectors", "socket"))
    notes = write_corpus(
        tmp_path / "notes", {f"n{i}.md": f"# Note {i}\n\nokapi {i}\n" for i in range(40)}
    )
    monkeypatch.setattr(textpool, "PARALLEL_FROM", 10)
    monkeypatch.setattr(textpool, "usable_cores", lambda: 2)
    monkeypatch.chdir(folder)
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(notes), name="notes")
        (report,) = engine.sync()
        assert report.added == 40
    assert imported(marker) == []


def test_a_client_entry_without_a_console_script_starts_isolated_too(
    cli: Cli, trapped: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Where no gno-trio script stands beside the interpreter, the entry runs python -m.
    interpreter = sys.executable
    monkeypatch.setattr(sys, "executable", str(tmp_path / "bare-bin" / "python"))
    executable, *flags = gno_command()
    assert executable == sys.executable and flags[-2:] == ["-m", "gno_trio"]
    folder, marker = trapped
    done = subprocess.run(
        [interpreter, *flags, "mcp"],
        input=b"",
        capture_output=True,
        env=cli.env,
        cwd=folder,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert imported(marker) == []
