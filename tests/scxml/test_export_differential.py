"""export-scxml's acceptance: statekit's engine and python-statemachine running the
exported document agree, event by event, on random streams over the reference
machines and the W3C tests that import today (tests/scxml/differential.py says what
is compared; a W3C test that invokes others runs as a family, compared as
tests/scxml/family_differential.py says). A passing W3C test the export refuses must
be in `EXPORT_REFUSED` with the reason it gives. Hypothesis runs derandomized: the
same streams on every run."""

from __future__ import annotations

from pathlib import Path

import pytest
from differential import EXPORT_REFUSED, Pair, run_stream
from family_differential import FamilyPair, run_family_stream
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psm_machine import freeze_psm_clock
from w3c_expected import EXPECTED
from w3c_outcome import family_charts, w3c_files

from statekit.api import load
from statekit.engine.chart import Chart
from statekit.scxml import ScxmlError, chart_of, chart_yaml, read_scxml
from statekit.scxml.export_document import export_scxml
from statekit.scxml.export_family import ChartSet

ROOT = Path(__file__).resolve().parents[2]
MACHINES = {
    "machines/payment.yaml": 60,
    "machines/media_player.yaml": 200,
    "machines/task.yaml": 80,
    "tests/scxml/export_features.yaml": 150,
}
"""Chart → streams: media_player's deep history needs a longer walk (play, pause, power
off and on) before a wrong history kind shows; export_features holds every construct the
export writes (a root with transitions and a timer, history, raise with a payload,
delayed send and cancel, table reads, min/max/abs, done and eventless transitions)."""
W3C_PASSING = sorted(n for n, (result, _) in EXPECTED.items() if result == "pass")


def _streams(examples: int) -> settings:
    return settings(
        max_examples=examples,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


def _machine(name: str) -> Chart:
    return load(ROOT / name)


def _w3c_charts(number: str, work: Path) -> list[Chart]:
    """The test's chart, and the charts it invokes (each written where import-scxml
    would write it)."""
    path = w3c_files()[number]
    translation = chart_of(read_scxml(path), str(path), path.stem)
    charts = []
    for name, written in family_charts(translation, path.stem):
        chart_file = work / f"{name}.yaml"
        chart_file.write_text(chart_yaml(written), "utf-8")
        charts.append(load(chart_file))
    return charts


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_a_reference_machine_runs_the_same_in_psm(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    freeze_psm_clock(monkeypatch)
    chart = _machine(name)
    exported = export_scxml(chart.ir, host_timers=True)

    @_streams(MACHINES[name])
    @given(st.data())
    def streams(data: st.DataObject) -> None:
        run_stream(Pair.start(chart, exported), data, steps=30)

    streams()


@pytest.mark.parametrize("number", W3C_PASSING)
def test_a_w3c_test_that_imports_runs_the_same_in_psm(
    number: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    freeze_psm_clock(monkeypatch)
    charts = _w3c_charts(number, tmp_path)
    try:
        exported = export_scxml(charts[0].ir, charts=ChartSet.of(c.ir for c in charts))
    except ScxmlError as error:
        assert number in EXPORT_REFUSED, f"a new refusal: {error}"
        assert EXPORT_REFUSED[number] in error.message
        return
    assert number not in EXPORT_REFUSED, "exported, though the table says it is refused"

    @_streams(8)
    @given(st.data())
    def streams(data: st.DataObject) -> None:
        if len(charts) > 1:
            run_family_stream(FamilyPair.start(charts, exported), data, steps=8)
        else:
            run_stream(Pair.start(charts[0], exported), data, steps=8)

    streams()
