"""`statekit run` as a line protocol: every line is answered, whatever it holds.

Two families: a client on a real pipe that sends one line and waits for its
answer before sending the next (with `--batch 1` and `--batch N`), and a
table plus a seeded fuzzer of hostile lines (bytes that are not UTF-8, JSON
nested 100,000 deep, lone surrogates in every string of a line, NUL in the
IDs, integers beyond 64 bits, non-finite numbers, a line longer than the
limit), each one `ERROR` line for that input line while the run goes on.
"""

from __future__ import annotations

import json
import os
import random
import selectors
import subprocess
import sys
from pathlib import Path

import pytest
from runner_charts import COUNTER, write_chart

from statekit.cli.run_lines import MAX_LINE_BYTES
from statekit.runner.json_text import MAX_DEPTH

ROOT = Path(__file__).resolve().parents[2]
ANSWER_TIMEOUT = 60.0  # seconds a client waits for one answer before the test fails


def event(instance: str, n: int, **extra: object) -> bytes:
    line = {"instance": instance, "event_id": f"e{n}", "type": "Incr", "payload": {"by": 1}}
    return json.dumps({**line, **extra}).encode() + b"\n"


class Client:
    """`statekit run` on a pipe, read one answer at a time (never more than asked)."""

    def __init__(self, chart: str, url: str, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "statekit.cli", "run", chart, "--db", url, *args],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.process.stdout is not None
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.process.stdout, selectors.EVENT_READ)
        self.pending = b""

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line)
        self.process.stdin.flush()

    def answer(self) -> dict[str, object]:
        """The next output line; fails (instead of hanging) if none comes in time."""
        assert self.process.stdout is not None
        while b"\n" not in self.pending:
            if not self.selector.select(ANSWER_TIMEOUT):
                self.process.kill()
                pytest.fail("statekit run did not answer a line before the next one was sent")
            chunk = os.read(self.process.stdout.fileno(), 65536)
            assert chunk, f"statekit run ended: {self.process.stderr.read()!r}"  # type: ignore[union-attr]
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        data: dict[str, object] = json.loads(line)
        return data

    def close(self) -> tuple[int, bytes]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        rest = self.process.stdout.read()
        self.process.wait(ANSWER_TIMEOUT)
        assert self.process.stderr is not None
        stderr = self.process.stderr.read()
        self.process.stdout.close()
        self.process.stderr.close()
        assert not rest.strip(), rest
        return self.process.returncode, stderr


@pytest.mark.parametrize("batch", ["1", "7"])
def test_a_client_that_waits_for_each_answer_gets_it(
    store_url: str, tmp_path: Path, batch: str
) -> None:
    chart = str(write_chart(COUNTER, tmp_path, "counter"))
    client = Client(chart, store_url, "--batch", batch)
    try:
        script: list[tuple[bytes, dict[str, object]]] = [
            (event("a", 1), {"status": "APPLIED", "version": 1}),
            (event("a", 2), {"status": "APPLIED", "version": 2}),
            (b"{not json\n", {"status": "ERROR", "line": 3}),
            (event("a", 3), {"status": "APPLIED", "version": 3}),
            (event("b", 4), {"status": "APPLIED", "version": 1}),
            (event("b", 4), {"status": "ALREADY_APPLIED", "version": 1}),
            (event("a", 5, expected_version=0), {"status": "CONFLICT", "version": 3}),
        ]
        for line, expected in script:
            client.send(line)
            got = client.answer()
            assert {key: got.get(key) for key in expected} == expected, (line, got)
    finally:
        code, stderr = client.close()
    assert code == 1 and stderr == b""  # one bad line


def test_a_batch_ends_at_n_lines_and_at_a_bad_line(store_url: str, tmp_path: Path) -> None:
    # all input is ready at once: batches of 3 (the third one with `a` and `b`), then
    # one before and one after the bad line
    chart = str(write_chart(COUNTER, tmp_path, "counter"))
    data = b"".join([*(event("a", n) for n in range(1, 8)), event("b", 8), b"[]\n", event("b", 9)])
    done = subprocess.run(
        [sys.executable, "-m", "statekit.cli", "run", chart, "--db", store_url, "--batch", "3"],
        cwd=ROOT,
        input=data,
        capture_output=True,
        check=False,
    )
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(o["status"], o.get("version")) for o in out] == [
        *(("APPLIED", v) for v in range(1, 8)),
        ("APPLIED", 1),
        ("ERROR", None),
        ("APPLIED", 2),
    ]
    assert out[8]["line"] == 9 and done.returncode == 1


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


