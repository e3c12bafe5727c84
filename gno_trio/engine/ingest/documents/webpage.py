"""HTML -> Markdown from the event stream of libxml2's HTML parser (``lxml``).

Why not markdownify + BeautifulSoup (what markitdown uses)? Both build and
walk a tree recursively: 100,000 nested ``<div>`` elements raised
``RecursionError`` after 1.6 s here. lxml (already installed for the Office
libraries) parses in C, repairs tag soup the way browsers do, and with a
*target* object builds no tree at all: it calls :class:`_MarkdownBuilder`
for each start tag, end tag and text run. That streams 16 MB of HTML a
second here, against 1.5 MB/s for the standard library's ``html.parser``.
The builder keeps only a bounded stack of open elements (nesting deeper than
``max_html_depth`` is read as plain text), so time is linear and memory is
bounded by the output limit.

What the mirror keeps: headings, paragraphs, nested ordered and unordered
lists, tables (as pipe tables; nested tables flattened into their cell),
``pre`` blocks as fenced code, block quotes, emphasis, inline code, links as
``[text](href)`` (so the link graph sees them) and image descriptions.
Scripts, styles, templates, SVG, forms' option lists and navigation bars are
dropped. The page ``<title>`` becomes the ``#`` heading when the body has no
``<h1>`` of its own. The charset comes from a byte-order mark, then a
``<meta charset>`` in the first 4 KiB, then the text rules of
:mod:`.encoding`.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Mapping
from typing import ClassVar, Final

from gno_trio.engine.ingest.documents.base import DocumentConverter
from gno_trio.engine.ingest.documents.encoding import declared_charset, decode_text
from gno_trio.engine.ingest.documents.limits import Ticker, current
from gno_trio.engine.ingest.documents.markdown import (
    MarkdownWriter,
    clean_inline,
    escape_line_start,
    table_cell,
)
from gno_trio.engine.ingest.documents.reasons import warning

_DROPPED: Final = frozenset(
    {"script", "style", "noscript", "template", "svg", "nav", "select", "iframe", "object", "head"}
)
_VOID: Final = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)
_BLOCKS: Final = frozenset(
    {
        "p", "div", "section", "article", "main", "header", "footer", "aside", "figure",
        "figcaption", "address", "details", "summary", "dl", "dt", "dd", "form", "fieldset",
        "center", "body", "html",
    }
)  # fmt: skip
_CLOSE_P: Final = frozenset({"ul", "ol", "table", "pre", "blockquote", "div", "section"})
_HEADINGS: Final = {f"h{n}": n for n in range(1, 7)}
_EMPHASIS: Final = {"strong": "**", "b": "**", "em": "*", "i": "*", "code": "`"}
_SAFE_LINK: Final = re.compile(r"^(?:https?:|mailto:|[^:]*$)", re.I)
_FEED_CHARS: Final = 1 << 18


def decode_html(rel_path: str, data: bytes) -> tuple[str, tuple[str, ...]]:
    """The page's text: BOM, then its declared charset, then the general text rules.

    A page's ``<meta charset>`` wins over the bytes' own look (as in a
    browser), unlike a text file's declaration, which yields to valid UTF-8.
    """
    if data.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return decode_text(rel_path, data)
    encoding = declared_charset(data, html=True)
    if encoding is not None:
        return data.decode(encoding, "replace").replace("\r\n", "\n"), ()
    return decode_text(rel_path, data)


class _MarkdownBuilder:
    """Turns parser events into Markdown blocks (an lxml parser *target*)."""

    def __init__(self, out: MarkdownWriter, max_depth: int) -> None:
        self.out = out
        self.max_depth = max_depth
        self.stack: list[str] = []
        self.overflow = 0  # open elements past max_depth, read as text
        self.dropped = 0  # depth inside a dropped element
        self.inline: list[str] = []
        self.marks: list[tuple[str, int, str]] = []  # (tag, index in inline, href)
        self.lists: list[bool] = []  # ordered? for each open list
        self.items: list[tuple[int, bool, str]] = []
        self.rows: list[list[str]] | None = None
        self.row: list[str] | None = None
        self.table_depth = 0
        self.pre = 0
        self.quote = 0
        self.title: str | None = None
        self.in_title = False
        self.saw_h1 = False
        self.wrote_title = False
        self.too_deep = False

    # -- the lxml target interface ----------------------------------------
    def start(self, tag: object, attrib: dict[str, str]) -> None:
        if isinstance(tag, str):
            self.handle_starttag(tag.lower(), list(attrib.items()))

    def end(self, tag: object) -> None:
        if isinstance(tag, str):
            self.handle_endtag(tag.lower())

    def data(self, data: str) -> None:
        self.handle_data(data)

    def close(self) -> None:
        while self.stack:
            self._close(self.stack.pop())
        self.flush()
        self.flush_items()
        self._maybe_title()

    # -- text -------------------------------------------------------------
    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title = (self.title or "") + data
            return
        if self.dropped:
            return
        self.inline.append(data if self.pre else re.sub(r"\s+", " ", data))

    def _take_inline(self) -> str:
        text = "".join(self.inline)
        self.inline.clear()
        self.marks.clear()
        return text

    def flush(self, heading: int = 0) -> None:
        """Emit the pending inline text as the block the context calls for."""
        if self.row is not None or not self.inline:
            return
        self._maybe_title()
        raw = self._take_inline()
        if self.pre:
            code = raw.strip("\n")
            if code.strip():
                self.out.block(f"```\n{code.replace('```', '` ` `')}\n```")
            return
        if self.lists:
            text = clean_inline(raw)
            if text:
                self.items.append((len(self.lists) - 1, self.lists[-1], text))
            return
        self.flush_items()
        if heading:
            self.out.heading(heading, raw)
            return
        lines = [clean_inline(line) for line in raw.split("\n")]
        text = "\n".join(escape_line_start(ln) for ln in lines if ln)
        if text and self.quote:
            text = "\n".join("> " + ln for ln in text.split("\n"))
        if text:
            self.out.block(text)

    def flush_items(self) -> None:
        if self.items:
            self._maybe_title()
            self.out.list_items(self.items)
            self.items = []

    # -- structure --------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title" and self.title is None:
            self.in_title = True
        if tag in _VOID:
            self._void(tag, dict(attrs))
            return
        if self.dropped or tag in _DROPPED:
            self.dropped += 1
            return
        if self.overflow or len(self.stack) >= self.max_depth:
            self.overflow += 1
            self.too_deep = True
            return
        self._implied_end(tag)
        self.stack.append(tag)
        self._open(tag, dict(attrs))

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if self.dropped:
            self.dropped -= 1
            return
        if tag in _VOID:
            return
        if self.overflow:
            self.overflow -= 1
            return
        if tag not in self.stack:
            return  # a stray end tag
        while self.stack:
            open_tag = self.stack.pop()
            self._close(open_tag)
            if open_tag == tag:
                break

    def _implied_end(self, tag: str) -> None:
        """Tags that close an open sibling (``<p>`` in ``<p>``, ``<li>`` in ``<li>``)."""
        closes = {"p": ("p",), "li": ("li",), "tr": ("tr", "td", "th"), "td": ("td", "th")}
        closes["th"] = closes["td"]
        for sibling in closes.get(tag, ()):
            if self.stack and self.stack[-1] == sibling:
                self._close(self.stack.pop())
        if (tag in _HEADINGS or tag in _CLOSE_P) and self.stack[-1:] == ["p"]:
            self._close(self.stack.pop())

    def _void(self, tag: str, attrs: dict[str, str | None]) -> None:
        if self.dropped:
            return
        if tag == "br":
            self.inline.append(" " if self.row is not None else "\n")
        elif tag == "img" and attrs.get("alt"):
            self.inline.append(f" {attrs['alt']} ")
        elif tag == "hr":
            self.flush()

    def _open(self, tag: str, attrs: dict[str, str | None]) -> None:
        if tag in _BLOCKS or tag in _HEADINGS or tag == "blockquote":
            self.flush()
            self.saw_h1 = self.saw_h1 or tag == "h1"
            self.quote += tag == "blockquote"
        elif tag in ("ul", "ol"):
            self.flush()
            self.lists.append(tag == "ol")
        elif tag == "li":
            self.flush()
        elif tag == "pre":
            self.flush()
            self.pre += 1
        elif tag == "table":
            self._open_table()
        elif tag == "tr" and self.table_depth == 1 and self.rows is not None:
            self.row = []
        elif tag in ("td", "th") and self.table_depth == 1:
            self.inline.clear()
        elif tag == "a" or tag in _EMPHASIS:
            self.marks.append((tag, len(self.inline), attrs.get("href") or ""))

    def _close(self, tag: str) -> None:
        if tag in _HEADINGS:
            self.flush(heading=_HEADINGS[tag])
        elif tag in _BLOCKS or tag == "li":
            self.flush()
        elif tag == "blockquote":
            self.flush()
            self.quote -= 1
        elif tag in ("ul", "ol"):
            self.flush()
            if self.lists:
                self.lists.pop()
            if not self.lists:
                self.flush_items()
        elif tag == "pre":
            self.flush()
            self.pre -= 1
        elif tag == "table":
            self._close_table()
        elif tag in ("td", "th") and self.table_depth == 1 and self.row is not None:
            self.row.append(table_cell("".join(self.inline)))
            self.inline.clear()
        elif tag == "tr" and self.row is not None and self.rows is not None:
            if any(cell for cell in self.row):
                self.rows.append(self.row)
            self.row = None
        elif tag == "a" or tag in _EMPHASIS:
            self._close_mark(tag)

    def _close_mark(self, tag: str) -> None:
        while self.marks:
            open_tag, start, href = self.marks.pop()
            if open_tag != tag:
                continue
            raw = "".join(self.inline[start:])
            del self.inline[start:]
            inner = raw.strip()
            if not inner:
                self.inline.append(raw)
                return
            lead, tail = raw[: len(raw) - len(raw.lstrip())], raw[len(raw.rstrip()) :]
            if tag == "a":
                ok = href and _SAFE_LINK.match(href) and not href.startswith("#")
                inner = f"[{inner}]({href.replace(' ', '%20')})" if ok else inner
            else:
                inner = f"{_EMPHASIS[tag]}{inner}{_EMPHASIS[tag]}"
            self.inline.append(lead + inner + tail)
            return

    def _open_table(self) -> None:
        self.table_depth += 1
        if self.table_depth == 1:
            self.flush()
            self.flush_items()
            self.rows = []

    def _close_table(self) -> None:
        self.table_depth -= 1
        if self.table_depth == 0 and self.rows is not None:
            rows, self.rows, self.row = self.rows, None, None
            self.inline.clear()
            if rows:
                self._maybe_title()
                self.out.table(rows)

    def _maybe_title(self) -> None:
        """Write the page title first unless the page has an ``<h1>`` of its own."""
        if self.wrote_title:
            return
        self.wrote_title = True
        if self.title and not self.saw_h1:
            self.out.heading(1, self.title)


class HtmlConverter(DocumentConverter):
    id = "document/html"
    mimes: ClassVar[Mapping[str, str]] = {
        ".html": "text/html",
        ".htm": "text/html",
        ".xhtml": "application/xhtml+xml",
    }

    def render(self, rel_path: str, data: bytes, out: MarkdownWriter) -> list[str]:
        text, warnings = decode_html(rel_path, data)
        return [*warnings, *write_html(text, out, ticking=True)]


def write_html(text: str, out: MarkdownWriter, *, ticking: bool = False) -> list[str]:
    """Write an HTML page's Markdown into ``out`` (also a mail's HTML body); its warnings."""
    from lxml import etree

    builder = _MarkdownBuilder(out, current().limits.max_html_depth)
    parser = etree.HTMLParser(target=builder, huge_tree=True, no_network=True)
    pieces = range(0, len(text), _FEED_CHARS)
    ticker = Ticker(len(pieces)) if ticking else None
    for number, start in enumerate(pieces, 1):
        parser.feed(text[start : start + _FEED_CHARS])
        if ticker is not None:
            ticker.tick(number)
    if text:
        parser.close()
    if builder.too_deep:
        return [warning("LOSSY", "elements nested deeper than the limit were read as plain text")]
    return []
