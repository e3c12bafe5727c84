"""Memory at rest: the tree RSS of a ``gno-trio mcp`` child after it answered searches.

Indexes the mcp-docs fixture with the CLI (``init`` + ``update``) into a
throwaway folder (``--keep DIR`` reuses or keeps one), then, ``--rounds``
times with a fresh server per case and round, the cases' order rotated:

* **lexical**: ``gno-trio mcp`` over the index without vectors answers
  ``--searches`` varied ``gno_search`` calls (modern era, over stdio), rests
  ``--settle`` seconds, then its tree RSS (every process under it, summed)
  is sampled in one-second windows until two in a row agree within 1 MiB
  (a background build may still be running after the last answer). The
  lexical path never needs the embedding model: target <= 60 MiB;
* **vectors** (``--vectors``): a copy of that index after ``gno-trio
  embed``; the server answers ``gno_query`` (hybrid: it loads the model and
  the vectors) and ``gno_search`` calls, then rests: target <= 140 MiB.

The anonymous and file-backed parts (the mapped weight cache, a tantivy
document index's mapped segments and the libraries) are printed beside each
figure.
Each figure prints as median (min-max) over the rounds with the load average
and the cores other work used; a memory figure is not a ratio, so it is
judged even on a busy machine.

    python bench/bench_rest.py [--rounds 5] [--searches 20] [--vectors] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from _common import (
    DEFAULT_ROUNDS,
    FIXTURES,
    REPO,
    Window,
    mib,
    process_tree,
    reap,
    rotations,
    spread,
    tree_rss_kib,
)
from bench_stdio_search import ENVELOPE

CORPUS = FIXTURES / "mcp-docs" / "corpus"
GNO = (sys.executable, "-m", "gno_trio")
LEXICAL_TARGET_MIB = 60
VECTORS_TARGET_MIB = 140
QUERIES = (
    "session",
    "resume a session",
    "roots",
    "sampling",
    "tools list",
    "authorization server",
    "transport",
    "cancel",
    "progress notification",
    "resource template",
    "elicitation",
    "prompts",
    "pagination cursor",
    "logging level",
    "capabilities",
    "json schema",
    "streamable http",
    "oauth",
    "ping",
    "completion",
)


def _exchange(stdin: IO[bytes], stdout: IO[bytes], message: dict[str, Any]) -> dict[str, Any]:
    stdin.write(json.dumps(message).encode() + b"\n")
    stdin.flush()
    line = stdout.readline()
    if not line:
        raise RuntimeError("gno-trio mcp closed stdout")
    answer: dict[str, Any] = json.loads(line)
    if "result" not in answer:
        raise RuntimeError(f"unexpected answer {line[:300]!r}")
    return answer


def _status_kib(pid: int, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _settled_rss(pid: int, limit_s: float = 60.0) -> int:
    """The tree RSS once it stopped moving: medians of one-second windows until two in a row
    are within 1 MiB (a background build may still run after the last answer)."""
    last = -(2**30)
    deadline = time.monotonic() + limit_s
    while True:
        samples = []
        for _ in range(10):
            samples.append(tree_rss_kib([pid]))
            time.sleep(0.1)
        now = int(statistics.median(samples))
        if abs(now - last) <= 1024 or time.monotonic() > deadline:
            return now
        last = now


def resting_rss(env: dict[str, str], tools: list[str], searches: int, settle: float) -> int:
    """A fresh ``gno-trio mcp``: ``searches`` calls of each tool in ``tools``, a rest, then
    its tree RSS once settled (KiB)."""
    process = subprocess.Popen(
        [*GNO, "mcp"],
        cwd=REPO,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        _exchange(
            process.stdin,
            process.stdout,
            {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": ENVELOPE}},
        )
        for index in range(searches):
            for tool in tools:
                arguments = {"query": QUERIES[index % len(QUERIES)], "limit": 5}
                _exchange(
                    process.stdin,
                    process.stdout,
                    {
                        "jsonrpc": "2.0",
                        "id": index + 1,
                        "method": "tools/call",
                        "params": {"name": tool, "arguments": arguments, "_meta": ENVELOPE},
                    },
                )
        time.sleep(settle)
        resting = _settled_rss(process.pid)
        tree = process_tree([process.pid])
        parts = {key: sum(_status_kib(pid, key) for pid in tree) for key in ("RssAnon", "RssFile")}
        print(
            f"    {len(tree)} process(es); anonymous {mib(parts['RssAnon'])}, file-backed "
            f"{mib(parts['RssFile'])} (mapped files: weight cache, tantivy segments, libraries)"
        )
        return resting
    finally:
        process.stdin.close()
        reap(process)
        process.stdout.close()


def environment(folder: Path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if k != "GNO_MCP_ENABLE_WRITE"},
        "GNO_CONFIG_DIR": str(folder / "config"),
        "GNO_DATA_DIR": str(folder / "data"),
        "GNO_CACHE_DIR": str(folder / "cache"),
    }


def build_index(base: Path, env: dict[str, str]) -> None:
    for step in (["init", str(CORPUS), "--name", "mcp"], ["update"]):
        subprocess.run([*GNO, *step], cwd=REPO, env=env, check=True, capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--searches", type=int, default=20, help="calls per tool (default 20)")
    parser.add_argument("--settle", type=float, default=2.0, help="rest before sampling (s)")
    parser.add_argument("--vectors", action="store_true", help="also embed and measure warm")
    parser.add_argument("--keep", metavar="DIR", help="index folder to reuse or keep")
    options = parser.parse_args()
    base = Path(options.keep) if options.keep else Path(tempfile.mkdtemp(prefix="gno-rest-"))
    lexical, vectors = base / "lexical", base / "vectors"
    try:
        if not (lexical / "config").exists():
            build_index(lexical, environment(lexical))
        cases: dict[str, tuple[Path, list[str], int]] = {
            "lexical": (lexical, ["gno_search"], LEXICAL_TARGET_MIB)
        }
        if options.vectors:
            if not (vectors / "config").exists():
                shutil.copytree(lexical, vectors)
            started = time.monotonic()
            subprocess.run(
                [*GNO, "embed"], cwd=REPO, env=environment(vectors), check=True, capture_output=True
            )
            print(f"  embedded a copy of the index in {time.monotonic() - started:.0f} s")
            cases["vectors"] = (vectors, ["gno_query", "gno_search"], VECTORS_TARGET_MIB)
        figures: dict[str, list[int]] = {name: [] for name in cases}
        whole = Window()
        for index, order in enumerate(rotations(list(cases), options.rounds)):
            for name in order:
                folder, tools, _ = cases[name]
                figures[name].append(
                    resting_rss(environment(folder), tools, options.searches, options.settle)
                )
                print(f"  round {index + 1}: {name} {mib(figures[name][-1])}")
        whole.close()
        print(
            f"\ngno-trio mcp tree RSS at rest after {options.searches} calls per tool, "
            f"{options.rounds} rounds with a fresh server each; median (min-max):"
        )
        for name, values in figures.items():
            target = cases[name][2]
            median = statistics.median(values) / 1024
            print(
                f"  {name:<8} {spread([v / 1024 for v in values], 1, ' MiB'):<28} target <= "
                f"{target} MiB: {'met' if median <= target else 'NOT met'}"
            )
        print(f"  {whole.line()}")
    finally:
        if not options.keep:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
