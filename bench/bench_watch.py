"""Saved edit to findable: a running ``serve`` following its folder, beside a full ``update``.

Builds a throwaway index of the mcp-docs corpus (copied, so edits touch the
copy only), embeds it, starts ``gno-trio serve`` on it and measures, over
the 2026-07-28 HTTP transport (sessionless ``tools/call``):

* ``edit->gno_search``: from an editor-style save (a temporary file renamed
  over a note) until ``gno_search`` for a word the edit added lists that
  note; ``edit->gno_vsearch``: until ``gno_vsearch`` for the sentence the
  edit added puts that note first (lexical first, vectors next);
* ``burst``: 1,000 new notes written into the folder at once, until every
  one is indexed, with ``gno_search`` p50/p99 from a client searching all
  the while;
* ``idle``: a fresh ``serve``'s CPU over an idle window once it settled,
  with its watch and with ``--no-watch`` (interleaved), as a share of one core;
* ``update``: the same kind of edit made with the gateway stopped, then a
  full ``gno-trio update`` (a process, as a user runs it), timed to its exit.

Prints min/median/p95/max per series and the machine's load average.
Asserts nothing.

    python bench/bench_watch.py [--edits 20] [--updates 10] [--burst 1000] [--idle 20]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from _common import free_port, percentile

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(os.environ.get("GNO_FIXTURES", REPO.parent / "shared" / "fixtures"))
CORPUS = FIXTURES / "mcp-docs" / "corpus"
GNO = [sys.executable, "-m", "gno_trio"]
MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench-watch", "version": "1"},
}
POLL_S = 0.02
SETTLE_S = 30.0
GIVE_UP_S = 60.0
TOPICS = (
    "Sourdough bread needs a lively starter, a long cold proof and a very hot oven.",
    "Saturn's rings are made of ice and rock fragments orbiting the giant planet.",
    "A sailboat tacks upwind by turning its bow through the eye of the wind.",
    "Tomato seedlings grow sturdy when a fan gently moves the air around them.",
    "The violin's bow is strung with horsehair rubbed with rosin for grip.",
    "Marathon runners load carbohydrates in the days before the race.",
    "Bees communicate the direction of flowers with a waggle dance in the hive.",
    "Espresso is brewed by forcing hot water through finely ground coffee.",
    "Glaciers carve U-shaped valleys as they slowly grind down mountainsides.",
    "A chess opening gambit sacrifices a pawn for quick development.",
    "Octopuses change the colour of their skin to hide among the rocks.",
    "Knitting a cable pattern crosses stitches over each other with a spare needle.",
    "Volcanic eruptions can cool the climate by filling the sky with ash.",
    "Pottery clay must be wedged to remove air bubbles before throwing.",
    "The Roman aqueducts carried water across valleys on stone arches.",
    "Birdwatchers recognise warblers by their song before they see them.",
    "A sourdough-free flatbread puffs up when the griddle is scorching hot.",
    "Cyclists draft behind each other to save energy in a peloton.",
    "Honey never spoils because its sugar content draws water out of microbes.",
    "Lighthouse keepers once wound clockwork to turn the great lens at night.",
    "Orchids grow on tree bark in rainforests, catching water from the air.",
    "A tailor chalks the fabric before cutting the pieces of a jacket.",
    "Whales sing long songs that travel hundreds of kilometres underwater.",
    "Snowshoes spread a walker's weight so they do not sink into deep snow.",
)


def _free_port() -> int:
    return free_port("bench_watch")


def _run(env: dict[str, str], *args: str) -> float:
    started = time.perf_counter()
    subprocess.run([*GNO, *args], env=env, check=True, capture_output=True, timeout=1800)
    return time.perf_counter() - started


class Client:
    """Sessionless ``tools/call`` against the gateway (2026-07-28)."""

    def __init__(self, port: int) -> None:
        self._http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60)
        self._ids = 0

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self._ids += 1
        body = {
            "jsonrpc": "2.0",
            "id": self._ids,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": ENVELOPE},
        }
        answer = self._http.post(
            "/mcp",
            json=body,
            headers={
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": MODERN,
                "mcp-method": "tools/call",
                "mcp-name": name,
            },
        )
        answer.raise_for_status()
        message: dict[str, Any] = answer.json()
        result: dict[str, Any] = message["result"]["structuredContent"]
        return result

    def uris(self, name: str, query: str) -> list[str]:
        found = self.call(name, {"query": query, "limit": 5, "collection": "docs"})
        return [hit["uri"] for hit in found["results"]]

    def close(self) -> None:
        self._http.close()


def _until(check: Callable[[], bool]) -> float:
    started = time.perf_counter()
    while not check():
        if time.perf_counter() - started > GIVE_UP_S:
            return float("nan")
        time.sleep(POLL_S)
    return time.perf_counter() - started


def _save(path: Path, text: str) -> None:
    """An editor's save: a temporary file beside the note, renamed over it."""
    temp = path.with_name(f".{path.name}.tmp-save")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)


