"""A real PostgreSQL restarted twice (fast, then immediate) in the middle of `statekit run`
fed 10,000 lines through a pipe (`--batch 8`: `Runner.apply_many` is restarted under too),
4 `statekit worker` processes over 5,000 timers and 3 dispatcher processes (the public
`Dispatcher` and `Inbox`, `dispatch_process.py`).

The chart (`JOB`): `Arm` arms a 20 ms timer whose delivery emits `Fired`; `Note` with
`k > 0` emits `Noted`, with `k = 0` is rejected (NOT_POSITIVE). The input, block by block
of 100 instances: each instance's `Arm`, then for each of them a `Note` (k = 0 for every
tenth: REJECTED) or, for every tenth other one, its `Arm` again (ALREADY_APPLIED). So the
answer of every line is known in advance, whatever the timing: 5,000 timers, 4,000
`Noted` and 5,000 `Fired` messages, 14,000 events. The server is restarted `fast` once
3,000 lines are answered and `immediate` once 6,500 are, while the workers fire the timers
the lines arm and the dispatchers deliver the messages those make.

Then: every line answered as decided, each event stored once (and nothing else stored),
every timer fired once, every message delivered (its effect taken) once and in its
instance's order, `statekit verify` clean, and the workers and dispatchers still running,
each ending with 0 on SIGTERM, having printed statekit's messages only.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import IO, Any

import psycopg
from cli_process import statekit
from dispatch_process import EFFECTS
from store_fixtures import DURABLE_SETTINGS

from statekit.runner.store import open_store
from statekit.testing.postgres_server import ThrowawayPostgres

HERE = Path(__file__).resolve().parent
INSTANCES = 5_000  # one timer each
BLOCK = 100
WORKERS, DISPATCHERS = 4, 3
RESTARTS = {3_000: "fast", 6_500: "immediate"}  # answered lines → restart mode
SETTLE = 120.0  # seconds the processes get to finish the timers and messages

JOB = """\
statechart: job
version: 1
description: A job whose arming starts a short timer and whose notes are messages.
context:
  notes: {type: integer, default: 0}
events:
  Arm: {}
  Note: {k: integer}
guards:
  positive:
    if: event.k > 0
    else: NOT_POSITIVE
initial: live
states:
  live:
    initial: idle
    on:
      Note:
        guard: positive
        do:
          - assign: {notes: ctx.notes + 1}
          - emit: {type: Noted, payload: {k: event.k}}
    states:
      idle:
        on:
          Arm: armed
      armed:
        reject: {Arm: ALREADY_ARMED}
        after:
          20ms: {to: fired, do: [{emit: {type: Fired, payload: {}}}]}
      fired:
        on:
          Arm: armed