VALID = {"instance": "i", "event_id": "x", "type": "Incr", "payload": {"by": 1}}
HOSTILE: list[tuple[str, bytes, str]] = [
    ("not UTF-8 at the start", b"\xff\xfe{}", "not UTF-8"),
    ("not UTF-8 inside a string", b'{"instance": "a\xffb", "type": "Incr"}', "not UTF-8"),
    ("an overlong UTF-8 form", b'{"instance": "\xc0\xaf"}', "not UTF-8"),
    ("a truncated UTF-8 sequence", b'{"instance": "\xe2\x82"}', "not UTF-8"),
    ("a UTF-16 line", json.dumps(VALID).encode("utf-16"), "not UTF-8"),
    ("nested 100,000 deep", _deep(100_000).encode(), "nested deeper than"),
    ("a payload nested 100,000 deep",
     json.dumps({**VALID, "payload": {"by": "@"}}).replace('"@"', _deep(100_000)).encode(),
     "nested deeper than"),
    ("nested just past the bound", _deep(MAX_DEPTH + 1).encode(), "nested deeper than"),
    ("nested 1,000 deep (parses, then refused)", _deep(1000).encode(), "nested deeper than"),
    *(
        (f"a lone surrogate {escape} in the {where}",
         json.dumps({**VALID, **{where: "@"}} if where != "payload key" else
                    {**VALID, "payload": {"@": 1}}).replace("@", escape).encode(),
         "lone surrogate")
        for escape in ("\\ud800", "\\udfff", "a\\udbff")
        for where in ("instance", "event_id", "type", "payload key")
    ),
    ("a lone surrogate in a payload value",
     json.dumps({**VALID, "payload": {"by": "\\udc00"}}).replace("\\\\", "\\").encode(),
     "lone surrogate"),
    ("NUL in the instance ID", json.dumps({**VALID, "instance": "a\x00b"}).encode(), "NUL"),
    ("NUL in the event ID", json.dumps({**VALID, "event_id": "a\x00b"}).encode(), "NUL"),
    ("NUL in the type", json.dumps({**VALID, "type": "In\x00cr"}).encode(), "NUL"),
    ("expected_version beyond 64 bits", json.dumps({**VALID, "expected_version": 2**64}).encode(),
     "outside the range a store holds"),
    ("sequence beyond 64 bits", json.dumps({**VALID, "sequence": 2**63}).encode(),
     "outside the range a store holds"),
    ("an integer of 5,000 digits", b'{"instance": "i", "sequence": ' + b"9" * 5000 + b"}",
     "not JSON"),
    # the chart refuses these (the first event of a new instance: it creates nothing)
    ("NaN in the payload", json.dumps({**VALID, "payload": {"by": float("nan")}}).encode(),
     "could not be created: its first event is not one the chart takes (INVALID_PAYLOAD)"),
    ("Infinity in the payload", json.dumps({**VALID, "payload": {"by": float("inf")}}).encode(),
     "could not be created: its first event is not one the chart takes (INVALID_PAYLOAD)"),
    ("a bare NUL byte", b"\x00", "not JSON"),
    ("a line longer than the limit", b'"' + b"a" * (MAX_LINE_BYTES + 10) + b'"', "longer than"),
]  # fmt: skip


def test_each_hostile_line_is_one_error_line_and_the_run_goes_on(tmp_path: Path) -> None:
    chart = str(write_chart(COUNTER, tmp_path, "counter"))
    url = f"sqlite:///{tmp_path / 'run.db'}"
    data = [event("good", 0)]
    for n, (_, line, _) in enumerate(HOSTILE, 1):
        data += [line + b"\n", event("good", n)]
    done = subprocess.run(
        [sys.executable, "-m", "statekit.cli", "run", chart, "--db", url],
        cwd=ROOT,
        input=b"".join(data),
        capture_output=True,
        check=False,
    )
    assert done.returncode == 1 and done.stderr == b"", done.stderr[-2000:]
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(out) == 1 + 2 * len(HOSTILE)
    assert out[0]["status"] == "APPLIED"
    for n, (name, _, message) in enumerate(HOSTILE, 1):
        bad, good = out[2 * n - 1], out[2 * n]
        assert bad["status"] == "ERROR" and bad["line"] == 2 * n, (name, bad)
        assert message in str(bad["error"]), (name, bad)
        assert (good["status"], good["version"]) == ("APPLIED", n + 1), (name, good)


def test_random_lines_each_get_one_answer_in_order(tmp_path: Path) -> None:
    # a seeded fuzzer: valid lines, their mutations (bytes flipped, cut, duplicated,
    # surrogates and NULs spliced in) and random bytes; every non-blank line is
    # answered once, in input order, and the run never crashes
    rng = random.Random(11)
    chart = str(write_chart(COUNTER, tmp_path, "counter"))
    url = f"sqlite:///{tmp_path / 'fuzz.db'}"
    splices = [b"\\ud800", b"\\u0000", b"\x00", b"\xff", b"[[[[", b'"', b"\\", b"1e999", b"}"]
    lines: list[bytes] = []
    for _ in range(400):
        line = event(rng.choice("abc"), rng.randrange(50), expected_version=rng.randrange(-1, 5))
        line = line.rstrip(b"\n")
        kind = rng.randrange(5)
        if kind == 1:
            at = rng.randrange(len(line))
            line = line[:at] + bytes([rng.randrange(256)]) + line[at + 1 :]
        elif kind == 2:
            line = line[: rng.randrange(len(line))]
        elif kind == 3:
            at = rng.randrange(len(line))
            line = line[:at] + rng.choice(splices) + line[at:]
        elif kind == 4:
            line = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
        lines.append(line.replace(b"\n", b" ").replace(b"\r", b" "))
    done = subprocess.run(
        [sys.executable, "-m", "statekit.cli", "run", chart, "--db", url, "--batch", "4"],
        cwd=ROOT,
        input=b"".join(line + b"\n" for line in lines),
        capture_output=True,
        check=False,
    )
    assert done.returncode in (0, 1) and done.stderr == b"", done.stderr[-2000:]
    out = [json.loads(line) for line in done.stdout.splitlines()]
    answered = [n for n, line in enumerate(lines, 1) if line.strip()]
    assert len(out) == len(answered)
    for number, got in zip(answered, out, strict=True):
        if got["status"] == "ERROR" and "line" in got:
            assert got["line"] == number
    verified = subprocess.run(
        [sys.executable, "-m", "statekit.cli", "verify", "--db", url],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    assert verified.returncode == 0, verified.stdout
