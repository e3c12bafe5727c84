"""The query sets ``eval_retrieval.py`` and ``eval_answers.py`` judge retrieval and answers on.

* ``gno-evals``: the fixture's own graded queries;
* ``cross-lingual``: ``crosslingual_queries.json``, questions in zh/ja/ko/de/es/fr
  about documents in other languages, judged by hand;
* ``known-item``: each distinct ``description:`` of an mcp-docs page's
  frontmatter asked as a query; the pages carrying it are the answer (the
  description is frontmatter, which is neither chunked nor embedded, so the
  page has to be found from its body);
* ``questions``: ``questions.json``, questions with the phrase an answer must
  quote, over both corpora; a question's relevant documents are those of its
  globs whose text holds that phrase (so a revision of the specification
  that predates the answer is not counted), and ``answer: null`` marks a
  question nothing in the corpus answers.
"""

from __future__ import annotations

import fnmatch
import json
import re
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
CROSS_LINGUAL = HERE / "crosslingual_queries.json"
QUESTIONS = HERE / "questions.json"
CORPORA = {"gno-evals": ("gno-evals", "corpus"), "mcp-docs": ("mcp-docs", "corpus")}
SET_CORPUS = {
    "gno-evals": "gno-evals",
    "cross-lingual": "gno-evals",
    "known-item": "mcp-docs",
    "questions": None,  # both: each question names its corpus
}
_DESCRIPTION = re.compile(r"\A---\n(?:.*\n)*?description:[ \t]*(.+)\n(?:.*\n)*?---\n")


def corpus_root(fixtures: Path, corpus: str) -> Path:
    return fixtures.joinpath(*CORPORA[corpus])


def _files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text("utf-8", errors="replace")
        for p in sorted(root.rglob("*.md"))
    }


def known_items(root: Path) -> list[dict[str, Any]]:
    """One query per distinct page description; every page carrying it is relevant (3)."""
    pages: dict[str, list[str]] = {}
    for rel, text in _files(root).items():
        found = _DESCRIPTION.match(text)
        if found:
            description = found.group(1).strip().strip("\"'").strip()
            if description:
                pages.setdefault(description, []).append(rel)
    return [
        {
            "id": f"k{number}",
            "query": description,
            "corpus": "mcp-docs",
            "relevantDocs": rels,
            "judgments": [{"docid": rel, "relevance": 3} for rel in rels],
        }
        for number, (description, rels) in enumerate(sorted(pages.items()), 1)
    ]


def questions(fixtures: Path, *, answerable_only: bool) -> list[dict[str, Any]]:
    """The question set with each question's relevant documents worked out from its globs."""
    texts = {corpus: _files(corpus_root(fixtures, corpus)) for corpus in CORPORA}
    chosen = []
    for q in json.loads(QUESTIONS.read_text("utf-8"))["questions"]:
        files = texts[q["corpus"]]
        phrases = [p.lower() for p in q["answer"] or []]
        rels = sorted(
            rel
            for rel, text in files.items()
            if any(fnmatch.fnmatchcase(rel, g) for g in q["relevant"])
            and (not phrases or any(p in text.lower() for p in phrases))
        )
        if q["answer"] is not None and not rels:
            raise ValueError(f"question {q['id']}: no relevant document quotes its answer")
        if answerable_only and q["answer"] is None:
            continue
        chosen.append(
            dict(
                q,
                relevantDocs=rels,
                judgments=[{"docid": rel, "relevance": 3} for rel in rels],
            )
        )
    return chosen


def load_sets(fixtures: Path) -> dict[str, list[dict[str, Any]]]:
    """Every set, each query carrying the corpus it is asked of."""
    evals = json.loads((fixtures / "gno-evals" / "queries.json").read_text("utf-8"))
    cross = json.loads(CROSS_LINGUAL.read_text("utf-8"))["queries"]
    return {
        "gno-evals": [dict(q, corpus="gno-evals") for q in evals],
        "cross-lingual": [dict(q, corpus="gno-evals") for q in cross],
        "known-item": known_items(corpus_root(fixtures, "mcp-docs")),
        "questions": questions(fixtures, answerable_only=True),
    }
