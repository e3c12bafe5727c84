"""JSON Lines (``.jsonl``, ``.ndjson``) -> Markdown: each line an entry.

Chat exports and fine-tuning sets are the common JSON Lines people keep, so
their shapes read as a dialogue: an object with ``role`` and ``content`` is a
turn (``**user:** ...``), and an object holding a ``messages`` list is a
conversation of such turns (its other keys as fields). Any other object is
written as ``key: value`` lines, nested values as compact JSON. Each entry
follows an ``<!-- line N -->`` marker, so a hit points at its line of the
file. A line that is not JSON is named where it stood and in a ``PARTIAL``
warning; the other lines are kept. A file with no JSON line at all is
``CONVERSION_FAILED``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import ClassVar, Final

from gno_trio.engine.ingest.documents.base import TextDocumentConverter
from gno_trio.engine.ingest.documents.limits import Ticker
from gno_trio.engine.ingest.documents.markdown import MarkdownWriter, clean_inline
from gno_trio.engine.ingest.documents.reasons import CONVERSION_FAILED, warning
from gno_trio.errors import GnoError

_VALUE_CHARS: Final = 2000
_NAMED_BAD_LINES: Final = 10


def _text(value: object) -> str:
    """A content value as text: a string, the text parts of a list, else compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [_text(p.get("text", "")) if isinstance(p, dict) else _text(p) for p in value]
        return "\n".join(p for p in parts if p)
    if value is None:
        return ""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= _VALUE_CHARS else text[:_VALUE_CHARS] + " ..."


def _is_turn(value: object) -> bool:
    return isinstance(value, dict) and "role" in value and "content" in value


def _turn(out: MarkdownWriter, turn: Mapping[str, object]) -> None:
    role = clean_inline(str(turn.get("name") or turn["role"]))
    out.paragraph(f"**{role}:** {_text(turn['content'])}")


def _entry(out: MarkdownWriter, value: object) -> None:
    if _is_turn(value):
        assert isinstance(value, dict)
        _turn(out, value)
        return
    if isinstance(value, dict):
        messages = value.get("messages")
        dialogue = isinstance(messages, list) and any(_is_turn(m) for m in messages)
        rest = {k: v for k, v in value.items() if not (dialogue and k == "messages")}
        out.fields([(clean_inline(str(k)), clean_inline(_text(v))) for k, v in rest.items()])
        if dialogue:
            assert isinstance(messages, list)
            for message in messages:
                if _is_turn(message):
                    _turn(out, message)
        return
    out.paragraph(_text(value))


class JsonLinesConverter(TextDocumentConverter):
    id = "document/jsonl"
    mimes: ClassVar[Mapping[str, str]] = {
        ".jsonl": "application/jsonl",
        ".ndjson": "application/x-ndjson",
    }

    def render_text(self, rel_path: str, text: str, out: MarkdownWriter) -> list[str]:
        lines = text.split("\n")
        ticker = Ticker(len(lines))
        bad: list[int] = []
        entries = 0
        for number, line in enumerate(lines, 1):
            ticker.tick(number)
            if not line.strip():
                continue
            out.comment(f"line {number}")
            try:
                value = json.loads(line)
            except ValueError as exc:
                bad.append(number)
                out.paragraph(f"(line {number} is not valid JSON: {exc})")
                continue
            entries += 1
            _entry(out, value)
        if bad and not entries:
            raise GnoError(CONVERSION_FAILED, f"{rel_path}: no line is valid JSON")
        found: list[str] = []
        if bad:
            named = ", ".join(str(n) for n in bad[:_NAMED_BAD_LINES])
            more = f" and {len(bad) - _NAMED_BAD_LINES} more" if len(bad) > _NAMED_BAD_LINES else ""
            found.append(warning("PARTIAL", f"lines not valid JSON, left out: {named}{more}"))
        return found
