"""The pytest plugin `--statekit-cov`, run inside pytest (pytester): each number on a chart
with a deliberately untested transition, rejection and pair; the options; the reports."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest
from coverage_charts import DOOR

# The inner runs are in-process (pytester): statekit's modules must be the outer ones for
# all of them (pytester drops modules an inner run imported; `statekit.load` would
# otherwise hand out the first run's `Chart`, reporting to the first run's observers).
import statekit.api
import statekit.runner.runner
import statekit.testing.coverage.report

assert statekit.api and statekit.runner.runner and statekit.testing.coverage.report

UNUSED = """
statechart: unused
events: {GO: {}}
initial: a
states:
  a:
    on: {GO: b}
  b: {}
"""

# The suite under test: opens, closes, tries to lock an open door, sends an unknown event.
# Never: LOCK from closed (a transition), OPEN when locked (the LOCKED rejection).
SUITE = """
import statekit

def test_open_close():
    door = statekit.load("charts/door.yaml")
    opened = door.send(door.start(), "OPEN")
    assert opened.applied
    assert door.send(opened.state, "LOCK").reason == "DOOR_OPEN"
    assert door.send(opened.state, "CLOSE").applied

def test_unknown():
    door = statekit.load("charts/door.yaml")
    assert door.send(door.start(), "KNOCK").reason == "UNKNOWN_EVENT"
