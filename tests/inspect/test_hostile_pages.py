"""The hostile-input family: every page of the inspector (every GET route of the app, see
`hostile_store.page_addresses`) over a store whose IDs, payloads, state and event names
and rejection messages are hostile, on both stores. No page may carry markup it did not
write (a script, an event handler, a `javascript:` link, an element of the store's
text), and Chromium, loading them, must run nothing injected."""

from __future__ import annotations

from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest
from browser import chromium, served
from hostile_store import HOSTILE_TEXTS, PWNED, fill_hostile_store, page_addresses
from starlette.testclient import TestClient

from statekit.engine.chart import Chart
from statekit.inspect.app import create_app
from statekit.inspect.context import Inspector, charts_by_version
from statekit.inspect.layout import instance_href

OWN_SCRIPT = "/static/inspect.js"
OWN_STYLESHEET = "/static/inspect.css"
OWN_ICON = "/static/favicon.svg"
ELEMENTS = frozenset(
    [
        "html",
        "head",
        "meta",
        "title",
        "link",
        "script",
        "body",
        "header",
        "nav",
        "main",
        "a",
        "span",
        "h1",
        "h2",
        "h3",
        "p",
        "section",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "code",
        "ul",
        "li",
        "form",
        "label",
        "input",
        "select",
        "option",
        "button",
        "strong",
        "em",
        "pre",
        "div",
        "details",
        "summary",
        "ol",
        "dl",
        "dt",
        "dd",
        "svg",
        "g",
        "path",
        "polygon",
        "ellipse",
        "text",
        "title",
        "small",
        "kbd",
        "bdi",
        "wbr",
        "abbr",
        "time",
        "figure",
        "figcaption",
        "caption",
        "colgroup",
        "col",
        "input",
        "output",
        "var",
        "b",
        "i",
        "br",
        "hr",
        "img",
    ]
)
"""The elements the inspector writes (anything else came from the store's text)."""


class _Markup(HTMLParser):
    """Collects what a page would make a browser do: the scripts, the handlers, the links."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ELEMENTS:
            self.problems.append(f"an element the inspector never writes: <{tag}>")
        for name, value in attrs:
            text = (value or "").strip().lower()
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}=...>: an event handler")
            if name in ("href", "src", "action", "formaction", "xlink:href") and (
                text.startswith(("javascript:", "data:text", "vbscript:")) or text.startswith("//")
            ):
                self.problems.append(f"<{tag} {name}={value!r}>: a foreign or script link")
            if name == "style":
                self.problems.append(f"<{tag} style=...>: inline style")
        if tag == "script" and dict(attrs).get("src") != OWN_SCRIPT:
            self.problems.append(f"a script that is not the inspector's: {attrs}")
        if tag == "img" and not (dict(attrs).get("src") or "").startswith(("data:image/", "/")):
            self.problems.append(f"an image from elsewhere: {attrs}")
        if tag == "link" and dict(attrs).get("href") not in (OWN_STYLESHEET, OWN_ICON):
            self.problems.append(f"a link element that is not the stylesheet: {attrs}")


def markup_problems(page: str) -> list[str]:
    """What in `page` the inspector did not write (see `_Markup`)."""
    parser = _Markup()
    parser.feed(page)
    parser.close()
    return parser.problems


@pytest.fixture
def hostile(store_url: str, tmp_path: Path) -> Iterator[tuple[Inspector, Chart]]:
    chart = fill_hostile_store(store_url, tmp_path)
    inspector = Inspector(store_url, charts_by_version([chart]))
    yield inspector, chart
    inspector.close()


def test_no_page_carries_markup_from_the_store(hostile: tuple[Inspector, Chart]) -> None:
    inspector, chart = hostile
    app = create_app(inspector)
    addresses = page_addresses(app, chart)
    assert len(addresses) > 60
    seen_ok = 0
    with TestClient(app, follow_redirects=False) as client:
        for address in addresses:
            response = client.get(address)
            assert response.status_code < 500, (address, response.text[:500])
            assert "content-security-policy" in response.headers, address
            if response.headers.get("content-type", "").startswith("text/html"):
                assert markup_problems(response.text) == [], address
                seen_ok += response.status_code == 200
    assert seen_ok > 20  # the pages were drawn, not only refused


def test_every_hostile_instance_has_its_page(hostile: tuple[Inspector, Chart]) -> None:
    # whatever ID the runner accepts (a newline, a CR, a tab, a slash...) opens its page,
    # its history and its raw values, and a search for it leads there. Over a real
    # server: the test client decodes an escaped `%` twice.
    inspector, _ = hostile
    with served(inspector) as base, httpx.Client(base_url=base) as client:
        for text in HOSTILE_TEXTS:
            address = instance_href(text)
            for suffix in ("", "/events.jsonl", "?step=1&value=payload"):
                response = client.get(address + suffix)
                assert response.status_code == 200, (text, suffix, response.text[-300:])
            found = client.get("/", params={"q": text})
            assert found.status_code == 303, text
            assert found.headers["location"] == address, text


def test_the_checker_sees_each_kind_of_injection() -> None:
    # the family is only as good as its checker
    assert markup_problems('<p><script>x</script><img src=x onerror="y"></p>') != []
    assert markup_problems('<a href="javascript:alert(1)">x</a>') != []
    assert markup_problems("<marquee>x</marquee>") != []
    assert markup_problems('<p style="x">y</p>') != []
    assert markup_problems('<script src="/static/inspect.js"></script><p>&lt;script&gt;</p>') == []


def test_chromium_runs_nothing_injected_on_any_page(
    hostile: tuple[Inspector, Chart],
) -> None:
    inspector, chart = hostile
    addresses = [a for a in page_addresses(create_app(inspector), chart) if "/live" not in a]
    with served(inspector) as base, chromium() as driver:
        for address in addresses:
            driver.get(base + address)
            assert driver.execute_script(f"return window['{PWNED}'] === undefined"), address
            assert driver.title != "pwned", address
