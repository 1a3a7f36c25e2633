"""Small things the pages got wrong: an armed timer's name once (D6), a link to the list
from every state's count, composite ones included (D7), the styled 404 page at every
unknown address (D9)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape

import pytest
from cli_process import ROOT, statekit
from starlette.testclient import TestClient

from statekit.inspect.app import create_app
from statekit.inspect.context import Inspector

pytest_plugins = ("inspect_fixtures",)


@pytest.fixture
def client(demo_inspector: Inspector) -> Iterator[TestClient]:
    with TestClient(create_app(demo_inspector)) as test_client:
        yield test_client


def test_an_armed_timer_is_named_once(client: TestClient) -> None:
    shown = 0
    for step in range(12):
        page = client.get(f"/instances/pay-1?step={step}")
        if page.status_code != 200 or "Timers armed after the step" not in page.text:
            continue
        armed = page.text.split("Timers armed after the step", 1)[1].split("</ul>", 1)[0]
        for item in re.findall(r"<li>(.*?)</li>", armed):
            names = re.findall(r"<code>(.*?)</code>", item)
            assert len(names) == len(set(names)), item
            assert "→" not in item
            shown += 1
    assert shown > 0


def test_every_state_count_links_to_its_instances(demo_url: str) -> None:
    # task has composite states and parallel regions; one instance of it in the store
    done = statekit(
        "run",
        "machines/task.yaml",
        "--db",
        demo_url,
        "--input",
        "-",
        cwd=ROOT,
        stdin='{"instance": "t-1", "event_id": "a", "type": "TaskCancelled", '
        '"payload": {"requested_by": "ops"}}\n',
    )
    assert done.returncode == 0, done.stdout + done.stderr
    inspector = Inspector(demo_url)
    with TestClient(create_app(inspector)) as client:
        _each_count_links(client, "/charts/task", composite="lifecycle")
    inspector.close()


def _each_count_links(client: TestClient, address: str, composite: str) -> None:
    page = client.get(address).text
    rows = re.findall(r'<tr data-state="([^"]*)">(.*?)</tr>', page)
    assert composite in {path for path, _ in rows}, rows
    for path, row in rows:
        link = re.search(r'<a href="([^"]*)">list them</a>', row)
        assert link is not None, path
        listed = client.get(unescape(link.group(1)))
        assert listed.status_code == 200, path


@pytest.mark.parametrize(
    "address", ["/nonexistent", "/charts/payment/abc", "/charts/payment/2/x", "/static/nope.js"]
)
def test_an_unknown_address_gets_the_styled_404_page(client: TestClient, address: str) -> None:
    response = client.get(address)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert "No such page" in response.text and "/static/inspect.css" in response.text
