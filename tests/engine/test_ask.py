"""``gno_ask``: an answer from a closed Capsule, every claim checked, or withheld.

The generator is exercised both ways: without a configured model (an
extractive draft that says so) and against a small OpenAI-compatible chat
server started in the test, which answers whatever each test scripts. Every
answer is validated against GNO's ``ask`` schema; egress decisions for the
endpoint are read back from the egress audit.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from gno_trio.config.features import RetrievalTraces, TraceRetention
from gno_trio.engine import AskRequest, Engine, SearchRequest
from tests.support.corpora import TEA_NOTES as NOTES
from tests.support.corpora import TEA_QUESTION as QUESTION
from tests.support.loopback_json import JsonEndpoint, chat_reply
from tests.support.stdio_session import server_environment
from tests.support.tool_pipe import mcp_server, write_tree
from tests.support.tool_results import tool_error_code


class ChatServer(JsonEndpoint):
    """An OpenAI-compatible ``/v1/chat/completions`` stub that says :attr:`reply`."""

    def __init__(self) -> None:
        self.reply = ""
        super().__init__(lambda _path, _body: chat_reply(self.reply))

    @property
    def uri(self) -> str:
        return self.url("/v1/chat/completions#tiny-chat")


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    server = ChatServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def vault(engine: Engine, tmp_path: Path) -> Engine:
    write_tree(tmp_path / "vault" / "notes", NOTES)
    engine.collections.add(str(tmp_path / "vault" / "notes"), name="notes")
    engine.sync()
    return engine


def use_model(engine: Engine, uri: str) -> None:
    models = {"activePreset": "local", "presets": [{"id": "local", "gen": uri}]}
    engine.update_config(lambda current: attrs.evolve(current, models=models))


def ask(engine: Engine, schema_check: Callable[[str, Any], None], **options: Any) -> Any:
    outcome = engine.answers.ask(AskRequest(SearchRequest(query=QUESTION), **options))
    schema_check("ask", outcome.result)
    return outcome


def test_without_a_model_the_answer_is_extractive_and_says_so(
    vault: Engine, schema_check: Callable[[str, Any], None]
) -> None:
    outcome = ask(vault, schema_check)
    result = outcome.result
    assert "Extractive" in outcome.note and "no generation model" in outcome.note
    assert result["answer"] == "Green tea steeps at eighty degrees for two minutes. [1]"
    assert result["meta"]["answerGenerated"] is False and result["meta"]["abstained"] is False
    assert [c["uri"] for c in result["citations"]] == ["gno://notes/tea.md"]
    claims = result["verification"]["claims"]
    assert claims["answerStatus"] == "verified" and claims["coverage"]["supportedRatio"] == 1
    claim = claims["claims"][0]
    assert claim["status"] == "supported" and claim["evidence"][0]["startLine"] == 1
    assert result["verification"]["freshness"]["contentStatus"] == "unchanged"
    assert result["results"][0]["uri"] == "gno://notes/tea.md"


def test_a_chat_endpoint_writes_the_draft_and_each_claim_is_checked(
    vault: Engine, chat: ChatServer, schema_check: Callable[[str, Any], None]
) -> None:
    use_model(vault, chat.uri)
    chat.reply = "Green tea steeps for two minutes at eighty degrees [1]."
    outcome = ask(vault, schema_check, max_answer_tokens=64)
    result = outcome.result
    assert result["answer"] == chat.reply and result["meta"]["answerGenerated"] is True
    assert outcome.note == "Answer written by tiny-chat"
    sent = chat.requests[-1]
    assert sent.path == "/v1/chat/completions"
    assert sent.body["model"] == "tiny-chat" and sent.body["max_tokens"] == 64
    assert "eighty degrees for two minutes" in sent.body["messages"][1]["content"]
    receipt = vault.egress.audit_list()["receipts"][0]
    assert (receipt["action"], receipt["destinationZone"], receipt["decision"]) == (
        "remote_inference",
        "loopback",
        "allow",
    )

    chat.reply = "Green tea must steep for ten minutes [1]."
    withheld = ask(vault, schema_check).result
    assert withheld["meta"]["abstained"] is True and withheld["citations"] == []
    claims = withheld["verification"]["claims"]
    assert claims["abstentionReason"] == "coverage_below_threshold"
    assert claims["claims"][0]["status"] == "uncertain"
    assert withheld["answer"] == claims["abstentionText"]

    chat.reply = "Green tea steeps for two minutes [7]. It is eighty degrees."
    hygiene = ask(vault, schema_check).result["verification"]["claims"]
    assert hygiene["abstentionReason"] == "citation_hygiene_failed"
    assert hygiene["rejectedCitations"][0]["reason"] == "out_of_capsule"
    assert [c["status"] for c in hygiene["claims"]] == ["insufficient", "insufficient"]

    chat.reply = "Unclear."
    assert ask(vault, schema_check).result["verification"]["claims"]["abstentionReason"] == (
        "no_substantive_claims"
    )


def test_a_refused_or_failing_endpoint_falls_back_to_the_evidence(
    vault: Engine, chat: ChatServer, schema_check: Callable[[str, Any], None]
) -> None:
    use_model(vault, "http://example.invalid:9/v1/chat/completions#far-model")
    refused = ask(vault, schema_check)
    assert "egress policy" in refused.note and "POLICY_LOCAL_ONLY" in refused.note
    assert refused.result["meta"]["answerGenerated"] is False
    receipt = vault.egress.audit_list()["receipts"][0]
    assert (receipt["destinationZone"], receipt["decision"], receipt["reasonCode"]) == (
        "remote",
        "deny",
        "POLICY_LOCAL_ONLY",
    )
    port = chat.port
    chat.close()
    use_model(vault, f"http://127.0.0.1:{port}/v1/chat/completions#gone")
    down = ask(vault, schema_check)
    assert "unreachable" in down.note and down.result["meta"]["abstained"] is False
    use_model(vault, "hf:some/model.gguf")
    assert "cannot run here" in ask(vault, schema_check).note


async def test_ask_over_stdio(vault: Engine, schema_check: Callable[[str, Any], None]) -> None:
    settings = RetrievalTraces(enabled=True, redaction_mode="replay", retention=TraceRetention())
    vault.update_config(lambda current: attrs.evolve(current, retrieval_traces=settings))
    async with mcp_server(server_environment(vault.location.dirs)) as pipe:
        listed = await pipe.list_tools()
        assert listed["gno_ask"]["inputSchema"]["required"] == ["query", "verify"]
        raw = await pipe.session.tool("gno_ask", {"query": QUESTION, "verify": True})
        result = pipe.checked("gno_ask", raw)
        schema_check("ask", result)
        text = raw["content"][0]["text"]
        assert text.startswith("Answer verified: 1 of 1 claims supported")
        assert "Extractive answer" in text and "gno://notes/tea.md:1-" in text
        trace_id = raw["_meta"]["gno"]["retrievalTrace"]["traceId"]
        shown = await pipe.tool("gno_trace_show", {"traceId": trace_id})
        assert [run["kind"] for run in shown["runs"]] == ["retrieval", "context"]
        assert shown["trace"]["status"] == "completed"
        for bad in (
            {"query": QUESTION},
            {"query": QUESTION, "verify": False},
            {"query": "", "verify": True},
            {"query": QUESTION, "verify": True, "limit": 101},
        ):
            refused = await pipe.session.tool("gno_ask", bad)
            assert refused["isError"] is True
            assert tool_error_code(refused) in ("INVALID_INPUT", "invalid_input")


# ---------------------------------------------------------------------------
# The ask command: the same engine method as gno_ask
# ---------------------------------------------------------------------------


def _comparable(result: dict[str, Any]) -> dict[str, Any]:
    """An ask answer without the fields that differ from run to run (timings)."""
    copy = json.loads(json.dumps(result))
    copy["verification"]["semantic"].pop("durationMs")
    return copy


def test_the_ask_command_gives_the_tools_answer(
    vault: Engine, tmp_path: Path, schema_check: Callable[[str, Any], None]
) -> None:
    from tests.support.cli_support import make_cli

    cli = make_cli(tmp_path / "sandbox")
    cli.env.update(server_environment(vault.location.dirs))
    verified = cli.json("ask", QUESTION, "--verify")
    schema_check("ask", verified)
    direct = vault.answers.ask(AskRequest(SearchRequest(query=QUESTION))).result
    assert _comparable(verified) == _comparable(direct)

    shown = cli.run("ask", QUESTION, "--verify", "--show-sources").stdout
    assert shown.startswith("Answer verified: 1 of 1 claims supported")
    assert "Extractive answer" in shown and "Capsule evidence:" in shown
    listed = cli.json("ask", QUESTION)
    assert "answer" not in listed and listed["results"][0]["uri"] == "gno://notes/tea.md"
    drafted = cli.json("ask", QUESTION, "--answer", "--query-mode", "term:green tea")
    assert "verification" not in drafted and drafted["citations"][0]["uri"] == "gno://notes/tea.md"
    assert drafted["meta"]["queryModes"] == {"term": 1, "intent": 0, "hyde": False}
    cli.run("ask", QUESTION, "--verify", "--no-answer", code=1)
    cli.run("ask", QUESTION, "--query-mode", "sideways:x", code=1)
    cli.run("ask", "   ", "--verify", code=1)
