"""A store written before the canonical JSON encoder was orjson reads, verifies and goes on
as before: the same payload texts and hashes, evidence, contexts and chart digest.

`fixtures/store_before_orjson.db` was written by `fixtures/make_store_before_orjson.py`
run with the statekit of revision 817a38a (the standard library's encoder): events whose
payloads, evidence, contexts and messages hold the values orjson writes otherwise or
refuses (floats below 1e-4 and from 1e16, -0.0, non-BMP characters, controls, U+2028,
nulls), and rejected events whose payloads hold NaN, an infinity and an integer beyond
64 bits, recorded as they came.
"""

from __future__ import annotations

import json
import math
import shutil
import sqlite3
from pathlib import Path

import pytest
from cli_process import statekit

from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.runner.hashes import encode_payload
from statekit.runner.outcome import OutcomeStatus
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

FIXTURES = Path(__file__).parent / "fixtures"
CHART = FIXTURES / "gauge.yaml"


@pytest.fixture
def old_store(tmp_path: Path) -> Path:
    path = tmp_path / "before.db"
    shutil.copyfile(FIXTURES / "store_before_orjson.db", path)
    return path


def _runner(path: Path) -> Runner:
    compiled = compile_source(CHART.read_text(), CHART.name).chart
    assert compiled is not None
    return Runner(Chart(compiled), open_store(f"sqlite:///{path}"))


def test_verify_finds_the_store_written_before_as_it_was(old_store: Path) -> None:
    # the store is at schema 9; reading never upgrades, so it is opened once to write,
    # as a store in service is by its runner (the upgrade adds indexes, changes no text)
    open_store(f"sqlite:///{old_store}").close()
    done = statekit("verify", "--db", f"sqlite:///{old_store}", "--chart", str(CHART))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "gauge-1: ok (version 8, 8 events)" in done.stdout


def test_the_rejected_payloads_keep_the_hashes_they_were_stored_with(old_store: Path) -> None:
    with sqlite3.connect(old_store) as db:
        rows = db.execute(
            "SELECT type, payload, payload_sha256 FROM statekit_rejections ORDER BY id"
        ).fetchall()
    assert [text for _, text, _ in rows] == [
        '{"label":"nan","note":null,"value":NaN}',
        '{"label":"inf","note":null,"value":Infinity}',
        '{"label":"beyond 64 bits","note":null,"value":18446744073709551616}',
    ]
    for event_type, text, digest in rows:
        encoded = encode_payload(event_type, json.loads(text))
        assert (encoded.text, encoded.sha256) == (text, digest)


@pytest.mark.parametrize(
    ("event_id", "payload"),
    [
        ("m-0", {"value": 1e-05, "label": "tiny", "note": None}),
        ("m-1", {"value": 1.5e-07, "label": "smaller", "note": "1e-5 as text"}),
        ("m-2", {"value": 1e16, "label": "big", "note": "0.00001 as text"}),
        ("m-3", {"value": -0.0, "label": "negative zero", "note": None}),
        ("m-4", {"value": 5e-324, "label": "subnormal", "note": "\U0001f600 \U00010000"}),
        ("m-5", {"value": 123.25, "label": "tab\there\u2028line\x01", "note": '/\\"'}),
        ("m-6", {"value": 0.1, "label": "é中\ufeff", "note": None}),
    ],
)
def test_an_event_sent_again_is_known_by_its_stored_hash(
    old_store: Path, event_id: str, payload: dict[str, object]
) -> None:
    runner = _runner(old_store)
    again = runner.apply("gauge-1", event_id, "Measure", payload)
    assert (again.status, again.duplicate, again.version) == (
        OutcomeStatus.ALREADY_APPLIED, True, 8,
    )  # fmt: skip
    changed = runner.apply("gauge-1", event_id, "Measure", {**payload, "label": "other"})
    assert (changed.status, changed.reason) == (OutcomeStatus.CONFLICT, "EVENT_ID_PAYLOAD_CONFLICT")


def test_a_payload_with_nan_is_still_rejected_and_recorded(old_store: Path) -> None:
    runner = _runner(old_store)
    for n, value in enumerate([math.nan, -math.inf]):
        payload = {"value": value, "label": "again", "note": None}
        outcome = runner.apply("gauge-1", f"bad-{n}", "Measure", payload)
        assert (outcome.status, outcome.reason) == (OutcomeStatus.REJECTED, "INVALID_PAYLOAD")
    with sqlite3.connect(old_store) as db:
        texts = [row[0] for row in db.execute("SELECT payload FROM statekit_rejections")]
    assert texts[-2:] == [
        '{"label":"again","note":null,"value":NaN}',
        '{"label":"again","note":null,"value":-Infinity}',
    ]


def test_the_old_store_goes_on_and_verifies(old_store: Path) -> None:
    runner = _runner(old_store)
    for n, value in enumerate([3e-05, 1e22, -0.0, 0.5]):
        outcome = runner.apply("gauge-1", f"new-{n}", "Measure", {
            "value": value, "label": "ünïcode \U0001f600", "note": None,
        })  # fmt: skip
        assert outcome.status is OutcomeStatus.APPLIED, outcome
    done = statekit("verify", "--db", f"sqlite:///{old_store}", "--chart", str(CHART))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "gauge-1: ok (version 12, 12 events)" in done.stdout
