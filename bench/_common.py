"""The benchmark harness every script in ``bench/`` measures with.

One home for how a figure is taken, so every bench tells the truth the same
way on a shared, noisy machine:

* **rounds and rotation**: :func:`rotations` gives each round's order of the
  peers, rotated per round, so drift hits every peer alike; a figure is
  printed as min / median / max over the rounds (:func:`spread`), never as
  one run.
* **CPU per call**: :func:`tree_cpu_s` is utime + stime of a server's whole
  process tree (every thread of every descendant, plus the reaped children
  it waited for), read from ``/proc``; CPU per call is its growth over a
  block divided by the calls, and is printed beside wall time because it is
  what other work on the machine disturbs least.
* **memory**: :func:`tree_rss_kib` sums the resident set of every process
  in a tree; :class:`RssSampler` samples it for the peak.
* **the machine**: :class:`Window` reads the load average and, from
  ``/proc/stat``, the CPU everything on the machine used minus this bench's
  own process tree (the bench, its clients and every server it started):
  the cores other work held. :func:`verdict` prints no verdict when other
  work held more than :data:`BUSY_CORES`, but ``machine busy: ratios
  unreliable``.
* **ports**: fixed ranges per bench (:data:`PORT_RANGES`), never port 0, so a
  run's servers are found and told apart on the machine.
* **paths and indexes**: :data:`REPO`, :data:`FIXTURES`, :func:`temp_engine`,
  and the serving engine and SDK peer the search benches compare with.

Only the standard library is imported at module level: a bench measuring a
child's memory imports this module in the child, and the MCP SDK (about
30 MiB) or the engine must not be charged to what it measures.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from gno_trio.engine import Engine

FIXTURES = Path(os.environ.get("GNO_FIXTURES", REPO.parent / "shared" / "fixtures"))

#: Other work holding more cores than this during a run makes its ratios noise.
BUSY_CORES = 0.5
BUSY = "machine busy: ratios unreliable"
#: Rounds a figure is taken over unless a bench is told otherwise.
DEFAULT_ROUNDS = 5

_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024

T = TypeVar("T")

# -- statistics -----------------------------------------------------------------------------


def percentile(values: Sequence[float], pct: float) -> float:
    """Linear-interpolated percentile; NaN for no values."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * pct / 100
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def spread(values: Sequence[float], digits: int = 2, unit: str = "") -> str:
    """``median (min-max)`` of a figure over rounds, the form every bench prints."""
    if not values:
        return "-"
    median = statistics.median(values)
    if len(values) == 1:
        return f"{median:,.{digits}f}{unit}"
    return f"{median:,.{digits}f}{unit} ({min(values):,.{digits}f}-{max(values):,.{digits}f})"


def describe_ms(label: str, samples_s: Sequence[float]) -> str:
    ms = [s * 1000 for s in samples_s]
    return (
        f"{label}: n={len(ms)} p50={percentile(ms, 50):.3f} ms p95={percentile(ms, 95):.3f} ms "
        f"p99={percentile(ms, 99):.3f} ms mean={statistics.fmean(ms):.3f} ms"
    )


def rotations(peers: Sequence[T], rounds: int) -> Iterator[list[T]]:
    """Each round's order of ``peers``: rotated by one per round, so none is always first."""
    for n in range(rounds):
        shift = n % len(peers) if peers else 0
        yield [*peers[shift:], *peers[:shift]]


# -- processes ------------------------------------------------------------------------------


def process_tree(roots: Sequence[int]) -> list[int]:
    """``roots`` and every live process below them (``/proc/<pid>/task/*/children``)."""
    found: list[int] = []
    pending = list(roots)
    while pending:
        pid = pending.pop()
        if pid in found:
            continue
        found.append(pid)
        for task in Path(f"/proc/{pid}/task").glob("*"):
            with contextlib.suppress(OSError, ValueError):
                pending.extend(int(c) for c in (task / "children").read_text().split())
    return found


