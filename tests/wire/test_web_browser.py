"""The web workspace in a real browser: headless Chromium against a live ``gno-trio serve``.

The browser is the distribution's ``chromium`` (``.ci/run`` installs it),
driven through Playwright's Python API with ``executable_path``: nothing
downloads a browser. Under ``CI=true`` a missing browser or Playwright fails
these tests instead of skipping them.

One ``serve`` process (writes on, no background embedding) over gno-evals,
mcp-docs and a folder with a hostile note, one browser, and the flows a
person would follow: search, open a hit and land on its line; ask and read
numbered sources; add a collection and watch its job reach done; open the
hostile note and see its script as text, never run; a form on another site
posting to the server is refused. Each page is saved as a screenshot under
``build/web-screenshots`` (``WEB_SCREENSHOTS_DIR`` chooses another folder;
the README's are made that way). The whole group takes about 15-25 s here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.shared import EVALS_CORPUS, MCP_DOCS, required, required_program, unavailable

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = (
    "# Trap\n\n<script>window.pwned = 2</script>\n\n"
    'A picture <img src="x" onerror="window.pwned = 3"> and a snare word.\n'
)
WAIT_MS = 60_000
GNO = (sys.executable, "-m", "gno_trio")


def _screenshots() -> Path:
    folder = Path(os.environ.get("WEB_SCREENSHOTS_DIR", ROOT / "build" / "web-screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _gno(env: dict[str, str], *args: str) -> None:
    subprocess.run([*GNO, *args], env=env, check=True, timeout=600)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A live ``serve`` on an ephemeral loopback port; its base URL and folders."""
    required(EVALS_CORPUS, "the shared gno-evals fixture corpus")
    required(MCP_DOCS, "the shared mcp-docs fixture corpus")
    root = tmp_path_factory.mktemp("web-browser")
    notes = root / "notes"
    notes.mkdir()
    (notes / "hostile.md").write_text(HOSTILE, encoding="utf-8")
    env = {
        **os.environ,
        "GNO_CONFIG_DIR": str(root / "config"),
        "GNO_DATA_DIR": str(root / "data"),
        "GNO_CACHE_DIR": str(root / "cache"),
    }
    _gno(env, "collection", "add", str(EVALS_CORPUS), "--name", "evals")
    _gno(env, "collection", "add", str(MCP_DOCS), "--name", "mcpdocs")
    _gno(env, "collection", "add", str(notes), "--name", "notes")
    _gno(env, "update")
    process = subprocess.Popen(
        [*GNO, "serve", "--port", "0", "--json", "--mcp-enable-write", "--no-embed", "--no-watch"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        announced = json.loads(process.stdout.readline())
        base = announced["workspaceUrl"].rstrip("/")
        yield {"base": base, "root": root}
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = required_program("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("Playwright's Python package is not installed")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=executable, headless=True, args=["--no-sandbox"]
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1100, "height": 760})
    opened = context.new_page()
    opened.set_default_timeout(WAIT_MS)
    try:
        yield opened
    finally:
        context.close()


def _shoot(page: Any, name: str, *, full: bool = False) -> None:
    """Save the page; folder paths of this machine are painted over (``.path`` elements)."""
    page.screenshot(
        path=str(_screenshots() / f"{name}.png"), full_page=full, mask=[page.locator(".path")]
    )


def test_search_then_open_a_hit_lands_on_its_line(server: dict[str, Any], page: Any) -> None:
    page.goto(server["base"] + "/")
    page.keyboard.press("/")  # the shortcut puts the cursor in the search box
    page.keyboard.type("bearer token")
    page.keyboard.press("Enter")
    page.wait_for_selector("ol.results li.result")
    _shoot(page, "search")
    first = page.locator("li.result").filter(has_text="REST API Reference").first
    snippet = first.locator("pre.snippet").inner_text()
    first.locator("a.title").click()
    page.wait_for_url("**/doc?**")
    hit = page.locator("ol.lines li.hit")
    assert hit.count() == 1 and hit.is_visible()
    # Scrolled to, and clear of the sticky header: the person sees it without scrolling.
    header, box = page.locator("header.top").bounding_box(), hit.bounding_box()
    assert header is not None and box is not None
    assert (
        header["y"] + header["height"] <= box["y"] <= page.viewport_size["height"] - box["height"]
    )
    line_text = hit.locator("code").inner_text()
    assert line_text.strip() and line_text.strip() in snippet
    _shoot(page, "document-line")
    page.locator("nav.tabs a", has_text="Rendered").click()
    page.wait_for_selector("div.markdown h2")
    _shoot(page, "document")


def test_ask_shows_numbered_sources(server: dict[str, Any], page: Any) -> None:
    page.goto(server["base"] + "/ask")
    page.fill("form.filters input[name=q]", "How are API requests authenticated?")
    page.click("form.filters button[type=submit]")
    page.wait_for_selector("ol.sources li")
    assert page.locator("ol.sources li").count() >= 1
    assert "Verification:" in page.locator("p.verdict").inner_text()
    _shoot(page, "ask")


def test_adding_a_collection_shows_its_job_reach_done(server: dict[str, Any], page: Any) -> None:
    from playwright.sync_api import expect

    fresh = server["root"] / "fresh"
    fresh.mkdir()
    for index in range(3):
        (fresh / f"note-{index}.md").write_text(f"# Fresh {index}\n\nquince {index}\n")
    # The page listens to the server's event stream for job progress.
    with page.expect_request(lambda request: request.url.endswith("/api/events")):
        page.goto(server["base"] + "/collections")
    page.fill("input[name=path]", str(fresh))
    page.fill("input[name=name]", "fresh")
    page.click("text=Add collection")
    page.wait_for_selector("p.notice")
    # The live panel follows the job (the page is not reloaded): done, and the counts with it.
    page.wait_for_selector("tr.job-completed >> text=fresh")
    row = page.locator("table.collections tr", has_text="fresh")
    expect(row.locator("td").nth(1)).to_have_text("3", timeout=WAIT_MS)
    _shoot(page, "collections", full=True)
    page.goto(server["base"] + "/browse")
    page.click("ul.tree a:text('fresh/')")
    page.wait_for_url("**/browse?collection=fresh**")
    assert page.locator("ul.tree li.file").count() == 3
    _shoot(page, "browse")


def test_a_hostile_note_runs_no_script(server: dict[str, Any], page: Any) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(server["base"] + "/doc?uri=gno://notes/hostile.md")
    page.wait_for_selector("div.markdown")
    assert page.evaluate("typeof window.pwned") == "undefined"
    text = page.locator("div.markdown").inner_text()
    assert "<script>window.pwned = 2</script>" in text
    assert 'onerror="window.pwned = 3"' in text
    assert page.locator("div.markdown script, div.markdown img").count() == 0
    assert dialogs == []


def test_a_form_on_another_site_cannot_post_here(server: dict[str, Any], page: Any) -> None:
    base = server["base"]
    trap = (
        f'<form id="f" method="post" action="{base}/capture">'
        '<input name="collection" value="notes"><input name="title" value="Planted">'
        '<input name="content" value="planted by another site"></form>'
        '<script>document.getElementById("f").submit()</script>'
    )
    page.route(
        "http://elsewhere.test/**", lambda route: route.fulfill(body=trap, content_type="text/html")
    )
    with page.expect_response(f"{base}/capture") as answered:
        page.goto("http://elsewhere.test/")
    assert answered.value.status == 403
    page.goto(base + "/search?q=planted&mode=lexical")
    assert page.locator("li.result").count() == 0


def test_the_other_pages_and_the_switcher(server: dict[str, Any], page: Any) -> None:
    base = server["base"]
    page.goto(base + "/status")
    page.wait_for_selector("dl.facts")
    _shoot(page, "status")
    page.goto(base + "/capture")
    _shoot(page, "capture")
    page.goto(base + "/browse")
    page.keyboard.press("Control+k")
    page.keyboard.type("coll")
    page.keyboard.press("Enter")
    page.wait_for_url("**/collections")
    # A document once opened is offered by the switcher afterwards.
    page.goto(base + "/doc?uri=gno://evals/en/api-reference.md")
    page.goto(base + "/status")
    page.keyboard.press("Control+k")
    page.keyboard.type("REST API")
    page.keyboard.press("Enter")
    page.wait_for_url("**/doc?uri=gno%3A%2F%2Fevals%2Fen%2Fapi-reference.md")


def test_phone_and_dark_mode(server: dict[str, Any], browser: Any) -> None:
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, color_scheme="dark", is_mobile=True
    )
    try:
        phone = context.new_page()
        phone.goto(server["base"] + "/search?q=deployment&mode=lexical")
        phone.wait_for_selector("li.result")
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= 390  # nothing forces sideways scrolling on a phone
        background = phone.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background != "rgb(251, 251, 250)"  # the dark palette, not the light one
        _shoot(phone, "search-phone-dark")
    finally:
        context.close()
