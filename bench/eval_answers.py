"""Answer quality of ``ask`` without a generator, on the question set.

Runs every question of ``bench/questions.json`` (over the gno-evals and
mcp-docs corpora, some with no answer in them) through ``ask`` with
verification, as ``gno-trio ask --verify`` does, and reports:

* answer precision: of the answers given (not withheld), the share that
  quote one of the question's expected phrases;
* answer recall: of the answerable questions, the share answered correctly;
* abstention correctness: the share of questions where withholding or not
  was right (withheld exactly when nothing in the corpus answers).

    python3 bench/eval_answers.py [--index-dir DIR] [--verbose]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _common import FIXTURES
from _eval_sets import questions
from eval_retrieval import open_corpus

from gno_trio.engine import AskRequest, SearchRequest
from gno_trio.errors import GnoError


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--index-dir", type=Path, help="keep the indexes here between runs")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    asked = questions(FIXTURES, answerable_only=False)
    engines = {
        corpus: open_corpus(corpus, args.index_dir, None, True)
        for corpus in sorted({q["corpus"] for q in asked})
    }
    answered = correct = right_call = answerable = 0
    try:
        for q in asked:
            try:
                outcome = engines[q["corpus"]].answers.ask(
                    AskRequest(search=SearchRequest(query=q["query"], limit=5), verify=True)
                )
            except GnoError as error:  # no Capsule: ask says nothing in scope matches
                abstained, text = True, error.message
            else:
                abstained = bool(outcome.result["meta"].get("abstained"))
                text = str(outcome.result.get("answer", ""))
            expected = [p.casefold() for p in q["answer"] or []]
            good = bool(expected) and any(p in text.casefold() for p in expected)
            answerable += bool(expected)
            answered += not abstained
            correct += good and not abstained
            right_call += abstained == (not expected)
            if args.verbose:
                verdict = "withheld" if abstained else "CORRECT" if good else "wrong"
                print(f"{q['id']:>4} {verdict:8} {q['query'][:60]!r}\n       {text[:160]!r}")
    finally:
        for engine in engines.values():
            engine.close()
    total = len(asked)
    print(f"\nquestions: {total} ({answerable} answerable, {total - answerable} not)")
    print(f"answered: {answered}, correctly: {correct}")
    print(f"answer precision: {correct / answered if answered else 0.0:.3f}")
    print(f"answer recall: {correct / answerable if answerable else 0.0:.3f}")
    print(f"abstention correctness: {right_call / total:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
