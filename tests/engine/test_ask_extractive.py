"""``ask`` without a generator quotes the sentences that answer, or says nothing does.

Through the engine's public face on a small corpus: the answer is built from
sentences joined across wrapped lines, table rows read with their header
(the header itself is never a claim), code blocks read with the heading and
sentence they stand under; every claim carries its numbered source and is
verified against it; a question nothing in scope answers is withheld with
that reason rather than answered with whatever shares a word.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from gno_trio.engine import AskRequest, Engine, SearchRequest
from tests.conftest import write_corpus
from tests.support.corpora import indexed_engine

DOCS = {
    "api.md": "# API reference\n\nAll requests need a bearer token in the Authorization\n"
    "header, which the gateway checks before anything else.\n\n## Error codes\n\n"
    "| Code | HTTP Status | Description |\n| ---- | ----------- | ----------- |\n"
    "| `NOT_FOUND` | 404 | Resource does not exist |\n"
    "| `RATE_LIMITED` | 429 | Too many requests |\n\n"
    "## Links\n\n- [Status page](https://status.example.org)\n"
    "- [Changelog](https://example.org/changes)\n",
    "deploy.md": "# Deployment\n\nReleases are installed with Helm.\n\n## Rollback\n\n"
    "To go back to the previous release after a failed upgrade:\n\n"
    "```bash\nhelm rollback app -n production\n```\n",
    "garden.md": "# Garden\n\nWater the tomatoes every morning and pull the weeds\n"
    "between the rows before the sun is high.\n",
}
MARKER = re.compile(r"\[(\d+)\]")


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    base = tmp_path_factory.mktemp("ask")
    engine = indexed_engine(base, write_corpus(base / "notes", DOCS), embed=False)
    yield engine
    engine.close()


def _ask(engine: Engine, question: str) -> dict[str, Any]:
    outcome = engine.answers.ask(
        AskRequest(search=SearchRequest(query=question, limit=5), verify=True)
    )
    return outcome.result


def _claims(result: dict[str, Any]) -> list[dict[str, Any]]:
    return list(result["verification"]["claims"]["claims"])


def test_a_sentence_wrapped_over_lines_is_quoted_whole(notes: Engine) -> None:
    result = _ask(notes, "Which header needs the bearer token?")
    assert result["meta"]["abstained"] is False
    assert result["answer"].startswith(
        "All requests need a bearer token in the Authorization header, which the gateway "
        "checks before anything else. [1]"
    )
    assert all(c["status"] == "supported" for c in _claims(result))


def test_a_table_row_answers_and_its_header_is_never_a_claim(notes: Engine) -> None:
    result = _ask(notes, "Which HTTP status comes with RATE_LIMITED?")
    assert result["meta"]["abstained"] is False
    assert "429" in result["answer"]
    assert "Description" not in result["answer"] and "404" not in result["answer"]
    (citation,) = result["citations"]
    assert citation["uri"].endswith("/api.md")


def test_a_code_block_can_be_the_answer(notes: Engine) -> None:
    result = _ask(notes, "How do I roll back to the previous release?")
    assert result["meta"]["abstained"] is False
    assert "`helm rollback app -n production`" in result["answer"]
    numbers = {int(n) for n in MARKER.findall(result["answer"])}
    evidence = result["verification"]["capsule"]["evidence"]
    assert numbers and all(evidence[n - 1]["uri"].endswith("/deploy.md") for n in numbers)
    assert all(c["status"] == "supported" for c in _claims(result))


def test_link_lists_and_headings_are_not_answers(notes: Engine) -> None:
    result = _ask(notes, "Where is the status page changelog link list?")
    assert "https://" not in result["answer"]
    assert "# " not in result["answer"]


def test_nothing_in_scope_answers_so_ask_says_so(notes: Engine) -> None:
    # "tomatoes" and "morning" are in the garden note; what the question asks is not.
    result = _ask(notes, "Which fertiliser brand gives tomatoes the best yield in May?")
    assert result["meta"]["abstained"] is True
    assert result["answer"] == "Nothing in the evidence in scope answers this question."
    assert result["citations"] == []
