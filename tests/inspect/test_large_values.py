"""Large values (D1): one legal event with a 2 MB payload must not make the instance page
unusable. Every value a page draws is cut to a preview (`value_preview.PREVIEW_BYTES`),
wherever it repeats (payload, context diff, assign effect, outbox message), and the whole
value stays reachable at the raw-value address the page links to."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import pytest
from browser import chromium, served
from cli_process import ROOT, statekit
from starlette.testclient import TestClient

from statekit.inspect.app import create_app
from statekit.inspect.context import Inspector
from statekit.inspect.layout import instance_href
from statekit.inspect.value_preview import PREVIEW_BYTES, preview

HUGE = "A" * 2_000_000
PAGE_BOUND = 200_000
"""The most one instance page may weigh, whatever its values (bytes)."""


@pytest.fixture
def huge_inspector(store_url: str, tmp_path: Path) -> Iterator[Inspector]:
    lines = [
        {"instance": "huge", "event_id": "h1", "type": "START_PAY", "payload": {"amount": 100}},
        {
            "instance": "huge",
            "event_id": "h2",
            "type": "PAY_SUCCESS",
            "payload": {"channel_ref": HUGE},
        },
    ]
    events = tmp_path / "huge.jsonl"
    events.write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = statekit(
        "run", "machines/payment.yaml", "--db", store_url, "--input", str(events), cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    inspector = Inspector(store_url)
    yield inspector
    inspector.close()


def test_every_step_of_the_page_is_bounded_and_links_to_the_whole_values(
    huge_inspector: Inspector,
) -> None:
    with TestClient(create_app(huge_inspector)) as client:
        for step in ("", "0", "1", "2"):
            page = client.get(instance_href("huge"), params={"step": step} if step else {})
            assert page.status_code == 200
            assert len(page.content) < PAGE_BOUND, (step, len(page.content))
        text = client.get(instance_href("huge")).text
        assert "more bytes" in text
        links = {unescape(h) for h in re.findall(r'href="([^"]*value=[^"]*)"', text)}
        kinds = {re.search(r"value=(\w+)", h).group(1) for h in links}  # type: ignore[union-attr]
        assert kinds == {"payload", "context", "message"}
        for link in links:
            whole = client.get(link)
            assert whole.status_code == 200, link
            assert whole.headers["content-type"].startswith("application/json")
            assert HUGE in whole.text, link
        missing = client.get(instance_href("huge"), params={"value": "nope"})
        assert missing.status_code == 404 and "No such value" in missing.text


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("short", "short"),
        ("é" * PREVIEW_BYTES, "é" * (PREVIEW_BYTES // 2) + f"… {PREVIEW_BYTES:,} more bytes"),
        ("x" * (PREVIEW_BYTES + 1), "x" * PREVIEW_BYTES + "… 1 more bytes"),
        ("x" * PREVIEW_BYTES, "x" * PREVIEW_BYTES),
        ("€" * 1000, "€" * 682 + f"… {3000 - 682 * 3:,} more bytes"),
    ],
)
def test_a_preview_keeps_whole_characters_and_says_what_it_left_out(text: str, shown: str) -> None:
    assert preview(text) == shown


def test_chromium_loads_the_instance_page_of_a_huge_payload(huge_inspector: Inspector) -> None:
    with served(huge_inspector) as base, chromium() as driver:
        driver.set_page_load_timeout(30)
        driver.get(base + instance_href("huge"))
        assert driver.find_element("css selector", "#step").get_attribute("data-step") == "2"
        assert driver.execute_script("return document.body.scrollHeight") < 20_000