def _stat_ticks(pid: int) -> int:
    """utime + stime + cutime + cstime of ``pid`` (all its threads and its reaped children)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except OSError:
        return 0
    return sum(int(value) for value in fields[11:15])


def tree_cpu_s(roots: Sequence[int]) -> float:
    """CPU seconds the process trees under ``roots`` have used so far, every thread and
    descendant counted (children that exited and were waited for included)."""
    return sum(_stat_ticks(pid) for pid in process_tree(roots)) / _TICKS


def tree_rss_kib(roots: Sequence[int]) -> int:
    """Resident set of the process trees under ``roots``, summed over every process."""
    total = 0
    for pid in process_tree(roots):
        try:
            with open(f"/proc/{pid}/statm", "rb") as handle:
                total += int(handle.read().split()[1]) * _PAGE_KIB
        except (OSError, IndexError, ValueError):
            continue
    return total


class RssSampler:
    """Samples the tree RSS of ``roots`` in a thread for the peak (a context manager).

    ``roots`` may grow while sampling (a server started inside the block).
    """

    def __init__(self, roots: Sequence[int] = (), interval: float = 0.05) -> None:
        self.roots = list(roots) or [os.getpid()]
        self.peak_kib = 0
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> int:
        now = tree_rss_kib(self.roots)
        self.peak_kib = max(self.peak_kib, now)
        return now

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self.sample()

    def __enter__(self) -> RssSampler:
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()


def reap(process: subprocess.Popen[bytes], timeout: float = 15.0) -> None:
    """Wait for a server told to stop (stdin closed, SIGTERM); kill it if it lingers."""
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def mib(kib: float) -> str:
    return f"{kib / 1024:.1f} MiB"


# -- the machine ----------------------------------------------------------------------------


def machine_busy_s() -> float:
    """CPU seconds everything on the machine has used (all cores), from ``/proc/stat``."""
    with open("/proc/stat", "rb") as handle:
        fields = [int(value) for value in handle.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return (user + nice + system + irq + softirq + steal) / _TICKS


def own_tree_cpu_s() -> float:
    """CPU seconds of this bench's own tree: itself, its clients and every server it started."""
    return tree_cpu_s([os.getpid()])


class Window:
    """What the machine did while a measured run ran: the cores other work held.

    Open it before a run, :meth:`close` it after. Other work is the whole
    machine's CPU minus this bench's own process tree (so the servers measured
    and the clients driving them are never counted as noise). Windows nest: a
    bench keeps one around its whole run for the final verdict gate.
    """

    def __init__(self) -> None:
        self.started = time.monotonic()
        self._machine = machine_busy_s()
        self._ours = own_tree_cpu_s()
        self.elapsed_s = 0.0
        self.others_cores = 0.0
        self.ours_cores = 0.0
        self.loadavg = os.getloadavg()

    def close(self) -> Window:
        self.elapsed_s = max(1e-9, time.monotonic() - self.started)
        ours = own_tree_cpu_s() - self._ours
        machine = machine_busy_s() - self._machine
        self.ours_cores = ours / self.elapsed_s
        self.others_cores = max(0.0, machine - ours) / self.elapsed_s
        self.loadavg = os.getloadavg()
        return self

    @property
    def busy(self) -> bool:
        return self.others_cores > BUSY_CORES

    def line(self) -> str:
        one, five, fifteen = self.loadavg
        return (
            f"machine: load average {one:.2f} {five:.2f} {fifteen:.2f}, {os.cpu_count()} cores; "
            f"over {self.elapsed_s:.1f} s other work used {self.others_cores:.2f} cores, "
            f"this bench {self.ours_cores:.2f}" + (f" -> {BUSY}" if self.busy else "")
        )


def verdict(ratio: float, target: str, met: bool, window: Window | None) -> str:
    """``target ...: met / NOT met``, or :data:`BUSY` when other work held over half a core
    during ``window`` (a ratio taken then says more about the neighbours than the code)."""
    if window is not None and window.busy:
        return BUSY
    return f"{ratio:.2f}x, target {target}: {'met' if met else 'NOT met'}"


