"""`statekit run` across lost connections and server restarts: every line answered once.

A client on a real pipe sends lines in chunks and reads every answer; between two
chunks the run's connections are ended (`pg_terminate_backend`) or the whole server
is restarted (fast, immediate), and during a chunk it is restarted again while lines
are being applied. Every line must get exactly one answer, APPLIED at the next
sequence of its instance (no line decided twice, none lost), the run must go on and
end cleanly, and `statekit verify` must find nothing. A server away for longer than
`?retry_for=` stops the run with exit 2 and a message naming the last line answered.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import psycopg
import pytest
from cli_process import statekit
from runner_charts import COUNTER, write_chart
from test_run_protocol import Client, event

from statekit.testing.postgres_server import ThrowawayPostgres

CHUNK = 40
INSTANCES = ("a", "b", "c")


def _lines(start: int, count: int) -> list[bytes]:
    return [event(INSTANCES[n % 3], n) for n in range(start, start + count)]


def _end_backends(url: str) -> None:
    """End every other connection to the database (the run's)."""
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


def _send_all(client: Client, lines: list[bytes]) -> None:
    for line in lines:
        client.send(line)


def _send_chunk(client: Client, lines: list[bytes]) -> list[dict[str, object]]:
    for line in lines:
        client.send(line)
    return [client.answer() for _ in lines]


@pytest.mark.parametrize("batch", ["1", "8"])
@pytest.mark.parametrize("fault", ["terminate", "fast", "immediate"])
def test_every_line_is_answered_once_across_faults(
    restartable_server: ThrowawayPostgres,
    restartable_url: str,
    tmp_path: Path,
    fault: str,
    batch: str,
) -> None:
    chart = str(write_chart(COUNTER, tmp_path, "counter"))
    client = Client(chart, restartable_url + "?retry_for=120", "--batch", batch)
    answers: list[dict[str, object]] = []
    try:
        answers += _send_chunk(client, _lines(1, CHUNK))
        if fault == "terminate":
            _end_backends(restartable_url)
        else:
            restartable_server.restart(fault)
        answers += _send_chunk(client, _lines(CHUNK + 1, CHUNK))
        # again while lines are in flight: the restart races the run
        lines = _lines(2 * CHUNK + 1, 5 * CHUNK)
        sender = threading.Thread(target=_send_all, args=(client, lines))
        sender.start()
        answers.append(client.answer())
        restartable_server.restart("immediate" if fault == "immediate" else "fast")
        answers += [client.answer() for _ in lines[1:]]
        sender.join()
    finally:
        code, stderr = client.close()
    assert [a for a in answers if a["status"] != "APPLIED"] == []
    assert code == 0, stderr
    versions: dict[str, list[object]] = {}
    for a in answers:
        versions.setdefault(str(a["instance"]), []).append(a["version"])
    for instance, seen in versions.items():
        assert seen == list(range(1, len(seen) + 1)), (instance, seen)
    verified = statekit("verify", "--db", restartable_url, "--chart", chart, "--format", "json")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    reports = [json.loads(line) for line in verified.stdout.splitlines()]
    assert sum(r["events"] for r in reports) == len(answers)


def test_a_server_away_past_retry_for_stops_the_run_naming_the_last_line(
    restartable_server: ThrowawayPostgres, restartable_url: str, tmp_path: Path
) -> None:
    chart = str(write_chart(COUNTER, tmp_path, "counter"))
    url = restartable_url.replace("postgres@", "postgres:s3cret@") + "?retry_for=0.5"
    client = Client(chart, url)
    try:
        answers = _send_chunk(client, _lines(1, 5))
        restartable_server.halt("fast")
        client.send(_lines(6, 1)[0])
        code, stderr = client.close()
    finally:
        restartable_server.resume()
    assert [a["status"] for a in answers] == ["APPLIED"] * 5
    assert code == 2
    message = stderr.decode()
    assert "s3cret" not in message
    assert "line 5 was the last answered" in message
    assert "stopped at line 6" in message
    assert "?retry_for=SECONDS" in message
    assert "internal error" not in message and "Traceback" not in message


@pytest.mark.parametrize("command", ["run", "verify", "outbox"])
def test_an_unreachable_server_is_a_usage_error_with_advice(tmp_path: Path, command: str) -> None:
    chart = str(write_chart(COUNTER, tmp_path, "counter"))
    url = "postgresql://app:s3cret@127.0.0.1:1/app?retry_for=0"  # nothing listens on port 1
    args = {"run": ["run", chart, "--db", url], "verify": ["verify", "--db", url]}
    done = statekit(*args.get(command, [command, "--db", url]))
    assert done.returncode == 2
    assert "could not be reached" in done.stderr and "?retry_for=SECONDS" in done.stderr
    assert "s3cret" not in done.stderr and "internal error" not in done.stderr
