"""Turning page data into safe HTML: templates, Markdown, highlighted snippets, replies.

Everything a document holds is text to the browser. Templates autoescape;
Markdown is rendered with raw HTML shown as text (a ``<script>`` or an
``onerror=`` in a note is displayed, never parsed), links limited to safe
schemes, and the converters' ``<!-- page N of M -->`` style markers shown
as markers. Every page carries a Content-Security-Policy that allows only
this server's own script and style files, so nothing inline ever runs.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any, Final

import jinja2
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup, escape

from gno_trio.transports.http.wire import Header, Reply

HTML: Final = b"text/html; charset=utf-8"
CONTENT_SECURITY_POLICY: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS: Final[tuple[Header, ...]] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode("ascii")),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
)
_PAGE_HEADERS: Final = (*SECURITY_HEADERS, (b"cache-control", b"no-store"))
_STATIC_TYPES: Final = {
    ".css": b"text/css; charset=utf-8",
    ".js": b"text/javascript; charset=utf-8",
    ".svg": b"image/svg+xml",
}
_MARK_OPEN: Final = "<mark>"
_MARK_CLOSE: Final = "</mark>"
_MARKER = re.compile(r"^\s*<!--\s*([A-Za-z]+ \d+(?: of \d+)?)\s*-->\s*$")


@cache
def static_files() -> Mapping[str, tuple[bytes, bytes]]:
    """The bundled assets by file name: (body, content type), read once."""
    folder = resources.files(__package__).joinpath("static")
    found: dict[str, tuple[bytes, bytes]] = {}
    for entry in folder.iterdir():
        kind = _STATIC_TYPES.get("." + entry.name.rsplit(".", 1)[-1])
        if kind is not None:
            found[entry.name] = (entry.read_bytes(), kind)
    return found


@cache
def asset_version() -> str:
    """A short digest of every asset, so a changed file gets a new URL (cached a day)."""
    digest = hashlib.sha256()
    for name, (body, _) in sorted(static_files().items()):
        digest.update(name.encode() + body)
    return digest.hexdigest()[:12]


def static_reply(name: str) -> Reply | None:
    """One bundled asset, or None when there is no such file."""
    found = static_files().get(name)
    if found is None:
        return None
    body, kind = found
    return Reply(
        status=200,
        body=body,
        content_type=kind,
        headers=(*SECURITY_HEADERS, (b"cache-control", b"public, max-age=86400")),
    )


# -- Markdown ----------------------------------------------------------------------------


def _raw_block(self: RendererHTML, tokens: Sequence[Token], idx: int, *_: Any) -> str:
    content = tokens[idx].content
    marker = _MARKER.match(content)
    if marker is not None:
        return f'<div class="marker">{escape(marker.group(1))}</div>\n'
    return f'<p class="raw">{escape(content)}</p>\n'


def _raw_inline(self: RendererHTML, tokens: Sequence[Token], idx: int, *_: Any) -> str:
    return str(escape(tokens[idx].content))


def _link_open(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    tokens[idx].attrSet("rel", "noopener noreferrer")
    return self.renderToken(tokens, idx, options, env)


@cache
def _markdown() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": True}).enable("table").enable("strikethrough")
    parser.add_render_rule("html_block", _raw_block)
    parser.add_render_rule("html_inline", _raw_inline)
    parser.add_render_rule("link_open", _link_open)
    return parser


def render_markdown(text: str) -> Markup:
    """A note's Markdown as HTML in which whatever HTML the note holds is shown as text."""
    return Markup(_markdown().render(text))


def highlighted(snippet: str) -> Markup:
    """A search snippet with its ``<mark>`` spans kept and everything else escaped."""
    out: list[str] = []
    for i, piece in enumerate(snippet.split(_MARK_OPEN)):
        if i == 0:
            out.append(str(escape(piece)))
            continue
        marked, _, rest = piece.partition(_MARK_CLOSE)
        out.append(f"<mark>{escape(marked)}</mark>{escape(rest)}")
    return Markup("".join(out))


# -- templates ---------------------------------------------------------------------------


@cache
def environment() -> jinja2.Environment:
    """The page templates, autoescaped, with the filters the pages use."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader(__package__, "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["markdown"] = render_markdown
    env.filters["highlighted"] = highlighted
    env.globals["asset_version"] = asset_version()
    return env


def page(template: str, status: int = 200, **context: Any) -> Reply:
    """A rendered page with the security headers."""
    body = environment().get_template(template).render(**context).encode("utf-8")
    return Reply(status=status, body=body, content_type=HTML, headers=_PAGE_HEADERS)


def see_other(location: str, *, headers: tuple[Header, ...] = ()) -> Reply:
    """303 to ``location`` (after a form POST, or to the sign-in page)."""
    return Reply(
        status=303,
        headers=((b"location", location.encode("utf-8")), *_PAGE_HEADERS, *headers),
        content_type=None,
        reason="see-other",
    )


__all__ = [
    "CONTENT_SECURITY_POLICY",
    "HTML",
    "SECURITY_HEADERS",
    "asset_version",
    "environment",
    "highlighted",
    "page",
    "render_markdown",
    "see_other",
    "static_reply",
]
