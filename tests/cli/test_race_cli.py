"""`statekit races` as a user runs it: text, the JSON shape, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chart_helpers import RACE_CLASSES_YAML
from cli_process import statekit

from statekit.api import load

ROOT = Path(__file__).resolve().parents[2]
POLICIES = ROOT / "tests" / "analysis" / "fixtures" / "races"
LESSON = """\
statechart: lesson
events: {TaskCompleted: {}, TaskCancelled: {}}
producers: {worker: [TaskCompleted], user: [TaskCancelled]}
initial: running
states:
  running: {on: {TaskCompleted: completed, TaskCancelled: cancelled}}
  completed: {final: true}
  cancelled: {final: true}
"""
DECIDED = LESSON + (
    "races: {complete_vs_cancel: {events: [TaskCancelled, TaskCompleted], "
    "decision: First to commit wins.}}\n"
)


def write(tmp_path: Path, text: str, name: str = "chart.yaml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_an_undecided_race_exits_1_and_shows_both_orders(tmp_path: Path) -> None:
    done = statekit("races", write(tmp_path, LESSON))
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1:8] == [
        "  TaskCompleted (worker) and TaskCancelled (user) in {running}: race, UNDECIDED",
        "    the orders differ in configuration",
        "    TaskCompleted then TaskCancelled: TaskCompleted APPLIED, then TaskCancelled "
        "REJECTED TERMINAL_STATE → {completed}",
        "      replay: TaskCompleted {}, TaskCancelled {}",
        "    TaskCancelled then TaskCompleted: TaskCancelled APPLIED, then TaskCompleted "
        "REJECTED TERMINAL_STATE → {cancelled}",
        "      replay: TaskCancelled {}, TaskCompleted {}",
        "    path: (the start)",
    ]
    assert lines[-1] == (
        "  1 pair(s) of events order-sensitive (1 race, 0 info), 1 undecided, 0 convergent"
    )


def test_the_json_shape(tmp_path: Path) -> None:
    done = statekit("races", write(tmp_path, DECIDED), "--format", "json")
    assert done.returncode == 0, done.stderr
    (race,) = json.loads(done.stdout)
    assert race == {
        "chart": "lesson",
        "file": str(tmp_path / "chart.yaml"),
        "events": ["TaskCompleted", "TaskCancelled"],
        "producers": ["worker", "user"],
        "class": "race",
        "difference": "configuration",
        "configuration": ["running"],
        "path": [],
        "configurations": 1,
        "elsewhere": [],
        "decided": True,
        "decision": {"name": "complete_vs_cancel", "text": "First to commit wins."},
        "orders": [
            {
                "events": ["TaskCompleted", "TaskCancelled"],
                "answers": [
                    {"event": "TaskCompleted", "status": "APPLIED", "reason": None},
                    {"event": "TaskCancelled", "status": "REJECTED", "reason": "TERMINAL_STATE"},
                ],
                "configuration": ["completed"],
                "assumptions": [],
                "replay": [
                    {"event": "TaskCompleted", "payload": {}},
                    {"event": "TaskCancelled", "payload": {}},
                ],
            },
            {
                "events": ["TaskCancelled", "TaskCompleted"],
                "answers": [
                    {"event": "TaskCancelled", "status": "APPLIED", "reason": None},
                    {"event": "TaskCompleted", "status": "REJECTED", "reason": "TERMINAL_STATE"},
                ],
                "configuration": ["cancelled"],
                "assumptions": [],
                "replay": [
                    {"event": "TaskCancelled", "payload": {}},
                    {"event": "TaskCompleted", "payload": {}},
                ],
            },
        ],
        "assumptions": [],
    }


def test_several_files_in_one_list_and_assumptions_named() -> None:
    files = [str(POLICIES / "completion_wins.yaml"), "machines/payment.yaml"]
    done = statekit("races", *files, "--format", "json")
    assert done.returncode == 1  # payment.yaml decides none of its races
    data = json.loads(done.stdout)
    assert {item["chart"] for item in data} == {"completion_wins", "payment"}
    assert all(len(item["orders"]) == 2 for item in data)
    assert all(item["orders"][0]["events"] == item["events"] for item in data)
    assert any("guard positive_amount" in a for item in data for a in item["assumptions"])


def test_every_race_decided_exits_0() -> None:
    done = statekit("races", *sorted(str(p) for p in POLICIES.glob("*.yaml")))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "UNDECIDED" not in done.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("races",),
        ("races", "missing.yaml"),
        ("races", "machines/task.yaml", "--format", "xml"),
        ("races", "machines/task.yaml", "--max-configurations", "0"),
    ],
    ids=["no file", "missing file", "unknown format", "bad bound"],
)
def test_usage_errors_exit_2(args: tuple[str, ...]) -> None:
    done = statekit(*args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_a_chart_that_does_not_compile_exits_1_with_its_diagnostics(tmp_path: Path) -> None:
    done = statekit("races", write(tmp_path, LESSON.replace("worker: [", "worker: [Nope, ")))
    assert done.returncode == 1
    assert "unknown-event" in done.stderr and "'Nope'" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_exploration_past_its_bound_exits_1_saying_so(tmp_path: Path) -> None:
    done = statekit("races", write(tmp_path, DECIDED), "--max-configurations", "1")
    assert done.returncode == 1
    assert "races past it are not listed" in done.stderr


def test_each_order_of_a_race_replays_through_the_engine_with_its_payloads() -> None:
    """`replay` gives the path to the race's configuration and the pair in each order,
    each with a payload: sent to the chart, they end as the order is printed."""
    done = statekit("races", "machines/payment.yaml", "--format", "json")
    chart = load(ROOT / "machines" / "payment.yaml")
    replayed = 0
    for item in json.loads(done.stdout):
        for order in item["orders"]:
            if any(step["payload"] is None for step in order["replay"]):
                continue
            state = chart.start()
            results = []
            for step in order["replay"]:
                result = chart.send(state, step["event"], step["payload"])
                results.append(result)
                state = result.state
            answers = [
                {"event": e, "status": r.status.value, "reason": r.reason}
                for e, r in zip(order["events"], results[-2:], strict=True)
            ]
            assert answers == order["answers"]
            assert list(state.leaves) == order["configuration"]
            replayed += 1
    assert replayed >= 1


def test_a_folder_names_its_charts_as_for_lint(tmp_path: Path) -> None:
    done = statekit("races", str(POLICIES), "--format", "json")
    charts = {Path(item["file"]).name for item in json.loads(done.stdout)}
    assert charts and charts <= {p.name for p in POLICIES.glob("*.yaml")}
    assert len(charts) > 1
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = statekit("races", str(empty))
    assert refused.returncode == 2
    assert "no chart files in this folder" in refused.stderr


CLASSES = RACE_CLASSES_YAML


def test_all_lists_convergent_pairs_and_json_gives_each_class(tmp_path: Path) -> None:
    # A and C both move `left` to l1 (info: the same end, the later one is rejected);
    # B moves the other region (convergent with both).
    chart = write(tmp_path, CLASSES)
    plain = statekit("races", chart)
    assert plain.returncode == 0, plain.stderr  # an undecided info pair does not fail
    assert "A (x) and C (z) in {left.l0, right.r0}: info, UNDECIDED" in plain.stdout
    assert "convergent (no decision needed)" not in plain.stdout
    assert plain.stdout.splitlines()[-1] == (
        "  1 pair(s) of events order-sensitive (0 race, 1 info), 1 undecided, 2 convergent"
    )
    every = statekit("races", chart, "--all", "--format", "json")
    classes = {
        tuple(r["events"]): (r["class"], r["configurations"]) for r in json.loads(every.stdout)
    }
    assert classes == {
        ("A", "C"): ("info", 2),
        ("A", "B"): ("convergent", 3),
        ("B", "C"): ("convergent", 3),
    }
    text = statekit("races", chart, "--all")
    assert "A (x) and B (y) in {left.l0, right.r0}: convergent (no decision needed)" in text.stdout


INFO_ONLY = """\
statechart: info_only
events: {Finished: {}, Closed: {}}
producers: {worker: [Finished], user: [Closed]}
initial: open
states:
  open: {on: {Finished: closed, Closed: closed}}
  closed: {final: true, reject: {Finished: ALREADY_CLOSED, Closed: ALREADY_CLOSED}}