"""


def planned_lines() -> list[tuple[dict[str, Any], str]]:
    """The input lines with the status each must be answered with (module docstring)."""
    lines: list[tuple[dict[str, Any], str]] = []
    for start in range(0, INSTANCES, BLOCK):
        block = range(start, start + BLOCK)
        for j in block:
            lines.append(({"instance": f"j{j}", "event_id": "arm", "type": "Arm",
                           "payload": {}}, "APPLIED"))  # fmt: skip
        for j in block:
            if j % 10 == 0:
                note = {"instance": f"j{j}", "event_id": "note", "type": "Note",
                        "payload": {"k": 0}}  # fmt: skip
                lines.append((note, "REJECTED"))
            elif j % 10 == 5:
                arm = {"instance": f"j{j}", "event_id": "arm", "type": "Arm", "payload": {}}
                lines.append((arm, "ALREADY_APPLIED"))
            else:
                note = {"instance": f"j{j}", "event_id": "note", "type": "Note",
                        "payload": {"k": 1 + j % 7}}  # fmt: skip
                lines.append((note, "APPLIED"))
    return lines


def _spawn(command: list[str], log: Path) -> subprocess.Popen[bytes]:
    """A long-running process, its output (standard output and error) to `log`."""
    out = log.open("wb")
    return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=HERE)


def _feed(stdin: IO[bytes], lines: list[tuple[dict[str, Any], str]]) -> None:
    for data, _ in lines:
        stdin.write((json.dumps(data) + "\n").encode())
    stdin.close()


def _settled(url: str) -> tuple[int, int, int]:
    """(armed timers, undelivered messages, effects) as of now, on a new connection."""
    with psycopg.connect(url, autocommit=True) as conn:
        timers = conn.execute("SELECT COUNT(*) FROM statekit_timers").fetchone()
        pending = conn.execute(
            "SELECT COUNT(*) FROM statekit_outbox WHERE status <> 'delivered'"
        ).fetchone()
        effects = conn.execute("SELECT COUNT(*) FROM effects").fetchone()
    assert timers is not None and pending is not None and effects is not None
    return int(timers[0]), int(pending[0]), int(effects[0])


def _wait_settled(url: str, processes: list[subprocess.Popen[bytes]]) -> None:
    """Until every timer fired and every message took effect (an observable state, polled
    on the database; the processes must stay up meanwhile)."""
    deadline = time.monotonic() + SETTLE
    while True:
        timers, pending, effects = _settled(url)
        if timers == 0 and pending == 0 and effects == 9_000:
            return
        assert all(p.poll() is None for p in processes), "a worker or dispatcher exited"
        assert time.monotonic() < deadline, (timers, pending, effects)
        time.sleep(0.1)


def test_two_restarts_in_the_middle_of_run_workers_and_dispatchers(tmp_path: Path) -> None:
    lines = planned_lines()
    assert len(lines) == 10_000
    chart = tmp_path / "job.yaml"
    chart.write_text(JOB, encoding="utf-8")
    with ThrowawayPostgres(DURABLE_SETTINGS) as server:
        url = server.create_database("restarts")
        open_store(url).close()  # the schema, before the processes race to make it
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(EFFECTS)
        logs = tmp_path / "logs"
        logs.mkdir()
        worker = [sys.executable, "-m", "statekit", "worker", "--db", url, "--chart",
                  str(chart), "--max-sleep", "0.2"]  # fmt: skip
        dispatcher = [sys.executable, str(HERE / "dispatch_process.py"), url, "effects"]
        workers = [_spawn(worker, logs / f"worker{n}.log") for n in range(WORKERS)]
        dispatchers = [_spawn(dispatcher, logs / f"dispatcher{n}.log") for n in range(DISPATCHERS)]
        long_running = workers + dispatchers
        try:
            run = subprocess.Popen(
                [sys.executable, "-m", "statekit", "run", str(chart), "--db", url,
                 "--batch", "8"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            )  # fmt: skip
            assert run.stdin is not None and run.stdout is not None and run.stderr is not None
            feeder = threading.Thread(target=_feed, args=(run.stdin, lines))
            feeder.start()
            answers: list[dict[str, Any]] = []
            for raw in run.stdout:
                answers.append(json.loads(raw))
                mode = RESTARTS.get(len(answers))
                if mode is not None:
                    server.restart(mode)
            feeder.join()
            errors = run.stderr.read().decode()
            assert run.wait() == 0, errors
            _wait_settled(url, long_running)
            _check_answers(lines, answers)
            _check_store(url)
            verified = statekit("verify", "--db", url, "--chart", str(chart))
            assert verified.returncode == 0, verified.stdout + verified.stderr
            assert all(p.poll() is None for p in long_running), "a process did not survive"
        finally:
            for process in long_running:
                if process.poll() is None:
                    process.send_signal(signal.SIGTERM)
            codes = [process.wait(timeout=60) for process in long_running]
        assert codes == [0] * len(long_running), codes
        for log in sorted(logs.iterdir()):
            _check_messages(log.read_text(encoding="utf-8", errors="replace"), log.name)
        _check_messages(errors, "run")


def _check_answers(lines: list[tuple[dict[str, Any], str]], answers: list[dict[str, Any]]) -> None:
    """Every line answered, in order, with the status decided for it."""
    assert len(answers) == len(lines)
    wrong = [
        (n + 1, data, status, answer)
        for n, ((data, status), answer) in enumerate(zip(lines, answers, strict=True))
        if (answer.get("instance"), answer.get("event_id"), answer.get("status"))
        != (data["instance"], data["event_id"], status)
    ]
    assert not wrong, wrong[:5]


def _check_store(url: str) -> None:
    """Each event stored once, each timer fired once, each message's effect taken once and
    in its instance's order."""
    with psycopg.connect(url, autocommit=True) as conn:
        events = conn.execute("SELECT instance_id, event_id FROM statekit_events").fetchall()
        outbox = conn.execute(
            "SELECT instance_id, message_id, type, status FROM statekit_outbox ORDER BY id"
        ).fetchall()
        effects = conn.execute("SELECT instance_id, message_id FROM effects ORDER BY id").fetchall()
        rejections = conn.execute("SELECT COUNT(*) FROM statekit_rejections").fetchone()
    stored = Counter((i, e.split("/")[0]) for i, e in events)
    expected: Counter[tuple[str, str]] = Counter()
    for j in range(INSTANCES):
        expected[(f"j{j}", "arm")] += 1
        expected[(f"j{j}", "statekit.timer")] += 1  # its one timer, fired once
        if j % 10 not in (0, 5):
            expected[(f"j{j}", "note")] += 1
    assert len(events) == 14_000 and stored == expected
    assert rejections is not None and rejections[0] == INSTANCES // 10  # the k = 0 notes
    assert {status for *_, status in outbox} == {"delivered"} and len(outbox) == 9_000
    assert Counter(t for _, _, t, _ in outbox) == {"Fired": 5_000, "Noted": 4_000}
    emitted: dict[str, list[str]] = defaultdict(list)
    for instance, message, _, _ in outbox:
        emitted[instance].append(message)
    taken: dict[str, list[str]] = defaultdict(list)
    for instance, message in effects:
        taken[instance].append(message)
    assert taken == emitted  # each once, in the order its instance emitted them


def _check_messages(text: str, name: str) -> None:
    """What a process printed: statekit's own words, never a driver's or a crash's."""
    for bad in ("Traceback", "internal error", "psycopg", "AdminShutdown"):
        assert bad not in text, (name, text[-3000:])
