"""What the runner's commands print, for data as hostile as a store can hold.

Instance IDs, event IDs, event types and payload texts are anybody's: each hostile
text (an escape sequence, a bidirectional override, a C1 control, a line separator,
a noncharacter, …) is put in every one of them, through `statekit run`, and every
command that prints stored data (`run`, `verify`, `timers`, `outbox`) is read in
text and in JSON. Text must hold no character a terminal acts on (each is shown as
its escape); JSON must hold none either, and still read back as the same values.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from cli_process import ROOT, statekit

from statekit.compiler.terminal_text import is_unsafe, terminal_text

HOSTILE = (
    "\x1b[31mred\x1b]8;;https://evil\x07",
    "right\u202eto-left",
    "isolate\u2066x\u2069",
    "c1\x9bcontrol",
    "del\x7f",
    "line\u2028separator",
    "mark\u200fright",
    "non\ufffecharacter",
    "astral\U0001fffenon",
    "soft\u00adhyphen",
)
"""One text per class of character a reader may act on (C0, C1, DEL, bidi, separators,
format characters, noncharacters in and past the basic plane)."""

COMMANDS = (
    ("verify",),
    ("timers",),
    ("outbox", "--status", "pending", "--status", "delivered", "--status", "dead"),
)


def _lines(index: int, text: str) -> list[dict[str, Any]]:
    instance = f"pay-{index}-{text}"
    return [
        {
            "instance": instance,
            "event_id": f"a{text}",
            "type": "START_PAY",
            "payload": {"amount": 5},
        },
        {
            "instance": instance,
            "event_id": f"b{text}",
            "type": "PAY_SUCCESS",
            "payload": {"channel_ref": text},
        },
        {"instance": instance, "event_id": f"c{text}", "type": text, "payload": {}},
        {
            "instance": f"late-{index}-{text}",
            "event_id": "d",
            "type": "START_PAY",
            "payload": {"amount": 7},
        },
    ]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str]]:
    """A store written by `statekit run` with every hostile text in every field; the run's
    own output lines."""
    folder = tmp_path_factory.mktemp("hostile-store")
    url = f"sqlite:///{folder / 'hostile.db'}"
    lines = [line for i, text in enumerate(HOSTILE) for line in _lines(i, text)]
    stdin = "".join(json.dumps(line) + "\n" for line in lines)  # ASCII: the input is escaped
    ran = statekit("run", str(ROOT / "machines" / "payment.yaml"), "--db", url, stdin=stdin)
    assert ran.returncode == 0, ran.stderr
    assert not _unsafe(ran.stderr)
    return url, ran.stdout.splitlines()


def _unsafe(output: str) -> list[str]:
    """The characters of `output` a reader could act on (line ends aside)."""
    return sorted({c for c in output if is_unsafe(c) and c != "\n"})


def test_run_answers_are_json_without_unsafe_characters_and_read_back_whole(
    store: tuple[str, list[str]],
) -> None:
    _, answers = store
    assert len(answers) == 4 * len(HOSTILE)
    assert not _unsafe("\n".join(answers))
    read = [json.loads(answer) for answer in answers]
    for i, text in enumerate(HOSTILE):
        mine = [a for a in read if a.get("instance") == f"pay-{i}-{text}"]
        assert [a["status"] for a in mine] == ["APPLIED", "APPLIED", "REJECTED"], mine


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_text_output_shows_every_hostile_text_escaped(
    store: tuple[str, list[str]], command: tuple[str, ...]
) -> None:
    url, _ = store
    extra = ("--chart", str(ROOT / "machines" / "payment.yaml")) if command[0] == "verify" else ()
    done = statekit(*command, "--db", url, *extra)
    assert done.returncode == 0, done.stderr
    assert not _unsafe(done.stdout), done.stdout
    assert not _unsafe(done.stderr), done.stderr
    for i, text in enumerate(HOSTILE):
        if command[0] == "timers":  # the payments that succeeded have no timer left
            assert terminal_text(f"late-{i}-{text}") in done.stdout
        else:
            assert terminal_text(f"pay-{i}-{text}") in done.stdout


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_json_output_escapes_every_hostile_text_and_reads_back_the_same(
    store: tuple[str, list[str]], command: tuple[str, ...]
) -> None:
    url, _ = store
    extra = ("--chart", str(ROOT / "machines" / "payment.yaml")) if command[0] == "verify" else ()
    done = statekit(*command, "--db", url, "--format", "json", *extra)
    assert done.returncode == 0, done.stderr
    assert not _unsafe(done.stdout), done.stdout
    values = [json.loads(line) for line in done.stdout.splitlines()]
    instances = {value["instance"] for value in values}
    for i, text in enumerate(HOSTILE):
        assert (f"late-{i}-{text}" if command[0] == "timers" else f"pay-{i}-{text}") in instances
    if command[0] == "outbox":
        refs = {v["payload"].get("channel_ref") for v in values if v["type"] == "PaymentSucceeded"}
        assert refs == set(HOSTILE)


def test_a_lone_surrogate_is_printed_as_its_escape_instead_of_failing() -> None:
    # a JSON input line may spell one (`\ud800`): it is valid JSON, and not valid UTF-8
    stdin = '{"instance": "x", "event_id": "e", "type": "\\ud800", "payload": {}}\n'
    done = statekit(
        "run", str(ROOT / "machines" / "payment.yaml"), "--db", "sqlite:///:memory:", stdin=stdin
    )
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    assert "\\ud800" in done.stdout
    assert json.loads(done.stdout.splitlines()[0])["status"] in ("REJECTED", "ERROR")
