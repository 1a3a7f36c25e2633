"""Record values at run time: payload validation names the path of the first problem,
records stay frozen, an `assign` to one field makes a new record, the canonical JSON
(and so the payload hash) writes records with sorted keys whatever the order they came
in, and `statekit run` on SQLite gives the same context back in a new process."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_process import statekit

from statekit.api import load
from statekit.compiler.canonical import canonical_json
from statekit.compiler.record_values import Record
from statekit.engine.chart import StartError
from statekit.engine.result import INVALID_PAYLOAD, Status
from statekit.runner.hashes import encode_payload
from statekit.testing import Simulator

CHART = """\
statechart: profile
context:
  customer:
    type: record
    fields:
      name: string
      address:
        type: record
        fields:
          city: string
          zip: {type: string, nullable: true}
      tags: {type: list, items: string}
  moves: {type: integer, default: 0}
events:
  REGISTER:
    customer:
      type: record
      fields:
        name: string
        address: {type: record, fields: {city: string, zip: {type: string, nullable: true}}}
        tags: {type: list, items: string}
  MOVE: {city: string}
  CLOSE: {}
initial: open
states:
  open:
    on:
      REGISTER:
        if: event.customer != ctx.customer
        else: UNCHANGED
        do: [{assign: {customer: event.customer}}]
      MOVE:
        if: ctx.customer.address.city != event.city
        else: SAME_CITY
        do: [{assign: {customer.address.city: event.city, moves: ctx.moves + 1}}]
      CLOSE: closed
  closed:
    final: true
    reject: {"*": CLOSED}