"""


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".yaml", **{"charts/door": textwrap.dedent(DOOR)})
    pytester.makefile(".yaml", **{"charts/unused": textwrap.dedent(UNUSED)})
    pytester.makepyfile(test_plugin_door=SUITE)
    return pytester


def _report(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = pytester.runpytest(*args, "--statekit-cov-report=json:cov.json")
    return result, json.loads((pytester.path / "cov.json").read_text())


def test_each_number_of_a_chart_with_untested_items(suite: pytest.Pytester) -> None:
    result, report = _report(suite, "--statekit-cov=charts")
    assert result.ret == 0
    door = report["charts"]["door"]
    assert door["file"].endswith("door.yaml") and door["loaded"] is True
    t = door["transition"]
    assert (t["covered"], t["total"]) == (2, 3)
    assert [(m["label"], m["path"]) for m in t["missing"]] == [
        ("'closed' --LOCK--> 'locked' (line 6)", ["LOCK"])
    ]
    c = door["classification"]
    assert (c["covered"], c["total"]) == (3, 9)
    assert {(tuple(m["configuration"]), m["event"]) for m in c["missing"]} == {
        (("closed",), "CLOSE"),
        (("closed",), "LOCK"),
        (("locked",), "OPEN"),
        (("locked",), "CLOSE"),
        (("locked",), "LOCK"),
        (("open",), "OPEN"),
    }
    assert next(
        m for m in c["missing"] if m["configuration"] == ["locked"] and m["event"] == "OPEN"
    )["path"] == ["LOCK", "OPEN"]
    r = door["rejection"]
    assert (r["covered"], r["total"]) == (2, 5)
    assert {m["reason"]: m["path"] for m in r["missing"]} == {
        "INVALID_PAYLOAD": [],
        "LOCKED": ["LOCK", "OPEN"],
        "UNDEFINED_TRANSITION": ["CLOSE"],
    }
    # no producers declared: every pair may race; three pairs are order-sensitive (one
    # each, OPEN/CLOSE counted once for its two configurations, shown at the first), and
    # the suite tried one order of two of them (OPEN then LOCK; LOCK, rejected, then CLOSE)
    race = door["race"]
    assert (race["covered"], race["total"]) == (0, 3)
    assert [
        (m["events"], m["configuration"], m["untried"], m["path"], m["class"])
        for m in race["missing"]
    ] == [
        (["OPEN", "CLOSE"], ["closed"], ["OPEN then CLOSE", "CLOSE then OPEN"], [], "race"),
        (["OPEN", "LOCK"], ["closed"], ["LOCK then OPEN"], [], "race"),
        (["CLOSE", "LOCK"], ["open"], ["CLOSE then LOCK"], ["OPEN"], "race"),
    ]
    assert not any(m["decided"] for m in race["missing"])
    unused = report["charts"]["unused"]
    assert unused["loaded"] is False
    assert (unused["transition"]["covered"], unused["transition"]["total"]) == (0, 1)


def test_without_a_path_every_loaded_chart_and_only_those(suite: pytest.Pytester) -> None:
    result, report = _report(suite, "--statekit-cov")
    assert result.ret == 0
    assert list(report["charts"]) == ["door"]
    assert report["charts"]["door"]["transition"]["covered"] == 2


def test_the_terminal_table(suite: pytest.Pytester) -> None:
    result = suite.runpytest("--statekit-cov=charts")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "*statekit coverage*",
            "chart*transition*classification*rejection*race",
            "door*2/3  66.7%*3/9  33.3%*2/5  40.0%*0/3   0.0%",
            "unused (never loaded)*0/1   0.0%*",
        ]
    )


@pytest.mark.parametrize(
    ("bounds", "fails"),
    [
        (
            "transition:100",
            ["door: transition coverage 66.7% is below 100%", "unused: transition*"],
        ),
        ("transition:60,rejection:40", ["unused: transition coverage 0.0% is below 60%"]),
        ("classification:33,race:100", ["unused: classification coverage 0.0% is below 33%"]),
        ("transition:0", []),
    ],
)
def test_fail_under_fails_the_run_naming_each_chart_and_metric(
    suite: pytest.Pytester, bounds: str, fails: list[str]
) -> None:
    result = suite.runpytest("--statekit-cov=charts", f"--statekit-cov-fail-under={bounds}")
    if fails:
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        result.stdout.fnmatch_lines(["FAIL: statekit coverage below*", *(f"  {f}" for f in fails)])
    else:
        assert result.ret == 0
        result.stdout.fnmatch_lines(["statekit coverage reached every bound (transition 0%)"])


def test_fail_under_does_not_hide_failing_tests(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_bad():\n    assert False\n")
    result = pytester.runpytest("--statekit-cov", "--statekit-cov-fail-under=transition:0")
    assert result.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--statekit-cov-fail-under=transition"], "*'transition' is not METRIC:PERCENT*"),
        (["--statekit-cov-fail-under=lines:90"], "*'lines:90' is not METRIC:PERCENT*"),
        (["--statekit-cov-fail-under=race:many"], "*'many' is not a number*"),
        (["--statekit-cov-fail-under=race:101"], "*101 is not within 0..100*"),
        (["--statekit-cov-fail-under=race:-1"], "*-1 is not within 0..100*"),
        (
            ["--statekit-cov-report=xml:out.xml"],
            "*'xml:out.xml' is not term, json:PATH or html:DIR*",
        ),
        (["--statekit-cov-report=json"], "*'json' is not term, json:PATH or html:DIR*"),
        (["--statekit-cov-report=html:"], "*'html:' is not term, json:PATH or html:DIR*"),
    ],
)
def test_bad_options_are_usage_errors(
    suite: pytest.Pytester, args: list[str], message: str
) -> None:
    result = suite.runpytest("--statekit-cov=charts", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_a_missing_path_is_a_usage_error(suite: pytest.Pytester) -> None:
    result = suite.runpytest("--statekit-cov=nowhere")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--statekit-cov: 'nowhere' does not exist*"])


@pytest.mark.parametrize(
    ("report", "make", "message"),
    [
        ("html:taken", "file", "*'html:taken': taken exists and is not a folder*"),
        ("json:taken", "folder", "*'json:taken': taken is a folder (json: names a file)*"),
    ],
)
def test_a_report_target_of_the_wrong_kind_is_a_usage_error(
    suite: pytest.Pytester, report: str, make: str, message: str
) -> None:
    target = suite.path / "taken"
    if make == "file":
        target.write_text("mine\n")
    else:
        target.mkdir()
    result = suite.runpytest("--statekit-cov=charts", f"--statekit-cov-report={report}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stderr.str() + result.stdout.str()
    assert make != "file" or target.read_text() == "mine\n"  # left as it was


def test_a_report_that_cannot_be_written_fails_the_run_without_a_traceback(
    suite: pytest.Pytester,
) -> None:
    # the report's folder turns into a file while the tests run
    suite.makepyfile(
        test_zz_takes_the_folder="""
from pathlib import Path

def test_takes_it():
    Path("out").write_text("a file now")
"""
    )
    result = suite.runpytest("--statekit-cov=charts", "--statekit-cov-report=html:out/cov")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*FAIL: html report not written to out/cov*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_off_by_default(suite: pytest.Pytester) -> None:
    result = suite.runpytest()
    assert result.ret == 0
    assert "statekit coverage" not in result.stdout.str()
    assert not (suite.path / "cov.json").exists()


def test_a_chart_under_the_path_that_does_not_compile_is_named(suite: pytest.Pytester) -> None:
    suite.makefile(".yaml", **{"charts/broken": "statechart: [\n"})
    result, report = _report(suite, "--statekit-cov=charts")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*broken.yaml: not measured, it does not compile"])
    assert sorted(report["charts"]) == ["door", "unused"]


RUNNER_SUITE = """
import statekit
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

