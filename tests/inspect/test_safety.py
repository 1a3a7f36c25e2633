"""Safe by default: the inspector only reads (every route refuses every other method, the
database session refuses writes), asks for its token when it has one, sends its security
headers on every answer, and `statekit inspect` will not listen beyond loopback without
a token."""

from __future__ import annotations

import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator

import pytest
from cli_process import ROOT, statekit
from starlette.routing import Route
from starlette.testclient import TestClient

from statekit.inspect.app import create_app
from statekit.inspect.context import Inspector
from statekit.inspect.security import CONTENT_SECURITY_POLICY, TOKEN_COOKIE

pytest_plugins = ("inspect_fixtures",)

TOKEN = "s3cret-token-0123456789"
WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT", "PROPFIND")


def _addresses(inspector: Inspector) -> list[str]:
    """One address per route of the app over the demo store (pay-1, payment v2)."""
    values = {"instance_id": "pay-1", "name": "payment", "version": "2"}
    found = ["/static/inspect.js", "/static/inspect.css", "/no/such/page"]
    for route in create_app(inspector).routes:
        if isinstance(route, Route):
            path = route.path
            for name in route.param_convertors:
                start = path.index("{" + name)
                path = path[:start] + values[name] + path[path.index("}", start) + 1 :]
            found.append(path)
    return found


def _stored(inspector: Inspector) -> list[tuple[object, ...]]:
    rows = inspector.store().execute(
        "SELECT instance_id, version, configuration FROM statekit_instances ORDER BY instance_id"
    )
    return [tuple(row) for row in rows.fetchall()]


@pytest.fixture
def client(demo_inspector: Inspector) -> Iterator[TestClient]:
    with TestClient(create_app(demo_inspector), follow_redirects=False) as test_client:
        yield test_client


def test_every_route_refuses_every_method_but_get_and_head(
    demo_inspector: Inspector, client: TestClient
) -> None:
    before = _stored(demo_inspector)
    for address in _addresses(demo_inspector):
        assert client.get(address).status_code in (200, 404), address
        assert client.head(address).status_code in (200, 404), address
        for method in WRITE_METHODS:
            response = client.request(method, address, content=b"x=1")
            assert response.status_code == 405, (method, address)
            assert response.headers["allow"] == "GET, HEAD"
    assert _stored(demo_inspector) == before


def test_every_answer_carries_the_security_headers(
    demo_inspector: Inspector, client: TestClient
) -> None:
    for address in [*_addresses(demo_inspector), "/?version=not-a-number"]:
        response = client.get(address)
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "no-referrer"
    assert "script-src 'self';" in CONTENT_SECURITY_POLICY
    assert "unsafe-inline" not in CONTENT_SECURITY_POLICY


def test_the_database_session_refuses_writes(demo_inspector: Inspector) -> None:
    store = demo_inspector.store()
    for statement in (
        "DELETE FROM statekit_instances",
        "UPDATE statekit_instances SET version = 99",
        "CREATE TABLE intruder (x INTEGER)",
    ):
        with pytest.raises(Exception, match=r"(?i)read.only|readonly|query_only"):
            store.execute(statement)
        demo_inspector.forget_stores()
        store = demo_inspector.store()
    assert [row[1] for row in _stored(demo_inspector)] == [6, 0]


@pytest.mark.parametrize(
    ("how", "expected"),
    [
        ({}, 401),
        ({"headers": {"Authorization": "Bearer wrong-token-0123456789"}}, 401),
        ({"headers": {"Authorization": f"Basic {TOKEN}"}}, 401),
        ({"cookies": {TOKEN_COOKIE: "wrong-token-0123456789"}}, 401),
        ({"params": {"token": "wrong-token-0123456789"}}, 401),
        ({"headers": {"Authorization": f"Bearer {TOKEN}"}}, 200),
        ({"headers": {"Authorization": f"bearer {TOKEN}"}}, 200),
        ({"cookies": {TOKEN_COOKIE: TOKEN}}, 200),
        ({"params": {"token": TOKEN, "state": "closed"}}, 303),
    ],
)
def test_a_token_is_asked_for_on_every_route(
    demo_url: str, how: dict[str, dict[str, str]], expected: int
) -> None:
    inspector = Inspector(demo_url, token=TOKEN)
    with TestClient(create_app(inspector), follow_redirects=False) as client:
        for address in _addresses(inspector):
            client.cookies.clear()
            client.cookies.update(how.get("cookies", {}))
            asked = {k: v for k, v in how.items() if k != "cookies"}
            response = client.get(address, **asked)  # type: ignore[arg-type]
            wanted = 404 if expected == 200 and "no/such" in address else expected
            assert response.status_code == wanted, (address, how)
            assert TOKEN not in response.text
    inspector.close()


def test_the_token_in_an_address_becomes_a_strict_cookie(demo_url: str) -> None:
    inspector = Inspector(demo_url, token=TOKEN)
    with TestClient(create_app(inspector), follow_redirects=False) as client:
        response = client.get("/", params={"token": TOKEN, "state": "closed"})
        assert response.status_code == 303
        assert response.headers["location"] == "/?state=closed"
        cookie = response.headers["set-cookie"]
        assert cookie.startswith(f"{TOKEN_COOKIE}={TOKEN};")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        followed = client.get(response.headers["location"])
        assert followed.status_code == 200
        assert "pay-1" in followed.text and "pay-2" not in followed.text
    inspector.close()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("--host", "0.0.0.0"), "not loopback"),
        (("--host", "::"), "not loopback"),
        (("--host", "192.168.1.20"), "not loopback"),
        (("--host", "example.com"), "not loopback"),
        (("--host", "0.0.0.0", "--token", "short"), "16 or more"),
        (("--token", "has spaces in it, 0123456789"), "16 or more"),
        (("--token", "semi;colon0123456789"), "16 or more"),
    ],
)
def test_the_command_refuses_to_listen_unsafely(
    demo_url: str, arguments: tuple[str, ...], message: str
) -> None:
    done = statekit("inspect", "--db", demo_url, "--port", "0", *arguments)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_the_command_serves_the_store_on_loopback(demo_url: str) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "statekit", "inspect", "--db", demo_url, "--port", "0"],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        line = server.stderr.readline()  # written once the socket listens
        assert line.startswith("statekit inspect: "), line
        address = line.rsplit(" on ", 1)[1].strip()
        assert address.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(address) as response:  # loopback only
            page = response.read().decode()
        assert "pay-1" in page and "pay-2" in page
    finally:
        server.terminate()
        server.wait(30)


def _first_line(*arguments: str) -> str:
    """The first line `statekit inspect ARGUMENTS` writes to stderr (then it is stopped)."""
    server = subprocess.Popen(
        [sys.executable, "-m", "statekit", "inspect", "--port", "0", *arguments],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        return server.stderr.readline()
    finally:
        server.terminate()
        server.wait(30)


def test_a_wildcard_bind_prints_an_address_a_remote_user_can_use(demo_url: str) -> None:
    line = _first_line("--db", demo_url, "--host", "0.0.0.0", "--token", "t" * 20)
    address = line.split(" on ", 1)[1]
    assert address.startswith(f"http://{socket.gethostname()}:"), line
    assert "0.0.0.0" not in line and "any other name or address" in line


def test_a_database_that_does_not_answer_is_said_to_be_awaited() -> None:
    # a server that accepts the connection and never answers: the store cannot open
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        port = silent.getsockname()[1]
        line = _first_line("--db", f"postgresql://u:secret@127.0.0.1:{port}/db")
    assert line.startswith("statekit inspect: waiting for the database at "), line
    assert "secret" not in line
