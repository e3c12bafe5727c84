"""``gno_context`` held to the tasks an agent really brings: a goal, a small corpus, a budget.

Each task names the passage a good answer starts with. The index holds a
build-system reference written for these tests (:mod:`tests.support.cmake_docs`), the
shared ``gno-evals`` and ``mcp-docs`` corpora, and one dated meeting note.
The engine is asked at every ordinary budget (800 to 3,000 tokens, about 3
to 12 KB of model-visible text) and at the smallest budget it says it needs;
then the official ``mcp`` client asks over stdio in each of its modes, with
its output-schema validation on, and every answer is checked against GNO's
own Capsule schema too.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, Scope
from gno_trio.engine.context import ContextRequest, agent_projection_text, compile_capsule
from gno_trio.errors import GnoError
from tests.support.capsules import check_capsule, gno_capsule_errors
from tests.support.cmake_docs import CXX_STANDARD_PAGE, write_pages
from tests.support.shared import EVALS_CORPUS, MCP_DOCS, required
from tests.support.stdio_session import server_environment
from tests.support.tool_results import sdk_error_code

REPO_ROOT = Path(__file__).resolve().parents[2]
ORDINARY_BUDGETS = (800, 1_000, 1_500, 2_000, 3_000)
MEETING = (
    "---\ntitle: Zebra launch review\ndate: 2024-05-14\n---\n"
    "# Zebra launch review\n\n"
    "The review moved the zebra launch to the first week of June so that the\n"
    "billing migration lands first. Priya owns the rollback plan.\n"
)


@dataclass(frozen=True, slots=True)
class Task:
    """A goal, where to look, and what the first passage must be."""

    name: str
    collection: str
    goal: str
    first_uri_suffix: str
    first_text: str
    # Passages 3,000 tokens must hold: more than one wherever the corpus has them.
    roomy_passages: int = 2


TASKS = (
    Task(
        "cmake-standard-flag",
        "cmake",
        "explain how CMake picks the C++ standard flag",
        CXX_STANDARD_PAGE,
        "-std=gnu++17",
    ),
    Task(
        "evals-expired-token",
        "evals",
        "How do I refresh an expired JWT token?",
        "en/troubleshooting-guide.md",
        "refreshToken",
    ),
    Task(
        "mcp-cancel-request",
        "mcp",
        "How does a client cancel a request that is still in progress?",
        "/cancellation.md",
        "notifications/cancelled",
    ),
    Task(
        "mcp-stdio-framing",
        "mcp",
        "How are messages framed on the stdio transport?",
        "/transports/index.md",
        "newline-delimited",
    ),
    Task(
        "notes-launch-date",
        "notes",
        "When is the zebra launch and who owns the rollback?",
        "notes/review.md",
        "first week of June",
        roomy_passages=1,
    ),
)


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dirs]:
    required(EVALS_CORPUS, "the shared gno-evals fixture corpus")
    required(MCP_DOCS, "the shared mcp-docs fixture corpus")
    base = tmp_path_factory.mktemp("context-tasks")
    notes = base / "notes"
    notes.mkdir()
    (notes / "review.md").write_text(MEETING, encoding="utf-8")
    located = Dirs(config=base / "config", data=base / "data", cache=base / "cache")
    with Engine.open(dirs=located) as engine:
        engine.collections.add(str(write_pages(base / "cmake")), name="cmake")
        engine.collections.add(str(EVALS_CORPUS), name="evals")
        engine.collections.add(str(MCP_DOCS), name="mcp")
        engine.collections.add(str(notes), name="notes")
        engine.sync()
    yield located


@pytest.fixture(scope="module")
def engine(dirs: Dirs) -> Iterator[Engine]:
    with Engine.open(dirs=dirs) as opened:
        yield opened


def compile_task(engine: Engine, task: Task, budget: int) -> dict[str, Any]:
    request = ContextRequest(
        goal=task.goal, budget_tokens=budget, scope=Scope(collections=(task.collection,))
    )
    with engine.connection() as conn:
        return compile_capsule(conn, engine.config, engine.location.index_name, request)


def check_first_passage(task: Task, evidence: Mapping[str, Any]) -> None:
    assert evidence["uri"].endswith(task.first_uri_suffix), (task.name, evidence["uri"])
    assert task.first_text in evidence["text"], (task.name, evidence["text"])


def least_budget(engine: Engine, task: Task) -> int:
    """The budget the engine names when asked for far too little."""
    with pytest.raises(GnoError) as refused:
        compile_task(engine, task, 10)
    assert refused.value.code == "invalid_budget", refused.value.message
    return int(refused.value.message.split("budgetTokens of at least ")[1].split(" ")[0])


@pytest.mark.parametrize("task", TASKS, ids=[task.name for task in TASKS])
def test_ordinary_budgets_answer_the_goal_first(engine: Engine, task: Task) -> None:
    for budget in ORDINARY_BUDGETS:
        capsule = compile_task(engine, task, budget)
        check_capsule(capsule)
        check_first_passage(task, capsule["evidence"][0])
        seen = agent_projection_text(capsule)
        assert len(seen) <= budget * 4, (task.name, budget)
    roomy = compile_task(engine, task, 3_000)
    assert len(roomy["evidence"]) >= task.roomy_passages


@pytest.mark.parametrize("task", TASKS, ids=[task.name for task in TASKS])
def test_the_smallest_budget_named_holds_a_passage_and_is_small(engine: Engine, task: Task) -> None:
    needed = least_budget(engine, task)
    assert needed <= 400, (task.name, needed)
    capsule = compile_task(engine, task, needed)
    check_capsule(capsule)
    assert len(capsule["evidence"]) == 1
    with pytest.raises(GnoError) as refused:
        compile_task(engine, task, needed - 1)
    assert refused.value.code == "invalid_budget"


def test_a_date_only_document_date_is_kept_as_written(engine: Engine) -> None:
    capsule = compile_task(engine, TASKS[-1], 1_000)
    assert capsule["evidence"][0]["documentDate"] == "2024-05-14"
    assert gno_capsule_errors(capsule) == []


EXPECTED_VERSION = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28", "auto": "2026-07-28"}


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28", "auto"])
async def test_official_client_gets_every_task_answered_in_every_mode(
    mode: str, dirs: Dirs
) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "gno_trio", "mcp"],
        env=server_environment(dirs),
        cwd=REPO_ROOT,
    )
    with trio.fail_after(60):
        async with Client(params, mode=mode, cache=None) as client:
            assert client.protocol_version == EXPECTED_VERSION[mode]
            for task in TASKS:
                for budget in (1_000, 3_000):
                    arguments = {
                        "goal": task.goal,
                        "budgetTokens": budget,
                        "collections": [task.collection],
                    }
                    # The client validates structuredContent against our output schema
                    # and raises on a mismatch.
                    result = await client.call_tool("gno_context", arguments)
                    assert not result.is_error, (task.name, budget, result.content)
                    capsule = result.structured_content
                    assert isinstance(capsule, dict)
                    assert gno_capsule_errors(capsule) == []
                    text = result.content[0].text  # type: ignore[union-attr]
                    assert text == agent_projection_text(capsule)
                    projection = json.loads(text)
                    first = projection["e"][0]
                    assert first[0].endswith(task.first_uri_suffix), (task.name, first[0])
                    assert task.first_text in first[6]
                    assert projection["b"][2] <= budget and len(text) <= budget * 4

            refused = await client.call_tool(
                "gno_context", {"goal": TASKS[0].goal, "budgetTokens": 20}
            )
            assert refused.is_error
            assert sdk_error_code(refused) == "invalid_budget"