def _describe(label: str, samples: list[float]) -> str:
    if not samples:
        return f"{label}: no samples"
    ms = sorted(s * 1000 for s in samples)
    return (
        f"{label}: n={len(ms)} min={ms[0]:.0f} ms median={statistics.median(ms):.0f} ms "
        f"p95={percentile(ms, 95):.0f} ms max={ms[-1]:.0f} ms"
    )


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _edit_note(root: Path, index: int) -> Path:
    return root / "edits" / f"edit-{index:02d}.md"


def _edit(root: Path, index: int) -> tuple[Path, str, str]:
    """The ``index``-th edit: a short note rewritten; the word and the sentence it now holds."""
    path = _edit_note(root, index)
    word = f"zqxedit{index}marker"
    sentence = TOPICS[index % len(TOPICS)]
    _save(path, f"# Edit note {index}\n\n{sentence} ({word})\n")
    return path, word, sentence


def _findable(client: Client, tool: str, query: str, uri: str, saved: float) -> float:
    """Seconds from ``saved`` until ``tool`` finds ``uri`` for ``query``."""
    _until(lambda: uri in client.uris(tool, query))
    return time.perf_counter() - saved


def _uri(root: Path, path: Path) -> str:
    return f"gno://docs/{path.relative_to(root).as_posix()}"


