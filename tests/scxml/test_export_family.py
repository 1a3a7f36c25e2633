"""export-scxml of a chart that invokes others: each invoked chart inline in its
`<invoke>`, sends between them as `#_parent`/`#_<id>`, the chart set from the
chart's folder or `--chart`, and what psm cannot run the same refused by name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_process import statekit
from psm_machine import PsmMachine, freeze_psm_clock

from statekit.api import load
from statekit.testing import FamilySimulator

PARENT = """\
statechart: parent
context:
  n: {type: integer, default: 3}
  heard: {type: integer, default: 0}
events:
  ready: {n: integer}
  poke: {}
initial: waiting
states:
  waiting:
    invoke:
      - {id: w, chart: worker, input: {n: ctx.n + 1}}
    on:
      ready: {to: talking, do: [{assign: {heard: event.n}}]}
  talking:
    invoke:
      - {id: w2, chart: worker, input: {n: ctx.heard * 10}, output: {n: integer}}
    on:
      ready: {do: [{assign: {heard: event.n}}]}
      poke: {do: [{send: {event: go, to: w2}}]}
      done.invoke.w2: finished
  finished: {final: true}
"""
WORKER = """\
statechart: worker
context:
  n: {type: integer, default: 0}
events:
  go: {}
initial: start
states:
  start:
    entry:
      - send: {event: ready, to: parent, payload: {n: ctx.n}}
    on:
      go: end
    after:
      1h: end
  end:
    final: true
    output: {n: ctx.n}
"""


def _family(folder: Path, parent: str = PARENT, worker: str | None = WORKER) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "parent.yaml").write_text(parent, encoding="utf-8")
    if worker is not None:
        (folder / "worker.yaml").write_text(worker, encoding="utf-8")
    return folder / "parent.yaml"


def test_an_invoked_chart_is_written_inline_and_the_family_runs_the_same_in_psm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = _family(tmp_path)
    run = statekit("export-scxml", str(parent))
    assert run.returncode == 0, run.stderr
    text = run.stdout
    assert re.search(r'<invoke id="w">\s*<param name="n" expr="ctx_n \+ 1" />\s*<content>', text)
    assert text.count('<scxml xmlns="http://www.w3.org/2005/07/scxml"') == 3
    assert '<send event="ready" target="#_parent">' in text
    assert '<send event="go" target="#_w2" />' in text
    assert re.search(r'<donedata>\s*<param name="n" expr="n" />', text)

    # the worker's timer keeps psm's loop for it running until it ends (psm sends
    # done.invoke when that loop ends: at once for a child waiting with nothing queued)
    family = FamilySimulator([load(parent), load(tmp_path / "worker.yaml")])
    family.start("parent", "p")
    freeze_psm_clock(monkeypatch)
    machine = PsmMachine(text)
    machine.settle()
    for step in ("start", "poke"):
        if step == "poke":
            family.send("poke", to="p")
            machine.send("poke", {})
            machine.settle()
        root = family.member("p").state
        assert machine.leaves() == {"talking" if step == "start" else "finished"}
        assert root.configuration == {*machine.leaves()}
        assert root.context["heard"] == machine.data("heard") == 40


def test_an_invoked_chart_the_export_cannot_find_is_refused_by_name(tmp_path: Path) -> None:
    parent = _family(tmp_path, worker=None)
    run = statekit("export-scxml", str(parent))
    assert run.returncode == 2
    assert re.match(rf"^{re.escape(str(parent))}:12:9: error\[scxml\] ", run.stderr), run.stderr
    assert "'worker', which the export was not given" in run.stderr and "--chart" in run.stderr


def test_chart_names_an_invoked_chart_kept_elsewhere(tmp_path: Path) -> None:
    parent = _family(tmp_path / "orders", worker=None)
    _family(tmp_path / "shared")  # its own parent.yaml and worker.yaml
    worker = tmp_path / "shared" / "worker.yaml"
    run = statekit("export-scxml", str(parent), "--chart", str(worker))
    assert run.returncode == 0, run.stderr
    assert '<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0"' in run.stdout
    broken = tmp_path / "broken.yaml"
    broken.write_text("statechart: broken\ninitial: nowhere\nstates: {a: {}}\n", "utf-8")
    run = statekit("export-scxml", str(parent), "--chart", str(broken))
    assert run.returncode == 1 and "error[" in run.stderr and run.stdout == ""


REFUSED = {
    "another instance": (
        PARENT.replace("to: w2}", "to: {chart: worker, instance: \"'x'\"}}"),
        "a send to another instance by its ID",
    ),
    "done.invoke payload": (
        PARENT.replace(
            "done.invoke.w2: finished", "done.invoke.w2: {to: finished, if: event.n > 1}"
        ),
        "psm's done.invoke carries none of the child's <donedata>",
    ),
    "_event.origin": (
        PARENT.replace("ready: {to: talking,", "ready: {to: talking, if: _event.origin == 'w',"),
        "_event.origin in a chart that invokes or is invoked",
    ),
    "chart chosen by an expression": (
        PARENT.replace("{id: w, chart: worker,", "{id: w, chart: {by: ctx.n, cases: {3: worker}},"),
        "chooses its chart (not exported yet)",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_psm_cannot_run_the_same_in_a_family_is_refused_where_it_is(
    case: str, tmp_path: Path
) -> None:
    body, named = REFUSED[case]
    parent = _family(tmp_path, body)
    assert body != PARENT
    run = statekit("export-scxml", str(parent))
    assert run.returncode == 2, run.stderr
    assert re.match(rf"^{re.escape(str(parent))}:\d+:\d+: error\[scxml\] ", run.stderr)
    assert named in run.stderr, run.stderr