def test_through_the_runner(tmp_path):
    runner = Runner(statekit.load("charts/door.yaml"), open_store(f"sqlite:///{tmp_path}/d.db"))
    runner.create("d1")
    assert runner.apply("d1", "e1", "LOCK").status.value == "APPLIED"
    assert runner.apply("d1", "e2", "OPEN").reason == "LOCKED"
"""


def test_results_of_the_durable_runner_count(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", **{"charts/door": textwrap.dedent(DOOR)})
    pytester.makepyfile(test_plugin_runner=RUNNER_SUITE)
    result, report = _report(pytester, "--statekit-cov=charts")
    assert result.ret == 0, result.stdout.str()
    door = report["charts"]["door"]
    assert door["transition"]["covered"] == 1
    assert [m["reason"] for m in door["rejection"]["missing"]] == [
        "DOOR_OPEN",
        "INVALID_PAYLOAD",
        "UNDEFINED_TRANSITION",
        "UNKNOWN_EVENT",
    ]


INLINE_SUITE = '''
from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart

DOOR = """{door}"""
OTHER = DOOR.replace("statechart: door", "statechart: other").replace("LOCKED", "SHUT")

def test_inline():
    door = Chart(compile_source(DOOR, "elsewhere.yaml").chart)
    door.send(door.start(), "LOCK")
    other = Chart(compile_source(OTHER, "other.yaml").chart)
    other.send(other.start(), "OPEN")
'''


def test_the_same_chart_compiled_from_text_counts_and_others_are_not_kept(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(".yaml", **{"charts/door": textwrap.dedent(DOOR)})
    pytester.makepyfile(test_plugin_inline=INLINE_SUITE.replace("{door}", textwrap.dedent(DOOR)))
    result, report = _report(pytester, "--statekit-cov=charts")
    assert result.ret == 0, result.stdout.str()
    assert list(report["charts"]) == ["door"]
    assert report["charts"]["door"]["transition"]["missing"][0]["label"].startswith(
        "'closed' --OPEN--> 'open'"
    )


LOAD_ONLY_SUITE = """
import statekit

def test_loads_without_sending():
    assert statekit.load("charts/door.yaml").name == "door"
"""


@pytest.mark.parametrize("where", ["--statekit-cov", "--statekit-cov=charts"])
def test_a_chart_loaded_and_never_sent_anything_is_listed_at_zero(
    pytester: pytest.Pytester, where: str
) -> None:
    pytester.makefile(".yaml", **{"charts/door": textwrap.dedent(DOOR)})
    pytester.makefile(".yaml", **{"charts/unused": textwrap.dedent(UNUSED)})
    pytester.makepyfile(test_plugin_load_only=LOAD_ONLY_SUITE)
    result, report = _report(pytester, where, "--statekit-cov-report=term")
    assert result.ret == 0, result.stdout.str()
    door = report["charts"]["door"]
    assert door["loaded"] is True
    assert [door[m]["covered"] for m in ("transition", "classification", "rejection")] == [0] * 3
    result.stdout.fnmatch_lines(["door*0/3   0.0%*0/9   0.0%*0/5   0.0%*"])
    assert "door (never loaded)" not in result.stdout.str()
    if where == "--statekit-cov":
        assert list(report["charts"]) == ["door"]
    else:
        assert report["charts"]["unused"]["loaded"] is False
        result.stdout.fnmatch_lines(["unused (never loaded)*"])


@pytest.mark.parametrize(
    ("paths", "charts"),
    [
        (["charts/door.yaml"], ["door"]),
        (["charts/unused.yaml"], ["unused"]),
        (["charts/door.yaml", "charts/unused.yaml"], ["door", "unused"]),
        (["charts", "charts/door.yaml"], ["door", "unused"]),  # a file named twice counts once
    ],
)
def test_paths_may_be_files_and_repeat(
    suite: pytest.Pytester, paths: list[str], charts: list[str]
) -> None:
    result, report = _report(suite, *(f"--statekit-cov={p}" for p in paths))
    assert result.ret == 0
    assert sorted(report["charts"]) == charts
