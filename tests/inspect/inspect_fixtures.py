"""Fixtures of the inspector's tests (a test module loads them with
`pytest_plugins = ("inspect_fixtures",)`: a folder of its own has no conftest, whose name
the type checker would see twice): a store filled as `make demo` fills it (of each
kind), the app served on loopback over it, and headless Chromium (`browser`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import chromium, served
from cli_process import ROOT, statekit
from selenium import webdriver

from statekit.inspect.chart_summary import wait_for_analyses
from statekit.inspect.context import Inspector

DEMO_COMMANDS = (("run", "machines/payment.yaml", "--input", "examples/payment-events.jsonl"),)
"""What `make demo` writes to its store (the Makefile's `demo` target), run through the
real command line."""


@pytest.fixture(autouse=True)
def analyses_finished() -> Iterator[None]:
    """After each test, the chart analyses its pages started have finished: their threads
    would otherwise allocate during the next tests of this worker (those that measure
    memory count every allocation of the process)."""
    yield
    assert wait_for_analyses(120.0), "a chart analysis still runs two minutes after its test"


def fill_like_demo(url: str) -> None:
    """Run the demo's commands into the store at `url`."""
    for command, *rest in DEMO_COMMANDS:
        done = statekit(command, *rest, "--db", url, cwd=ROOT)
        assert done.returncode in (0, 1), done.stderr  # 1: the demo's rejections


@pytest.fixture
def demo_url(store_url: str) -> str:
    """A store of each kind holding what `make demo` writes."""
    fill_like_demo(store_url)
    return store_url


@pytest.fixture
def demo_inspector(demo_url: str) -> Iterator[Inspector]:
    """An `Inspector` over the demo store, its connections closed afterwards."""
    inspector = Inspector(demo_url)
    yield inspector
    inspector.close()


@pytest.fixture
def served_demo(demo_inspector: Inspector) -> Iterator[str]:
    """The base address of the inspector served over the demo store."""
    with served(demo_inspector) as base:
        yield base


@pytest.fixture
def driver() -> Iterator[webdriver.Chrome]:
    """Headless Chromium."""
    with chromium() as browser:
        yield browser


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    """Where a test's screenshots go."""
    folder = tmp_path / "screenshots"
    folder.mkdir()
    return folder