def _idle_share(env: dict[str, str], port: int, seconds: float, *flags: str) -> float:
    """CPU of a fresh idle ``serve`` (after it settled) over ``seconds``, as a share of a core."""
    serve = subprocess.Popen(
        [*GNO, "serve", "--port", str(port), *flags],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        client = Client(port)
        _until(lambda: _answers(client))
        client.close()
        time.sleep(SETTLE_S)  # past the start-up work (the in-memory chunk index, the model)
        before = _cpu_seconds(serve.pid)
        time.sleep(seconds)
        return (_cpu_seconds(serve.pid) - before) / seconds
    finally:
        serve.terminate()
        serve.wait(timeout=60)


def _answers(client: Client) -> bool:
    try:
        client.call("gno_status", {})
    except httpx.HTTPError:
        return False
    return True


def _active(db: Path, prefix: str) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
        (count,) = conn.execute(
            "SELECT COUNT(*) FROM documents WHERE collection = 'docs' AND active = 1 "
            "AND rel_path LIKE ?",
            (prefix + "%",),
        ).fetchone()
    return int(count)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--updates", type=int, default=10)
    parser.add_argument("--burst", type=int, default=1000)
    parser.add_argument("--idle", type=float, default=20.0, help="seconds of idle CPU window")
    args = parser.parse_args(argv)
    if not CORPUS.is_dir():
        print(f"mcp-docs fixture not found at {CORPUS}", file=sys.stderr)
        return 2

    base = Path(tempfile.mkdtemp(prefix="gno-bench-watch-"))
    try:
        root = base / "docs"
        shutil.copytree(CORPUS, root)
        env = {
            **os.environ,
            "GNO_CONFIG_DIR": str(base / "config"),
            "GNO_DATA_DIR": str(base / "data"),
            "GNO_CACHE_DIR": os.environ.get("GNO_CACHE_DIR", str(base / "cache")),
        }
        # Short notes the edits rewrite (a note about a topic far from the corpus, so the
        # vector search for its sentence finds it only once its new vector is stored).
        (root / "edits").mkdir()
        for index in range(args.edits + args.updates):
            _edit_note(root, index).write_text(
                f"# Edit note {index}\n\nA short note about the protocol, to be rewritten.\n"
            )
        _run(env, "init", str(root), "--name", "docs")
        with (base / "config" / "index.yml").open("a", encoding="utf-8") as config:
            config.write("gateway:\n  limits:\n    maxRequestsPerMinute: 1000000\n")
        index_s = _run(env, "index")
        files = sum(1 for found in root.rglob("*") if found.is_file())
        print(f"corpus: {files} files; index+embed {index_s:.1f} s")
        print(f"load average at start: {os.getloadavg()}")

        port = _free_port()
        serve = subprocess.Popen(
            [*GNO, "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = Client(port)
        try:
            state = base / "data" / "watch-state.json"

            def watching() -> bool:
                try:
                    report = json.loads(state.read_text())
                except (OSError, ValueError):
                    return False
                return bool(report.get("activeCollections") == ["docs"])

            _until(watching)
            lexical: list[float] = []
            semantic: list[float] = []
            for index in range(args.edits):
                path, word, sentence = _edit(root, index)
                uri = _uri(root, path)
                saved = time.perf_counter()
                lexical.append(_findable(client, "gno_search", word, uri, saved))
                semantic.append(_findable(client, "gno_vsearch", sentence, uri, saved))
            print(_describe("edit->gno_search  ", lexical))
            print(_describe("edit->gno_vsearch ", semantic))

            # A burst: many new notes at once, a client searching all the while.
            searches: list[float] = []
            stop = threading.Event()

            def searching() -> None:
                other = Client(port)
                while not stop.is_set():
                    started = time.perf_counter()
                    other.uris("gno_search", "transport")
                    searches.append(time.perf_counter() - started)
                other.close()

            searcher = threading.Thread(target=searching)
            searcher.start()
            burst = root / "burst"
            burst.mkdir()
            db = base / "data" / "index-default.sqlite"
            started = time.perf_counter()
            for n in range(args.burst):
                (burst / f"note-{n:04d}.md").write_text(
                    f"# Burst note {n}\n\nBurst body {n} about topic zqxburst{n}.\n"
                )
            written = time.perf_counter() - started
            settled = _until(lambda: _active(db, "burst/") == args.burst)
            stop.set()
            searcher.join()
            print(
                f"burst: {args.burst} files written in {written * 1000:.0f} ms, all indexed "
                f"{(written + settled) * 1000:.0f} ms after the first write"
            )
            if searches:
                ms = sorted(s * 1000 for s in searches)
                print(
                    f"gno_search during the burst: n={len(ms)} p50={percentile(ms, 50):.1f} ms "
                    f"p99={percentile(ms, 99):.1f} ms max={ms[-1]:.1f} ms"
                )

            _until(
                lambda: (
                    client.call("gno_status", {})["background"]["embedding"]["pendingDocCount"] == 0
                )
            )
        finally:
            client.close()
            serve.terminate()
            serve.wait(timeout=60)

        # Idle: a fresh serve doing nothing, with its watch and without (interleaved).
        watched, unwatched = [], []
        for _ in range(2):
            watched.append(_idle_share(env, port, args.idle / 2, "--no-embed"))
            unwatched.append(_idle_share(env, port, args.idle / 2, "--no-embed", "--no-watch"))
        on, off = statistics.fmean(watched) * 100, statistics.fmean(unwatched) * 100
        print(f"idle serve CPU over {args.idle:.0f} s: watch on {on:.2f} %, --no-watch {off:.2f} %")

        updates: list[float] = []
        for index in range(args.edits, args.edits + args.updates):
            _edit(root, index)
            updates.append(_run(env, "update"))
        print(_describe("edit->update exit ", updates))
        print(f"load average at end: {os.getloadavg()}")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
