"""Identifiers in tables (D5) wrap only after `.`, `_`, `(`, `@` or `/`, never inside a
word (`PAY_SU|CCESS`), and the columns are wide enough that the largest reference chart's
page stays readable in Chromium."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import chromium, served
from cli_process import ROOT
from inspect_fixtures import fill_like_demo

from statekit.api import load
from statekit.inspect.context import Inspector, charts_by_version
from statekit.inspect.visible_text import identifier

PAGE_HEIGHT_BOUND = 9_000
"""The media_player chart page was 21,347 px tall at 1400 px wide with mid-word breaks."""


@pytest.mark.parametrize(
    ("name", "drawn"),
    [
        ("PAY_SUCCESS", "PAY_<wbr>SUCCESS"),
        ("powered.main.library", "powered.<wbr>main.<wbr>library"),
        (
            "at(ctx.lease_until_ms)@lifecycle.running",
            "at(<wbr>ctx.<wbr>lease_<wbr>until_<wbr>ms)@<wbr>lifecycle.<wbr>running",
        ),
        ("a/b<c>", "a/<wbr>b&lt;c&gt;"),
        ("ALREADYAPPLIED", "ALREADYAPPLIED"),
    ],
)
def test_identifiers_may_break_only_after_separators(name: str, drawn: str) -> None:
    assert str(identifier(name)) == drawn


@pytest.fixture
def media_inspector(tmp_path: Path) -> Iterator[Inspector]:
    charts = [load(str(ROOT / "machines" / f"{n}.yaml")) for n in ("media_player", "task")]
    url = f"sqlite:///{tmp_path / 'demo.db'}"
    fill_like_demo(url)
    inspector = Inspector(url, charts_by_version(charts))
    yield inspector
    inspector.close()


def test_chart_pages_keep_identifiers_whole(media_inspector: Inspector) -> None:
    with served(media_inspector) as base, chromium() as driver:
        for name in ("media_player", "task"):
            driver.get(f"{base}/charts/{name}")
            assert driver.find_elements("css selector", "table.classification td")
            height = driver.execute_script("return document.documentElement.scrollHeight")
            assert height < PAGE_HEIGHT_BOUND, (name, height)
            # every identifier cell wraps, if at all, only at its <wbr> or a space: each
            # word between two <wbr> sits on one line
            split = driver.execute_script(
                r"""
                const bad = [];
                for (const code of document.querySelectorAll('td code, th code')) {
                  for (const node of code.childNodes) {
                    if (node.nodeType !== 3) continue;
                    for (const word of node.data.matchAll(/\S{2,}/g)) {
                      const range = document.createRange();
                      range.setStart(node, word.index);
                      range.setEnd(node, word.index + word[0].length);
                      const tops = [...range.getClientRects()].map(r => Math.round(r.top));
                      const lines = new Set(tops);
                      if (lines.size > 1) bad.push(word[0]);
                    }
                  }
                }
                return bad;
                """
            )
            assert split == [], (name, split[:5])
