"""Rules the test suite keeps about itself, read from the test sources.

- A test module never imports another test module: what two files share lives
  in ``tests/support/`` (importing a ``test_*`` module drags its fixtures and
  its import cost into the other file, and hides the helper from anyone
  looking for it).
- A real sleep is a guess about how long something takes; on a loaded
  machine the guess is wrong one day. Where time is the subject a test runs
  on trio's mock clock (the ``autojump_clock`` / ``mock_clock`` fixtures),
  where it waits for something it waits on that thing. The sleeps left are
  listed below, per file, each with the reason it stays; the list may only
  shrink.
- No unit test times itself: an elapsed-time comparison fails on a busy
  machine without a bug. Only a test marked ``benchmark`` may hold a cost to
  a wall-clock budget; the few other timed assertions are listed with why.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

import pytest
import trio
import trio.testing

from tests.support.waiting import real_time_limit

TESTS = Path(__file__).resolve().parent
MOCK_CLOCKS = frozenset({"autojump_clock", "mock_clock"})
SLEEPERS = frozenset({"trio", "time", "anyio", "asyncio"})
CLOCKS = frozenset({"monotonic", "perf_counter", "time", "current_time"})

SCENERY = "plays a slow party (a stalled model, a slow tool, a drip-fed body): it is the scene"
ABSENCE = "shows that something does NOT happen within a while; no event marks an absence"
PROCESS = "times a real child process (heartbeat, idle reaper, lease queue), beyond a mock clock"
QUEUED = "lets a call reach the lease queue in another thread or process, which shows no sign"

REAL_SLEEPS: dict[str, tuple[int, str]] = {
    "cli/test_memory_cli.py": (1, QUEUED),
    "engine/test_engine_upgrade.py": (1, SCENERY + " (a writer holding the database)"),
    "engine/test_job_records.py": (1, PROCESS),
    "engine/test_query_refiners.py": (1, SCENERY),
    "engine/test_vectors_endpoint.py": (1, SCENERY),
    "engine/test_vectors_lease.py": (2, ABSENCE + "; and a backlog being embedded meanwhile"),
    "server/test_mcp_gno_server.py": (2, ABSENCE + "; and a query that holds its connection"),
    "server/test_memory_mcp.py": (2, "lets a cancel reach the queued writer; then " + ABSENCE),
    "support/http_gateway_support.py": (1, SCENERY),
    "support/mcp_echo_app.py": (1, SCENERY),
    "support/stepped_clock.py": (1, "passes a lease poll's real pause through, once it is seen"),
    "wire/test_harden_connections.py": (1, "holds 90 connections open on a real process a while"),
    "wire/test_http_boundary.py": (1, "lets a drip-fed request start before the quick one"),
    "wire/test_http_workers.py": (2, PROCESS),
    "wire/test_mcp_stdio_wire.py": (2, SCENERY + "; and " + ABSENCE),
    "wire/test_team_gateways.py": (1, QUEUED),
    "wire/test_team_policy_epoch.py": (1, QUEUED),
    "wire/test_team_read_your_writes.py": (1, QUEUED + " (the host's lock file)"),
    "wire/test_team_registry_waits.py": (1, QUEUED + " (the team registry)"),
    "wire/test_vectors_gateway.py": (1, ABSENCE),
}
"""Test file (relative to ``tests/``) -> (fixed real sleeps it may hold, why they stay)."""

TIMED_ASSERTIONS: dict[str, tuple[int, str]] = {
    "cli/test_cli_resident.py": (1, "the 10 s SIGTERM grace of ``--stop`` on a real process"),
}
"""Test file -> (elapsed-time assertions outside benchmarks it may hold, why they stay).

