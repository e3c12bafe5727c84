"""The web workspace over HTTP, as a browser's requests see it (no browser needed here).

The real gateway serves the pages over the gno-evals corpus plus a folder
holding a hostile note. Checked: shareable URLs render their content in the
HTML itself (search results with highlighted snippets, a document, an answer
with numbered sources); a note's ``<script>`` and ``onerror=`` come out as
text; every page carries a Content-Security-Policy without inline script and
no page holds inline script or event-handler attributes; a form POST from
another origin, or without an Origin, is refused and changes nothing; writes
are refused while disabled; with a token the browser signs in once and its
HttpOnly, SameSite=Strict cookie opens the pages and API reads but never
``/mcp``, and never a POST without an Origin. The browser itself drives the
same flows in ``test_web_browser.py``.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.transports.http.pages.routes import serve as pages
from gno_trio.transports.http.settings import GatewaySettings
from tests.support.document_factory import pdf_bytes, pptx_bytes
from tests.support.http_gateway_support import RELAXED, engine_app, running_gateway
from tests.support.shared import EVALS_CORPUS, required

HOSTILE = (
    "---\n"
    'title: "Hostile <script>window.pwned = 1</script>"\n'
    "tags: [danger]\n"
    "---\n"
    "# Trap\n"
    "\n"
    "<script>window.pwned = 2</script>\n"
    "\n"
    'Inline <img src="x" onerror="window.pwned = 3"> image and a '
    "[link](javascript:window.pwned=4) and a snare word.\n"
)


@pytest.fixture(scope="module")
def web_dirs(tmp_path_factory: pytest.TempPathFactory) -> Dirs:
    """gno-evals as ``evals`` and a folder with one hostile note as ``notes``."""
    required(EVALS_CORPUS, "the shared gno-evals fixture corpus")
    root = tmp_path_factory.mktemp("web-index")
    notes = root / "notes"
    notes.mkdir()
    (notes / "hostile.md").write_text(HOSTILE, encoding="utf-8")
    (notes / "report.pdf").write_bytes(pdf_bytes("pelican", pages=2))
    (notes / "deck.pptx").write_bytes(pptx_bytes("pelican", slides=2))
    dirs = Dirs(config=root / "config", data=root / "data", cache=root / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(EVALS_CORPUS), name="evals")
        engine.collections.add(str(notes), name="notes")
        engine.sync()
    return dirs


@asynccontextmanager
async def workspace(
    dirs: Dirs, *, write_enabled: bool = False, token_file: Path | None = None
) -> AsyncIterator[tuple[str, httpx.AsyncClient]]:
    """The gateway with its pages, and a client that follows no redirect."""
    settings = GatewaySettings(
        port=0, limits=RELAXED, enable_write=write_enabled, token_file=token_file
    )
    with engine_app(dirs, write_enabled=write_enabled) as (app, _):
        async with (
            running_gateway(app, settings, pages=pages) as running,
            httpx.AsyncClient(base_url=running.base, timeout=60) as client,
        ):
            yield running.base, client


class _Scripts(HTMLParser):
    """Every ``<script>`` and every ``on*=`` attribute in a page."""

    def __init__(self) -> None:
        super().__init__()
        self.inline_scripts = 0
        self.script_sources: list[str] = []
        self.handlers: list[str] = []
        self.in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handlers += [name for name, _ in attrs if name.lower().startswith("on")]
        if tag == "script":
            source = dict(attrs).get("src")
            if source:
                self.script_sources.append(source)
            else:
                self.inline_scripts += 1

    def handle_endtag(self, tag: str) -> None:
        pass


def scripts_of(html: str) -> _Scripts:
    parser = _Scripts()
    parser.feed(html)
    return parser


def assert_safe_page(response: httpx.Response) -> None:
    """HTML with a CSP allowing only our own script files, and no inline script anywhere."""
    assert response.headers["content-type"].startswith("text/html")
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "default-src 'none'" in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    found = scripts_of(response.text)
    assert found.inline_scripts == 0 and found.handlers == []
    assert all(src.startswith("/static/") for src in found.script_sources)


async def test_a_shared_search_url_renders_its_results_in_the_html(web_dirs: Dirs) -> None:
    async with workspace(web_dirs) as (_, client):
        for path in ("/", "/search"):
            page = await client.get(path, params={"q": "bearer token", "mode": "lexical"})
            assert page.status_code == 200
            assert_safe_page(page)
            assert "REST API Reference" in page.text  # the hit's title, in the page itself
            assert re.search(r"<mark>[Tt]oken", page.text)  # the snippet's highlight kept
            link = re.search(
                r'href="(/doc\?uri=gno%3A%2F%2Fevals%2Fen%2Fapi-reference\.md[^"]*)"', page.text
            )
            assert link is not None and "line=" in link.group(1)
        empty = await client.get("/")
        assert empty.status_code == 200 and '<ol class="results">' not in empty.text


async def test_search_modes_and_filters_reach_the_tools(web_dirs: Dirs) -> None:
    async with workspace(web_dirs) as (_, client):
        for narrowing, found in (
            ({"collection": "notes"}, True),
            ({"collection": "evals"}, False),
            ({"tags": "danger"}, True),
            ({"tags": "nope"}, False),
        ):
            page = await client.get(
                "/search", params={"q": "snare", "mode": "lexical", **narrowing}
            )
            assert ("gno://notes/hostile.md" in page.text) is found, narrowing
        hybrid = await client.get("/search", params={"q": "deployment", "mode": "hybrid"})
        assert "(hybrid)" in hybrid.text and "gno://evals/" in hybrid.text
        # This index has no vectors yet: the semantic mode says why instead of listing nothing.
        semantic = await client.get("/search", params={"q": "deployment", "mode": "semantic"})
        assert semantic.status_code == 200 and 'class="failure"' in semantic.text


async def test_a_document_page_shows_the_note_and_the_searched_line(web_dirs: Dirs) -> None:
    async with workspace(web_dirs) as (_, client):
        page = await client.get("/doc", params={"uri": "gno://evals/en/api-reference.md"})
        assert page.status_code == 200
        assert_safe_page(page)
        assert "<h2>Authentication</h2>" in page.text  # rendered Markdown
        assert "<table>" in page.text
        at_line = await client.get(
            "/doc", params={"uri": "gno://evals/en/api-reference.md", "line": "7"}
        )
        hit = re.search(r'<li id="L7" class="hit">.*?<code>(.*?)</code>', at_line.text)
        assert hit is not None and "Bearer token" in hit.group(1)
        missing = await client.get("/doc", params={"uri": "gno://evals/nope.md"})
        assert missing.status_code == 404 and "Document not found" in missing.text


async def test_converted_documents_show_their_page_and_slide_markers(web_dirs: Dirs) -> None:
    async with workspace(web_dirs) as (_, client):
        pdf = await client.get("/doc", params={"uri": "gno://notes/report.pdf"})
        assert pdf.status_code == 200 and "application/pdf" in pdf.text
        markers = re.findall(r'<div class="marker">(.*?)</div>', pdf.text)
        assert markers == ["page 1 of 2", "page 2 of 2"]
        assert "pelican" in pdf.text
        deck = await client.get("/doc", params={"uri": "gno://notes/deck.pptx"})
        slides = re.findall(r'<div class="marker">(.*?)</div>', deck.text)
        assert len(slides) >= 2
        assert slides == [f"slide {n} of {len(slides)}" for n in range(1, len(slides) + 1)]


async def test_a_hostile_note_renders_as_text_everywhere(web_dirs: Dirs) -> None:
    async with workspace(web_dirs) as (_, client):
        pages = [
            await client.get("/doc", params={"uri": "gno://notes/hostile.md"}),
            await client.get("/doc", params={"uri": "gno://notes/hostile.md", "view": "source"}),
            await client.get("/search", params={"q": "snare", "mode": "lexical"}),
            await client.get("/search", params={"q": "<script>window.pwned"}),
        ]
        for page in pages:
            assert page.status_code == 200
            assert_safe_page(page)
            assert "<script>window" not in page.text and '<img src="x"' not in page.text
            assert not [href for href in re.findall(r'href="([^"]*)"', page.text) if ":" in href]
        rendered, source = pages[0].text, pages[1].text
        assert "Hostile &lt;script&gt;window.pwned = 1&lt;/script&gt;" in rendered  # the title
        assert "&lt;script&gt;window.pwned = 2&lt;/script&gt;" in rendered
        assert "onerror=&#34;window.pwned = 3&#34;" in rendered
        assert "&lt;script&gt;window.pwned = 2&lt;/script&gt;" in source


async def test_pages_without_the_tools_answer_plainly(web_dirs: Dirs) -> None:
    async with workspace(web_dirs) as (_, client):
        for path in ("/status", "/collections", "/ask", "/browse"):
            page = await client.get(path)
            assert page.status_code == 200, path
            assert_safe_page(page)
        status = await client.get("/status")
        assert "healthy" in status.text and "<dt>Up for</dt>" in status.text
        assert (await client.get("/nowhere")).status_code == 404
        assert (await client.get("/static/none.js")).status_code == 404
        script = await client.get("/static/app.js")
        assert script.status_code == 200 and script.headers["content-type"].startswith(
            "text/javascript"
        )
        wrong = await client.post(
            "/search", data={"q": "x"}, headers={"origin": client.base_url.__str__().rstrip("/")}
        )
        assert wrong.status_code == 405 and wrong.headers["allow"] == "GET"


async def test_the_browse_tree_walks_collections_and_folders(web_dirs: Dirs) -> None:
    async with workspace(web_dirs) as (_, client):
        top = await client.get("/browse")
        assert 'href="/browse?collection=evals&amp;path="' in top.text
        assert 'href="/browse?collection=notes&amp;path="' in top.text
        evals = await client.get("/browse", params={"collection": "evals"})
        assert 'href="/browse?collection=evals&amp;path=en"' in evals.text
        folder = await client.get("/browse", params={"collection": "evals", "path": "en"})
        assert folder.status_code == 200
        assert "gno%3A%2F%2Fevals%2Fen%2Fapi-reference.md" in folder.text
        assert "gno%3A%2F%2Fevals%2Fde%2F" not in folder.text
        missing = await client.get("/browse", params={"collection": "evals", "path": "xx"})
        assert missing.status_code == 404


async def test_ask_shows_numbered_sources_and_the_verdict(web_dirs: Dirs) -> None:
    async with workspace(web_dirs) as (_, client):
        page = await client.get("/ask", params={"q": "How are API requests authenticated?"})
        assert page.status_code == 200
        assert_safe_page(page)
        assert "Verification: <strong>" in page.text
        sources = re.search(r'<ol class="sources">(.*?)</ol>', page.text, re.S)
        assert sources is not None and "gno://evals/" in sources.group(1)


async def test_writes_are_refused_while_disabled(web_dirs: Dirs, tmp_path: Path) -> None:
    async with workspace(web_dirs) as (base, client):
        assert 'href="/capture"' not in (await client.get("/")).text
        assert (await client.get("/capture")).status_code == 403
        refused = await client.post(
            "/collections/add", data={"path": str(tmp_path)}, headers={"origin": base}
        )
        assert refused.status_code == 303
        assert "WRITE_DISABLED" in refused.headers["location"]
        listed = await client.get("/collections")
        assert str(tmp_path) not in listed.text


async def test_a_cross_origin_or_originless_form_post_changes_nothing(
    web_dirs: Dirs, tmp_path: Path
) -> None:
    form = {"collection": "notes", "title": "Planted", "content": "planted text"}
    async with workspace(web_dirs, write_enabled=True) as (base, client):
        foreign = await client.post("/capture", data=form, headers={"origin": "http://evil.test"})
        assert foreign.status_code == 403
        bare = await client.post("/capture", data=form)
        assert bare.status_code == 403
        looked = await client.get("/search", params={"q": "planted", "mode": "lexical"})
        assert "Planted" not in looked.text
        # The same form from the server's own page is served.
        own = await client.post("/capture", data=form, headers={"origin": base})
        assert own.status_code == 303 and own.headers["location"].startswith("/doc?uri=")
        shown = await client.get(own.headers["location"])
        assert "planted text" in shown.text
    for leftover in (web_dirs.config.parent / "notes").glob("planted*.md"):
        leftover.unlink()


async def test_a_token_signs_the_browser_in_once(web_dirs: Dirs, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    async with workspace(web_dirs, token_file=token_file) as (base, client):
        token = token_file.read_text(encoding="utf-8").strip()
        away = await client.get("/search", params={"q": "bearer"})
        assert away.status_code == 303
        assert away.headers["location"] == "/signin?next=%2Fsearch%3Fq%3Dbearer"
        form = await client.get("/signin")
        assert form.status_code == 200 and 'type="password"' in form.text
        assert (await client.get("/static/app.css")).status_code == 200
        wrong = await client.post("/signin", data={"token": "nope"}, headers={"origin": base})
        assert wrong.status_code == 401 and "set-cookie" not in wrong.headers
        signed = await client.post(
            "/signin", data={"token": token, "next": "/search?q=bearer"}, headers={"origin": base}
        )
        assert signed.status_code == 303 and signed.headers["location"] == "/search?q=bearer"
        cookie = signed.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
        # From here the client's cookie jar holds the session cookie, as a browser's would.
        assert client.cookies.get("gno_token") == token
        assert (await client.get("/search", params={"q": "bearer"})).status_code == 200
        assert (await client.get("/api/health")).status_code == 200
        # The cookie serves the browser's pages: never /mcp, never a POST without an Origin.
        mcp = await client.post("/mcp", json={})
        assert mcp.status_code == 401
        # The API reads the page makes go through; an API POST needs this server's Origin too.
        search = {"query": "bearer"}
        assert (await client.post("/api/search", json=search)).status_code == 401
        api = await client.post("/api/search", json=search, headers={"origin": base})
        assert api.status_code == 200 and api.json()["results"]
        bare = await client.post("/signout", data={"x": ""})
        assert bare.status_code == 401
        with_origin = await client.post("/signout", data={"x": ""}, headers={"origin": base})
        assert with_origin.status_code == 303 and "Max-Age=0" in with_origin.headers["set-cookie"]
        elsewhere = await client.post(
            "/signin", data={"token": token, "next": "//evil.test/x"}, headers={"origin": base}
        )
        assert elsewhere.headers["location"] == "/"
        accented = await client.post(
            "/signin", data={"token": token, "next": "/search?q=café"}, headers={"origin": base}
        )
        assert accented.headers["location"] == "/search?q=caf%C3%A9"