# -- ports ----------------------------------------------------------------------------------

#: The TCP ports (on 127.0.0.1) each bench listens on; disjoint, so benches and
#: the servers they start are told apart on the machine. Below the kernel's
#: ephemeral range (``/proc/sys/net/ipv4/ip_local_port_range``, 32768+).
PORT_RANGES: dict[str, range] = {
    "bench_http": range(18700, 18760),
    "bench_watch": range(18760, 18780),
    "soak_nonreaders": range(18780, 18800),
    "bench_scale": range(18800, 18820),
    "bench_query_serve": range(18820, 18830),
    "bench_web": range(18830, 18840),
    "bench_team": range(18840, 18860),
}


def free_port(bench: str, taken: Sequence[int] = ()) -> int:
    """The first port of ``bench``'s range nobody listens on (and not in ``taken``)."""
    for port in PORT_RANGES[bench]:
        if port in taken:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    first, last = PORT_RANGES[bench][0], PORT_RANGES[bench][-1]
    raise RuntimeError(f"every port of {bench}'s range {first}-{last} is in use")


# -- indexes and the search peers -----------------------------------------------------------


def temp_engine(root: Path, *, backend: str | None = None) -> Engine:
    """An engine whose config and data live in a fresh temporary folder.

    The folder (an index of the corpus: tens of MB) is removed when the
    benchmark's process exits. ``backend`` sets ``search.backend`` (which
    index ranks documents; default: the configuration's default).
    """
    from gno_trio.config.dirs import Dirs
    from gno_trio.engine import Engine

    base = Path(tempfile.mkdtemp(prefix="gno-bench-"))
    atexit.register(shutil.rmtree, base, ignore_errors=True)
    dirs = Dirs(config=base / "config", data=base / "data", cache=base / "cache")
    if backend is not None:
        dirs.config.mkdir(parents=True)
        (dirs.config / "index.yml").write_text(f"search:\n  backend: {backend}\n", "utf-8")
    del root
    return Engine.open(dirs=dirs)


def serving_engine(*, resident: bool) -> Engine:
    """The index the environment names, opened as a serving process runs it.

    ``serve`` (``resident``) holds the chunk index in memory, ``gno-trio mcp``
    does not; every peer and floor making "the same engine call" as one of
    them opens its engine the same way (a held index built before the first
    timed call), so only the servers differ.
    """
    from gno_trio.config.dirs import resolve_dirs
    from gno_trio.engine import Engine

    engine = Engine.open(dirs=resolve_dirs(), create=False)
    if resident:
        engine.search.hold_chunk_index()
        engine.search.chunk_index_held(timeout=120)
    return engine


def sdk_search_peer(engine: Engine) -> MCPServer[Any]:
    """The official SDK's ``MCPServer`` with one ``gno_search`` tool over ``engine``.

    The tool makes the engine call ``gno-trio``'s ``gno_search`` makes and
    returns the same payload: the same summary text and the same structured
    result. (A returned dict would go out as indented JSON text beside it,
    twice gno-trio's bytes, and the comparison would not be of the same work.)
    """
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult, TextContent

    from gno_trio.engine import SearchRequest
    from gno_trio.tools.retrieval import search_text

    server: MCPServer[Any] = MCPServer("gno-sdk-peer", log_level="WARNING")

    def gno_search(query: str, limit: int = 5) -> CallToolResult:
        """BM25 keyword search over the index."""
        found = engine.search.lexical(SearchRequest(query=query, limit=limit))
        return CallToolResult(
            content=[TextContent(type="text", text=search_text(found))],
            structured_content=found,
        )

    # The SDK reads the tool's schema from its annotations; these names are local here.
    gno_search.__annotations__ = {"query": str, "limit": int, "return": CallToolResult}
    server.add_tool(gno_search)
    return server