Each is a lower bound or a wide window on a real child process or listener."""


@cache
def _parsed() -> tuple[tuple[str, ast.Module], ...]:
    return tuple(
        (rel, ast.parse(path.read_text(encoding="utf-8"), filename=rel))
        for path in sorted(TESTS.rglob("*.py"))
        if (rel := path.relative_to(TESTS).as_posix())
    )


def _sources() -> Iterator[tuple[str, ast.Module]]:
    """Every Python file under ``tests/`` (support modules too), parsed once."""
    yield from _parsed()


def _is_test_module(name: str) -> bool:
    return name.rsplit(".", 1)[-1].startswith("test_")


def _imported_test_modules(tree: ast.Module) -> list[str]:
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if _is_test_module(alias.name)]
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            if node.module and _is_test_module(node.module):
                found.append(module)
            elif not node.module:  # ``from . import test_x``
                found += [f"{module}{a.name}" for a in node.names if _is_test_module(a.name)]
    return found


def _is_sleep(node: ast.AST) -> bool:
    """A call of ``<trio|time|anyio|asyncio>.sleep`` other than ``sleep(0)`` (a checkpoint)."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "sleep"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in SLEEPERS
        and not (
            len(node.args) == 1
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == 0
        )
    )


def _on_mock_clock(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    arguments = function.args.posonlyargs + function.args.args + function.args.kwonlyargs
    return any(argument.arg in MOCK_CLOCKS for argument in arguments)


def _polls(loop: ast.For | ast.AsyncFor | ast.While) -> bool:
    """A loop that waits on a condition: it tests one, or leaves when one holds."""
    if isinstance(loop, ast.While) and not (
        isinstance(loop.test, ast.Constant) and loop.test.value is True
    ):
        return True
    return any(isinstance(node, ast.Break | ast.Return) for node in ast.walk(loop))


def _mock_clock_functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Tests taking a mock clock fixture, and the module's helpers used only inside them."""
    functions = [
        node for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    on_clock = [function for function in functions if _on_mock_clock(function)]
    inside = {id(node) for function in on_clock for node in ast.walk(function)}
    for helper in functions:
        if helper in on_clock:
            continue
        uses = [
            node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == helper.name
        ]
        if uses and all(id(use) in inside for use in uses):
            on_clock.append(helper)
    return on_clock


def real_sleeps(tree: ast.Module) -> list[int]:
    """Lines of fixed real-time sleeps: sleep calls outside any function that runs on a
    mock clock (a test taking the fixture, everything defined inside it, and a helper
    only such tests use) and outside any loop that polls a condition (a poll's pause
    is not a guess)."""
    on_clock = {id(function) for function in _mock_clock_functions(tree)}
    excused: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            excusable = _on_mock_clock(node) or id(node) in on_clock
        elif isinstance(node, ast.For | ast.AsyncFor | ast.While):
            excusable = _polls(node)
        else:
            continue
        if excusable:
            excused |= {id(inner) for inner in ast.walk(node) if _is_sleep(inner)}
    return sorted(
        node.lineno for node in ast.walk(tree) if _is_sleep(node) and id(node) not in excused
    )


def _reads_a_clock(node: ast.AST) -> bool:
    return any(
        isinstance(inner, ast.Call)
        and isinstance(inner.func, ast.Attribute)
        and inner.func.attr in CLOCKS
        and isinstance(inner.func.value, ast.Name)
        and inner.func.value.id in {"time", "trio"}
        for inner in ast.walk(node)
    )


def _is_benchmark(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(
        isinstance(decorator, ast.Attribute)
        and decorator.attr == "benchmark"
        and ast.unparse(decorator.value) == "pytest.mark"
        for decorator in function.decorator_list
    )


def _assigned(function: ast.AST, holds: Callable[[ast.expr], bool]) -> set[str]:
    return {
        target.id
        for node in ast.walk(function)
        if isinstance(node, ast.Assign) and holds(node.value)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def timed_assertions(tree: ast.Module) -> list[int]:
    """Lines of assertions on an elapsed time outside tests marked ``benchmark``: a
    comparison holding a difference of clock readings, or a name bound to one.

    A poll's bound (``assert time.monotonic() < deadline``) is not a measurement
    and is left alone. ``trio.current_time()`` counts: it is the wall clock
    unless the test runs on a mock clock, so tests on one are left out."""
    found: list[int] = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if _is_benchmark(function) or _on_mock_clock(function):
            continue
        readings = _assigned(function, _reads_a_clock)

        def clocked(node: ast.AST, readings: set[str] = readings) -> bool:
            names = {inner.id for inner in ast.walk(node) if isinstance(inner, ast.Name)}
            return _reads_a_clock(node) or bool(names & readings)

        def elapsed(node: ast.AST) -> bool:
            return any(
                isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Sub) and clocked(inner)
                for inner in ast.walk(node)
            )

        durations = _assigned(function, elapsed)
        for node in ast.walk(function):
            if not isinstance(node, ast.Assert):
                continue
            for compare in ast.walk(node.test):
                if not isinstance(compare, ast.Compare):
                    continue
                names = {inner.id for inner in ast.walk(compare) if isinstance(inner, ast.Name)}
                if elapsed(compare) or names & durations:
                    found.append(node.lineno)
                    break
    return sorted(set(found))


def test_no_test_module_imports_another() -> None:
    offenders = {
        rel: imported for rel, tree in _sources() if (imported := _imported_test_modules(tree))
    }
    assert offenders == {}, "move what they share into tests/support/"


def test_real_sleeps_stay_within_their_listed_allowance() -> None:
    counts = Counter({rel: len(lines) for rel, tree in _sources() if (lines := real_sleeps(tree))})
    over = {
        rel: (count, REAL_SLEEPS.get(rel, (0, ""))[0])
        for rel, count in counts.items()
        if count > REAL_SLEEPS.get(rel, (0, ""))[0]
    }
    assert over == {}, "wait on the condition, or run on the mock clock (found, allowed)"
    # A file that needs fewer now lowers its allowance, so the total only shrinks.
    slack = {rel: (counts[rel], allowed) for rel, (allowed, _) in REAL_SLEEPS.items()}
    assert {rel: pair for rel, pair in slack.items() if pair[0] != pair[1]} == {}


def test_no_unit_test_asserts_on_elapsed_wall_clock_time() -> None:
    counts = {rel: len(lines) for rel, tree in _sources() if (lines := timed_assertions(tree))}
    allowed = {rel: count for rel, (count, _) in TIMED_ASSERTIONS.items()}
    assert counts == allowed, "assert what happened, or mark the test benchmark"


def test_the_rules_see_what_they_forbid() -> None:
    """The walkers find each pattern they exist to find (a rule that finds nothing
    would pass for ever)."""
    sample = ast.parse(
        "import time, trio\n"
        "from tests.wire.test_x import helper\n"
        "async def test_a(autojump_clock):\n"
        "    await trio.sleep(1)\n"
        "async def test_b():\n"
        "    await trio.sleep(1)\n"
        "    started = time.monotonic()\n"
        "    assert time.monotonic() - started < 2\n"
        "def test_c():\n"
        "    started = trio.current_time()\n"
        "    waited = trio.current_time() - started\n"
        "    assert waited < 5\n"
        "    deadline = time.monotonic() + 9\n"
        "    while True:\n"
        "        assert time.monotonic() < deadline\n"
        "        time.sleep(0.1)\n"
        "        time.sleep(0)\n"
        "async def only_on_clock():\n"
        "    await trio.sleep(3)\n"
        "async def test_d(mock_clock):\n"
        "    await only_on_clock()\n"
        "async def shared():\n"
        "    await trio.sleep(3)\n"
        "async def test_e(mock_clock):\n"
        "    await shared()\n"
        "async def test_f():\n"
        "    await shared()\n"
    )
    assert _imported_test_modules(sample) == ["tests.wire.test_x"]
    assert real_sleeps(sample) == [6, 16, 23]
    assert timed_assertions(sample) == [8, 12]


async def test_a_test_on_a_standing_clock_still_fails_in_real_time(
    mock_clock: trio.testing.MockClock,
) -> None:
    """``real_time_limit`` is what keeps a regression under a frozen mock clock from
    hanging the suite: trio's own timeouts never fire there."""
    with pytest.raises(AssertionError, match="real time"), real_time_limit(0.2):
        await trio.sleep_forever()
