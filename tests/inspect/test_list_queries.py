"""The instances list's filters, sort, pages and search through HTTP, on the demo store of
each kind, and the clear refusal of a value it cannot read."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from statekit.inspect.app import create_app
from statekit.inspect.context import Inspector

pytest_plugins = ("inspect_fixtures",)


@pytest.fixture
def client(demo_inspector: Inspector) -> Iterator[TestClient]:
    with TestClient(create_app(demo_inspector), follow_redirects=False) as test_client:
        yield test_client


def _listed(page: str) -> list[str]:
    return re.findall(r'<tr data-instance="([^"]*)"', page)


FILTERS = [
    ("", ["pay-2", "pay-1"]),
    ("sort=instance", ["pay-1", "pay-2"]),
    ("sort=instance&order=desc", ["pay-2", "pay-1"]),
    ("sort=version&order=desc", ["pay-1", "pay-2"]),
    ("sort=state", ["pay-1", "pay-2"]),
    ("sort=chart&order=asc", ["pay-1", "pay-2"]),
    ("chart=payment&sort=instance", ["pay-1", "pay-2"]),
    ("chart=payment&version=2&sort=instance", ["pay-1", "pay-2"]),
    ("chart=payment&version=1", []),
    ("chart=task", []),
    ("state=closed", ["pay-1"]),
    ("state=created", ["pay-2"]),
    ("state=clo", []),  # a state is named whole
    ("state=%25", []),  # LIKE's wildcards are literal
    ("rejections=1&sort=instance", ["pay-1", "pay-2"]),
    ("conflicts=1", []),
    ("timers=armed", []),
    ("timers=overdue", []),
    ("outbox=pending", ["pay-1"]),
    ("outbox=dead", []),
    ("from=2000-01-01&sort=instance", ["pay-1", "pay-2"]),
    ("to=2000-01-01", []),
    ("from=2000-01-01T00:00&to=2999-01-01T00:00&sort=instance", ["pay-1", "pay-2"]),
    ("page=2", []),
]


@pytest.mark.parametrize(("query", "expected"), FILTERS)
def test_a_filtered_list_shows_what_its_address_says(
    client: TestClient, query: str, expected: list[str]
) -> None:
    response = client.get("/?" + query)
    assert response.status_code == 200
    assert _listed(response.text) == expected


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("version=two", "version=&#39;two&#39;: a whole number"),
        ("version=-1", "from 0 to"),
        ("page=0", "page=&#39;0&#39;: from 1 to 201"),
        ("page=999", "from 1 to 201"),
        ("sort=colour", "one of activity, instance, chart, state, version"),
        ("order=up", "asc or desc"),
        ("rejections=yes", "1 (or leave it out)"),
        ("timers=soon", "one of armed, overdue"),
        ("outbox=lost", "one of pending, dead"),
        ("from=yesterday", "a date YYYY-MM-DD"),
    ],
)
def test_a_value_the_list_cannot_read_is_said_not_guessed(
    client: TestClient, query: str, message: str
) -> None:
    response = client.get("/?" + query)
    assert response.status_code == 400
    assert message in response.text


def test_the_counts_per_state_link_to_their_instances(client: TestClient) -> None:
    page = client.get("/").text
    counts = re.findall(r'data-state="([^"]+)">[^<]*<span class="badge">(\d+)</span>', page)
    assert sorted(counts) == [("closed", "1"), ("created", "1")]
    assert 'href="/?state=closed"' in page


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("pay-1", "/instances/pay-1"),  # an instance ID
        ("e7", "/instances/pay-1"),  # an event ID only pay-1 has
        ("  e7 ", "/instances/pay-1"),  # as pasted
    ],
)
def test_a_search_with_one_instance_opens_it(client: TestClient, text: str, found: str) -> None:
    response = client.get("/", params={"q": text})
    assert response.status_code == 303
    assert response.headers["location"] == found


def test_a_search_with_several_instances_lists_them(client: TestClient) -> None:
    page = client.get("/", params={"q": "e1"}).text  # e1 is an event of both instances
    assert re.findall(r'<a href="(/instances/[^"]+)"', page) == [
        "/instances/pay-1",
        "/instances/pay-2",
    ]
    assert "rejected event" in page  # pay-2's e1 was rejected


def test_a_search_without_a_hit_says_so(client: TestClient) -> None:
    page = client.get("/", params={"q": "no-such-thing"}).text
    assert "Nothing found" in page