"""


def test_an_undecided_info_pair_is_listed_but_does_not_fail(tmp_path: Path) -> None:
    """Both orders end in `closed`; only who is answered ALREADY_CLOSED differs: lint
    reports that at severity info, and `races` exits 0 on it as lint does."""
    chart = tmp_path / "info.yaml"
    chart.write_text(INFO_ONLY)
    done = statekit("races", str(chart), "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    (pair,) = json.loads(done.stdout)
    assert (pair["class"], pair["decided"]) == ("info", False)
    linted = statekit("lint", str(chart), "--format", "json")
    assert linted.returncode == 0
    assert {d["severity"] for d in json.loads(linted.stdout)["diagnostics"]} == {"info"}
    # a pair of class race, undecided, still fails
    raced = tmp_path / "race.yaml"
    raced.write_text(LESSON)
    assert statekit("races", str(raced)).returncode == 1


def test_races_takes_the_memory_bound_as_explain_does(tmp_path: Path) -> None:
    chart = tmp_path / "lesson.yaml"
    chart.write_text(LESSON)
    assert statekit("races", str(chart), "--max-memory", "64").returncode == 1
    assert statekit("races", str(chart), "--max-memory", "0").returncode == 2


def test_lint_race_findings_carry_checked_replays_and_a_trace(tmp_path: Path) -> None:
    chart = tmp_path / "lesson.yaml"
    chart.write_text(LESSON)
    found = json.loads(statekit("lint", str(chart), "--format", "json").stdout)
    (race,) = [d for d in found["diagnostics"] if d["slug"] == "undecided-race"]
    assert [n for n in race["notes"] if n.startswith("  replay: ")], race["notes"]
    assert race["trace"][0]["event"] is None  # the path from the start, as data
