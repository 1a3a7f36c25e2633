"""The inspector across a PostgreSQL restart: the request that finds its connection gone
gets a page saying the store could not be read (503, never a traceback or a driver's
exception's name), and the next one reads through a new connection."""

from __future__ import annotations

from inspect_fixtures import fill_like_demo
from starlette.testclient import TestClient

from statekit.inspect.app import create_app
from statekit.inspect.context import Inspector
from statekit.testing.postgres_server import ThrowawayPostgres


def test_a_restarted_server_costs_one_page_then_the_inspector_reads_again(
    restartable_server: ThrowawayPostgres, restartable_url: str
) -> None:
    fill_like_demo(restartable_url)
    inspector = Inspector(restartable_url)
    with TestClient(create_app(inspector), raise_server_exceptions=False) as client:
        assert "pay-1" in client.get("/").text
        restartable_server.restart()  # every connection of the old server is gone
        answers = [client.get("/") for _ in range(2)]
        lost = [a for a in answers if a.status_code != 200]
        for answer in lost:
            assert answer.status_code == 503
            assert "The store cannot be read" in answer.text
            assert "Traceback" not in answer.text and "psycopg" not in answer.text
        assert answers[-1].status_code == 200 and "pay-1" in answers[-1].text
    inspector.close()
