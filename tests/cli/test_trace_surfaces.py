"""One retrieval, one trace: the engine records it, whichever surface asked.

The command line and the MCP tools hand the engine the same request, and
the engine writes the trace from that request, so the filters a trace keeps
(in ``replay`` mode) are the same for ``gno-trio query`` and ``gno_query``,
for ``gno-trio context build`` and ``gno_context``; and every retrieval
tool GNO names (``gno_vsearch`` too) hands back its trace id in ``_meta``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from gno_trio.config.dirs import resolve_dirs
from gno_trio.engine import Engine
from tests.conftest import write_corpus
from tests.support.cli_support import Cli, make_cli
from tests.support.stdio_session import server_environment
from tests.support.tool_pipe import mcp_server

RECEIPT = re.compile(r"^Trace: (\S+)$", re.MULTILINE)
REPLAY_TRACING = """retrievalTraces:
  enabled: true
  redactionMode: replay
  retention: {maxAgeDays: 30, maxTraces: 1000, maxRecordsPerTrace: 10000, maxBytes: 16777216}
"""
NOTES = {
    "plan.md": "---\ntags: [launch, plan]\n---\n# Plan\n\nThe okapi launch is on Friday.\n",
    "other.md": "# Other\n\nThe okapi eats leaves.\n",
}


@pytest.fixture
def traced(tmp_path: Path) -> Cli:
    cli = make_cli(tmp_path)
    root = write_corpus(cli.home / "notes", NOTES)
    cli.run("init", str(root), "--name", "notes")
    cli.run("update")
    cli.config_file.write_text(cli.config_file.read_text() + REPLAY_TRACING)
    return cli


def cli_trace(cli: Cli, *args: str) -> dict[str, Any]:
    """Run a command and return the trace its receipt names."""
    done = cli.run(*args)
    found = RECEIPT.search(done.stderr)
    assert found is not None, done.stderr
    return shown(cli, found.group(1))


def shown(cli: Cli, trace_id: str) -> dict[str, Any]:
    with Engine.open(dirs=resolve_dirs(cli.env), create=False) as engine:
        trace: dict[str, Any] = engine.traces.show(trace_id)["trace"]
    return trace


async def mcp_trace(cli: Cli, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async with mcp_server(server_environment(resolve_dirs(cli.env))) as pipe:
        result = await pipe.session.tool(tool, arguments)
    assert not result.get("isError"), result
    return shown(cli, result["_meta"]["gno"]["retrievalTrace"]["traceId"])


async def test_query_leaves_the_same_filters_from_the_cli_and_over_mcp(traced: Cli) -> None:
    by_cli = cli_trace(
        traced, "query", "okapi", "-n", "3", "--explain", "-C", "7", "--tags-any", "plan"
    )
    by_mcp = await mcp_trace(
        traced,
        "gno_query",
        {"query": "okapi", "limit": 3, "explain": True, "candidateLimit": 7, "tagsAny": ["plan"]},
    )
    expected = {"limit": 3, "explain": True, "candidateLimit": 7, "tagsAny": ["plan"]}
    assert by_cli["filters"] == by_mcp["filters"] == expected
    assert by_cli["fingerprints"]["pipeline"] == by_mcp["fingerprints"]["pipeline"]


async def test_a_capsule_leaves_its_whole_scope_from_the_cli_and_over_mcp(traced: Cli) -> None:
    by_cli = cli_trace(
        traced, "context", "build", "okapi launch", "--budget", "4000",
        "--tags-all", "launch", "--min-score", "0", "--collection", "notes",
    )  # fmt: skip
    by_mcp = await mcp_trace(
        traced,
        "gno_context",
        {
            "goal": "okapi launch",
            "budgetTokens": 4000,
            "tagsAll": ["launch"],
            "minScore": 0,
            "collections": ["notes"],
        },
    )
    expected = {"collections": ["notes"], "tagsAll": ["launch"], "minScore": 0, "noRerank": False}
    assert by_cli["filters"] == by_mcp["filters"] == expected


async def test_vector_search_hands_back_its_trace(traced: Cli) -> None:
    traced.run("embed")
    by_cli = cli_trace(traced, "vsearch", "okapi", "-n", "2")
    by_mcp = await mcp_trace(traced, "gno_vsearch", {"query": "okapi", "limit": 2})
    assert by_cli["fingerprints"]["pipeline"] == by_mcp["fingerprints"]["pipeline"]
    assert by_cli["filters"] == by_mcp["filters"] == {"limit": 2}
