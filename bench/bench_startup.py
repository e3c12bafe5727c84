"""Start-up time of fresh ``gno-trio`` processes, each beside same-run floors.

Every CLI command is a new process and an IDE spawns ``gno-trio mcp`` once
per session, so the interpreter start and the imports are paid by every
user, every time. Cases, each a fresh process:

* ``floor-python``: ``python -c pass`` (the interpreter alone);
* ``floor-imports``: ``python -c "import sqlite3, trio"`` (the least any
  command of ours could import);
* ``help``: ``python -m gno_trio --help``;
* ``search``: ``python -m gno_trio search WORD`` over a small real index (the
  mcp-docs fixture, built once in a temporary folder before timing), one
  word per run from a list of words that hit;
* ``mcp-init`` / ``mcp-list``: ``python -m gno_trio mcp`` spawned, timed to its
  ``initialize`` response, then on to its ``tools/list`` response (raw JSON
  lines over stdio; the process is then closed, untimed).

Rounds are interleaved (every case once per round, in an order that rotates
each round), so load drifts on a shared machine fall on every case alike.
Printed per case: wall median and p90, child CPU median (user + system, from
the kernel's accounting of the waited-for child), and the ratio of each
median to the floors' medians of the same run. ``--compare SRC`` also runs
the gno-trio cases from another source tree (say, a checkout of an earlier
commit), interleaved in the same rounds over the same index, labelled
``@compare``: a before/after under the same load. Asserts nothing.

    python bench/bench_startup.py [--rounds 20] [--compare SRC]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from _common import percentile

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(os.environ.get("GNO_FIXTURES", REPO.parent / "shared" / "fixtures"))
CORPUS = FIXTURES / "mcp-docs" / "corpus"
GNO = [sys.executable, "-m", "gno_trio"]
CANDIDATE_WORDS = (
    "server",
    "client",
    "transport",
    "resource",
    "prompt",
    "sampling",
    "authorization",
    "capabilities",
    "notification",
    "session",
    "schema",
    "elicitation",
    "cancellation",
    "progress",
    "pagination",
    "roots",
)
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench-startup", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}

Sample = tuple[float, float]
"""(wall seconds, child CPU seconds) of one run."""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed_run(argv: list[str], env: dict[str, str]) -> Sample:
    """One process to completion, output discarded; exits non-zero -> the bench stops."""
    cpu = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(
        argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=False
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv} exited {done.returncode}")
    return wall, _children_cpu() - cpu


def _line(message: Mapping[str, object]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def spawn_mcp(env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``gno-trio mcp`` with ``env``, its stdin and stdout piped (stderr discarded)."""
    return subprocess.Popen(
        [*GNO, "mcp"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def _mcp_session(env: dict[str, str]) -> tuple[Sample, Sample]:
    """Spawn ``mcp``; times (wall only) to the initialize and the tools/list responses.

    The CPU of the child is known only once it has exited, so both samples
    carry the CPU of the whole session (spawn to ``tools/list`` answered,
    then end of input, which the server takes as the end of the session).
    """
    cpu = _children_cpu()
    started = time.perf_counter()
    process = spawn_mcp(env)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(_line(INITIALIZE))
    process.stdin.flush()
    answer = json.loads(process.stdout.readline())
    initialized = time.perf_counter() - started
    if answer.get("id") != 1 or "result" not in answer:
        raise SystemExit(f"initialize failed: {answer}")
    process.stdin.write(_line(INITIALIZED) + _line(TOOLS_LIST))
    process.stdin.flush()
    answer = json.loads(process.stdout.readline())
    listed = time.perf_counter() - started
    if answer.get("id") != 2 or not answer.get("result", {}).get("tools"):
        raise SystemExit(f"tools/list failed: {str(answer)[:200]}")
    process.stdin.close()
    process.wait(timeout=30)
    process.stdout.close()
    used = _children_cpu() - cpu
    return (initialized, used), (listed, used)


def _with_source(env: dict[str, str], source: Path) -> dict[str, str]:
    """``env`` with ``source`` first on ``PYTHONPATH``: ``-m gno_trio`` runs that tree."""
    path = os.pathsep.join(filter(None, [str(source), env.get("PYTHONPATH")]))
    return {**env, "PYTHONPATH": path}


def index_environment(base: Path) -> dict[str, str]:
    """This environment with gno-trio's directories (and ``HOME``) under ``base``."""
    env = _with_source(dict(os.environ), REPO)
    env.update(
        GNO_CONFIG_DIR=str(base / "config"),
        GNO_DATA_DIR=str(base / "data"),
        GNO_CACHE_DIR=str(base / "cache"),
        HOME=str(base),
    )
    return env


def index_corpus(env: dict[str, str]) -> None:
    """Index the mcp-docs corpus (one collection, ``docs``) where ``env`` points."""
    subprocess.run(
        [*GNO, "init", str(CORPUS), "--name", "docs"],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    subprocess.run([*GNO, "update"], env=env, check=True, stdout=subprocess.DEVNULL)


def _build_index(base: Path) -> dict[str, str]:
    """An index of the mcp-docs corpus in ``base``; the environment that selects it."""
    env = index_environment(base)
    index_corpus(env)
    return env


def _hitting_words(env: dict[str, str]) -> list[str]:
    words = []
    for word in CANDIDATE_WORDS:
        done = subprocess.run(
            [*GNO, "search", word, "--json"], env=env, capture_output=True, text=True, check=True
        )
        if json.loads(done.stdout).get("results"):
            words.append(word)
    if not words:
        raise SystemExit("no candidate word hits the mcp-docs index")
    return words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument(
        "--compare", type=Path, help="another gno-trio source tree, timed in the same rounds"
    )
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="gno-bench-startup-"))
    here = Path.cwd()
    os.chdir(base)  # ``-m`` puts the working directory first on sys.path: no gno_trio there
    try:
        env = _build_index(base)
        words = _hitting_words(env)
        samples: dict[str, list[Sample]] = {}
        cases: list[Callable[[], None]] = [
            _simple(samples, "floor-python", [sys.executable, "-c", "pass"], env),
            _simple(samples, "floor-imports", [sys.executable, "-c", "import sqlite3, trio"], env),
            *_gno_cases(samples, "", env, words),
        ]
        if args.compare is not None:
            peer = _with_source(env, args.compare.resolve())
            cases += _gno_cases(samples, "@compare", peer, words)
        for case in cases:  # one warm-up round: the page cache and .pyc files
            case()
        samples.clear()
        for turn in range(args.rounds):
            shift = turn % len(cases)
            for case in cases[shift:] + cases[:shift]:
                case()
        _report(samples, args.rounds, len(words))
    finally:
        os.chdir(here)
        shutil.rmtree(base, ignore_errors=True)


def _simple(
    samples: dict[str, list[Sample]], name: str, argv: list[str], env: dict[str, str]
) -> Callable[[], None]:
    return lambda: samples.setdefault(name, []).append(_timed_run(argv, env))


def _gno_cases(
    samples: dict[str, list[Sample]], suffix: str, env: dict[str, str], words: list[str]
) -> list[Callable[[], None]]:
    """``--help``, a search (the next word each run) and an mcp session, run with ``env``."""
    turn = iter(range(10**9))

    def search() -> None:
        word = words[next(turn) % len(words)]
        samples.setdefault(f"search{suffix}", []).append(_timed_run([*GNO, "search", word], env))

    def mcp() -> None:
        init, listed = _mcp_session(env)
        samples.setdefault(f"mcp-init{suffix}", []).append(init)
        samples.setdefault(f"mcp-list{suffix}", []).append(listed)

    return [_simple(samples, f"help{suffix}", [*GNO, "--help"], env), search, mcp]


def _report(samples: dict[str, list[Sample]], rounds: int, word_count: int) -> None:
    python = statistics.median(w for w, _ in samples["floor-python"])
    imports = statistics.median(w for w, _ in samples["floor-imports"])
    print(f"fresh processes, {rounds} interleaved rounds; search over {word_count} words")
    print(f"load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    header = (
        f"{'case':<22}{'wall p50':>10}{'wall p90':>10}{'cpu p50':>10}"
        f"{'x python':>10}{'x imports':>11}{'x compare':>11}"
    )
    print(header)
    medians = {name: statistics.median(w for w, _ in runs) for name, runs in samples.items()}
    for name, runs in samples.items():
        walls = [w * 1000 for w, _ in runs]
        cpus = [c * 1000 for _, c in runs]
        median = medians[name]
        peer = medians.get(f"{name}@compare")
        print(
            f"{name:<22}{median * 1000:>8.1f}ms{percentile(walls, 90):>8.1f}ms"
            f"{statistics.median(cpus):>8.1f}ms{median / python:>9.2f}x"
            f"{median / imports:>10.2f}x" + (f"{median / peer:>10.2f}x" if peer else "")
        )
    print("(mcp-* cpu: the whole session's, spawn to end of input; x compare: this tree's")
    print(" median over the --compare tree's, same rounds)")


if __name__ == "__main__":
    main()
