"""IDs that would read as other IDs (D3): a line break, a right-to-left override, a
zero-width or control character, a space at either end. Every page that draws an ID
shows such characters as escapes and edge spaces as `␠`, isolated in `<bdi>`, titles
included; links still lead to the ID itself."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from browser import chromium, served
from hostile_store import HOSTILE_TEXTS, fill_hostile_store
from markupsafe import escape

from statekit.inspect.context import Inspector, charts_by_version
from statekit.inspect.layout import instance_href
from statekit.inspect.visible_text import plain_id

_TITLE = re.compile(r"<title>(.*?)</title>", re.S)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain-id", "plain-id"),
        ("new\nline", "new\\nline"),
        ("cr\rtab\t", "cr\\rtab\\t"),
        ("\u202eevil\u202c-rtl", "\\u202eevil\\u202c-rtl"),
        ("zero\u200bwidth", "zero\\u200bwidth"),
        ("bell\x07esc\x1b\x9b", "bell\\u0007esc\\u001b\\u009b"),
        ("line\u2028para\u2029", "line\\u2028para\\u2029"),
        (" spaced id ", "␠spaced id␠"),
        ("  two", "␠␠two"),
        ("   ", "␠␠␠"),
        ("inner  spaces", "inner  spaces"),
        ("émoji 🙂 ok", "émoji 🙂 ok"),
    ],
)
def test_hidden_characters_and_edge_spaces_are_shown(text: str, shown: str) -> None:
    assert plain_id(text) == shown


def test_no_two_hostile_ids_read_alike() -> None:
    assert len({plain_id(text) for text in HOSTILE_TEXTS}) == len(HOSTILE_TEXTS)
    assert plain_id(" a") != plain_id("a") != plain_id("a ")
    assert plain_id("a\nb") != plain_id("a b")


@pytest.fixture
def hostile_inspector(tmp_path: Path) -> Iterator[Inspector]:
    url = f"sqlite:///{tmp_path / 'hostile.db'}"
    chart = fill_hostile_store(url, tmp_path)
    inspector = Inspector(url, charts_by_version([chart]))
    yield inspector
    inspector.close()


def test_every_page_draws_ids_visibly(hostile_inspector: Inspector) -> None:
    with served(hostile_inspector) as base, httpx.Client(base_url=base) as client:
        listing = client.get("/", params={"sort": "instance"}).text
        for text in HOSTILE_TEXTS:
            drawn = f'<bdi class="id">{escape(plain_id(text))}</bdi>'
            assert drawn in listing, text
            page = client.get(instance_href(text)).text
            assert f"<h1>Instance <code>{drawn}</code></h1>" in page, text
            title = _TITLE.search(page)
            assert title is not None, text
            assert title.group(1).startswith(f"Instance {escape(plain_id(text))} ·"), text
            assert drawn in page.split("<table", 2)[1], text  # its event ID in the timeline


def test_chromium_shows_the_override_as_written(hostile_inspector: Inspector) -> None:
    rtl = next(text for text in HOSTILE_TEXTS if "\u202e" in text)
    with served(hostile_inspector) as base, chromium() as driver:
        driver.get(base + instance_href(rtl))
        assert driver.find_element("css selector", "h1 bdi").text == plain_id(rtl)
        assert driver.title.startswith(f"Instance {plain_id(rtl)}")