"""
ANN: dict[str, Any] = {
    "name": "Ann",
    "address": {"zip": "0150", "city": "Oslo"},
    "tags": ["vip"],
}


@pytest.fixture
def chart_path(tmp_path: Path) -> Path:
    path = tmp_path / "profile.yaml"
    path.write_text(CHART, encoding="utf-8")
    return path


def test_a_record_is_registered_compared_whole_and_one_field_assigned(chart_path: Path) -> None:
    simulator = Simulator(load(chart_path))
    start = simulator.state.context["customer"]
    assert start == {"name": "", "address": {"city": "", "zip": None}, "tags": []}
    assert simulator.send("REGISTER", {"customer": ANN}).status is Status.APPLIED
    assert simulator.send("REGISTER", {"customer": ANN}).reason == "UNCHANGED"
    registered = simulator.state.context["customer"]
    assert type(registered) is Record and type(registered["address"]) is Record
    assert simulator.send("MOVE", {"city": "Oslo"}).reason == "SAME_CITY"
    assert simulator.send("MOVE", {"city": "Bergen"}).status is Status.APPLIED
    moved = simulator.state.context["customer"]
    assert moved == {**ANN, "address": {"city": "Bergen", "zip": "0150"}}
    assert registered["address"]["city"] == "Oslo"  # the old record is unchanged
    assert simulator.state.context["moves"] == 1


def test_a_record_value_refuses_every_change() -> None:
    record = Record({"city": "Oslo"})
    changes: list[Callable[[], object]] = [
        lambda: record.__setitem__("city", "x"),
        lambda: record.__delitem__("city"),
        lambda: record.update(city="x"),
        lambda: record.pop("city"),
        lambda: record.popitem(),
        lambda: record.setdefault("zip", "x"),
        record.clear,
    ]
    for change in changes:
        with pytest.raises(TypeError, match="a record is immutable"):
            change()
    assert record == {"city": "Oslo"}
    assert hash(record) == hash(Record({"city": "Oslo"}))


# (payload of REGISTER, words of the message)
BAD_PAYLOADS = [
    ({"customer": "Ann"}, "field 'customer': expected record {address: record"),
    ({"customer": {**ANN, "address": {"city": "Oslo"}}}, "'customer.address.zip' is missing"),
    (
        {"customer": {**ANN, "address": {"city": "Oslo", "zip": None, "x": 1}}},
        "field 'customer.address': unknown field(s) 'x' (fields: city, zip)",
    ),
    ({"customer": {**ANN, "extra": 1}}, "field 'customer': unknown field(s) 'extra'"),
    ({"customer": {**ANN, "tags": ["a", 1]}}, "field 'customer.tags[1]': expected string"),
    (
        {"customer": {**ANN, "address": {"city": 5, "zip": None}}},
        "field 'customer.address.city': expected string, got integer",
    ),
    ({"customer": {**ANN, "name": None}}, "field 'customer.name': expected string, got null"),
    ({"customer": {**ANN, "address": None}}, "'customer.address': expected record"),
    ({"customer": {k: v for k, v in ANN.items() if k != "name"}}, "'customer.name' is missing"),
    ({"customer": {**ANN, "address": {"city": 2**70, "zip": None}}}, "beyond 64 bits"),
]


@pytest.mark.parametrize(("payload", "words"), BAD_PAYLOADS)
def test_each_bad_record_payload_is_rejected_naming_its_path(
    chart_path: Path, payload: dict[str, Any], words: str
) -> None:
    simulator = Simulator(load(chart_path))
    result = simulator.send("REGISTER", payload)
    assert (result.status, result.reason) == (Status.REJECTED, INVALID_PAYLOAD)
    assert words in (result.message or ""), result.message
    assert simulator.state.context["customer"]["name"] == ""


def test_the_canonical_json_and_payload_hash_of_a_record_ignore_key_order() -> None:
    one = {"customer": Record({"name": "Ann", "address": Record({"zip": None, "city": "Oslo"})})}
    other = {"customer": {"address": {"city": "Oslo", "zip": None}, "name": "Ann"}}
    text = '{"customer":{"address":{"city":"Oslo","zip":null},"name":"Ann"}}'
    assert canonical_json(one) == canonical_json(other) == text
    assert encode_payload("REGISTER", one) == encode_payload("REGISTER", other)


def test_a_sqlite_run_gives_the_same_records_back_in_a_new_process(
    chart_path: Path, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    lines = [
        {"instance": "c1", "event_id": "e1", "type": "REGISTER", "payload": {"customer": ANN}},
        {"instance": "c1", "event_id": "e2", "type": "MOVE", "payload": {"city": "Bergen"}},
    ]
    first = statekit(
        "run", str(chart_path), "--db", url, stdin="".join(json.dumps(x) + "\n" for x in lines)
    )
    assert first.returncode == 0, first.stderr
    assert [json.loads(x)["status"] for x in first.stdout.splitlines()] == ["APPLIED", "APPLIED"]
    again = {"instance": "c1", "event_id": "e3", "type": "MOVE", "payload": {"city": "Bergen"}}
    second = statekit("run", str(chart_path), "--db", url, stdin=json.dumps(again) + "\n")
    assert json.loads(second.stdout)["reason"] == "SAME_CITY"  # read back from the store
    back = {"instance": "c1", "event_id": "e4", "type": "MOVE", "payload": {"city": "Oslo"}}
    third = statekit("run", str(chart_path), "--db", url, stdin=json.dumps(back) + "\n")
    assert json.loads(third.stdout)["status"] == "APPLIED"
    verified = statekit("verify", "--db", url, "--chart", str(chart_path))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "c1: ok (version 3, 3 events)" in verified.stdout


@pytest.mark.parametrize(
    ("customer", "words"),
    [
        ({**ANN, "address": {"city": "Oslo"}}, "'customer.address.zip' is missing"),
        ({**ANN, "tags": "vip"}, "field 'customer.tags': expected list of string, got string"),
        ({**ANN, "address": {"city": "Oslo", "zip": None, "x": 1}}, "unknown field(s) 'x'"),
    ],
)
def test_a_bad_record_in_a_starting_context_is_a_start_error(
    chart_path: Path, customer: dict[str, Any], words: str
) -> None:
    with pytest.raises(StartError, match="context field") as caught:
        load(chart_path).initialize({"customer": customer})
    assert words in str(caught.value)


def test_a_starting_context_record_is_frozen(chart_path: Path) -> None:
    result = load(chart_path).initialize({"customer": ANN})
    assert type(result.state.context["customer"]["address"]) is Record


def test_the_analysis_explores_a_condition_on_records_both_ways(chart_path: Path) -> None:
    done = statekit("explain", str(chart_path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for event, reason in (("REGISTER", "UNCHANGED"), ("MOVE", "SAME_CITY")):
        assert any(line.startswith(f"  {event}: → open") for line in lines), done.stdout
        assert any(line.startswith(f"  {event}: REJECTED {reason}") for line in lines)
