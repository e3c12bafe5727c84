"""The building blocks every output format shares: words, tables, CSV, XML, file lines."""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# csv and xml.sax are imported where used: every command loads this module,
# few print CSV or XML, and start-up time is what a stdio client waits for.

MARK_OPEN = "<mark>"
MARK_CLOSE = "</mark>"


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """``1 result``, ``2 results``: a count with the right form of its noun."""
    word = singular if count == 1 else (plural_form or singular + "s")
    return f"{count} {word}"


def quoted(text: str) -> str:
    """``text`` in double quotes, unless it already holds some (no doubled quotes)."""
    if '"' not in text:
        return f'"{text}"'
    if "'" not in text:
        return f"'{text}'"
    return text


def unmarked(text: str) -> str:
    """A snippet without its ``<mark>`` highlighting."""
    return text.replace(MARK_OPEN, "").replace(MARK_CLOSE, "")


def one_line(text: str, limit: int | None = None) -> str:
    """Whitespace folded to single spaces, cut at ``limit`` characters."""
    folded = " ".join(text.split())
    if limit is not None and len(folded) > limit:
        folded = folded[: limit - 3].rstrip() + "..."
    return folded


def files_line(docid: str, score: float | None, uri: str) -> str:
    """GNO's ``--files`` line protocol: ``#docid,<score>,gno://collection/path``."""
    shown = "" if score is None else f"{score:.4f}"
    return f"{docid},{shown},{uri}"


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """RFC 4180 CSV with a header row (fields quoted where needed)."""
    import csv

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if value is None else value for value in row])
    return buffer.getvalue()


def md_cell(value: Any) -> str:
    """A value safe inside a Markdown table cell (pipes escaped, one line)."""
    text = "" if value is None else str(value)
    return one_line(text).replace("|", "\\|")


def md_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines.extend("| " + " | ".join(md_cell(v) for v in row) + " |" for row in rows)
    return "\n".join(lines)


def md_quote(text: str) -> str:
    """``text`` as a Markdown block quote, line by line."""
    return "\n".join(f"> {line}".rstrip() for line in text.splitlines() or [""])


def md_fence(text: str, language: str = "") -> str:
    """``text`` in a code fence longer than any backtick run inside it."""
    longest = 2
    run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    return f"{fence}{language}\n{text.rstrip(chr(10))}\n{fence}"


def xml_element(tag: str, attributes: Mapping[str, Any], children: Iterable[str] = ()) -> str:
    """One XML element; attributes whose value is None are left out."""
    from xml.sax.saxutils import quoteattr

    attrs = "".join(
        f" {name}={quoteattr(str(value))}"
        for name, value in attributes.items()
        if value is not None
    )
    inner = "".join(children)
    return f"<{tag}{attrs}>{inner}</{tag}>" if inner else f"<{tag}{attrs}/>"


def xml_text(tag: str, text: str | None) -> str:
    from xml.sax.saxutils import escape

    return "" if text is None else f"<{tag}>{escape(text)}</{tag}>"


def number_lines(text: str, first: int) -> str:
    """``text`` with each line prefixed by its number, counting from ``first``."""
    return "\n".join(f"{first + i}: {line}" for i, line in enumerate(text.split("\n")))


__all__ = [
    "csv_text",
    "files_line",
    "md_cell",
    "md_fence",
    "md_quote",
    "md_table",
    "number_lines",
    "one_line",
    "plural",
    "quoted",
    "unmarked",
    "xml_element",
    "xml_text",
]
