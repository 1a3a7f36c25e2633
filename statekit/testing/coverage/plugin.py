"""The pytest plugin (entry point `pytest11`): statekit coverage of a test run.

    pytest --statekit-cov                      # every chart loaded during the run
    pytest --statekit-cov=machines/            # the charts under a path, loaded or not
    pytest --statekit-cov=machines --statekit-cov-report=json:cov.json \\
           --statekit-cov-report=html:build/cov --statekit-cov-fail-under=transition:100

Off unless `--statekit-cov` is given; then an engine observer records every
classified result (`Chart.send`, `Chart.initialize`, the durable runner's
`apply`, anything else that sends through a `Chart`) and an engine watcher every
chart made, until the run ends. Under pytest-xdist each worker records its own
tests and sends its recordings to the controller when it finishes; the
controller merges them (`workers`) and reports on the whole run. This module
imports the rest of statekit only when the plugin is on.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from statekit.compiler.ir import CompiledChart
    from statekit.testing.coverage.metrics import ChartCoverage
    from statekit.testing.coverage.recorder import Recorder

REPORT_KINDS = ("term", "json", "html")
WORKER_OUTPUT = "statekit_cov"
"""The key of a pytest-xdist worker's `workeroutput` that carries its recordings."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """The plugin's options."""
    group = parser.getgroup("statekit-cov", "statekit chart coverage")
    group.addoption(
        "--statekit-cov",
        action="append",
        nargs="?",
        const=True,
        default=None,
        metavar="PATH",
        dest="statekit_cov",
        help="measure chart coverage: of every chart loaded (no PATH), or of the charts "
        "under PATH (repeatable; charts never loaded are reported at 0%%)",
    )
    group.addoption(
        "--statekit-cov-report",
        action="append",
        default=[],
        metavar="TYPE",
        dest="statekit_cov_report",
        help="report type: term (default), json:PATH, html:DIR (repeatable)",
    )
    group.addoption(
        "--statekit-cov-fail-under",
        default=None,
        metavar="METRIC:PCT,...",
        dest="statekit_cov_fail_under",
        help="fail the run when a chart's coverage is below the bound, e.g. "
        "transition:100,rejection:90,race:100",
    )


class CoveragePlugin:
    """The active plugin: installs the recorder, reports and checks at the end."""

    def __init__(self, config: pytest.Config) -> None:
        from statekit.testing.coverage.recorder import Recorder
        from statekit.testing.coverage.report import ThresholdError, charts_under, parse_thresholds

        values: list[str | bool] = config.getoption("statekit_cov")
        paths = [str(v) for v in values if v is not True]
        self.paths: list[str] | None = paths or None
        self.reports: list[tuple[str, str | None]] = []
        for text in config.getoption("statekit_cov_report") or ["term"]:
            kind, _, where = text.partition(":")
            if kind not in REPORT_KINDS or (kind != "term" and not where):
                raise pytest.UsageError(
                    f"--statekit-cov-report: {text!r} is not term, json:PATH or html:DIR"
                )
            if where and kind == "html" and Path(where).exists() and not Path(where).is_dir():
                raise pytest.UsageError(
                    f"--statekit-cov-report: {text!r}: {where} exists and is not a folder "
                    "(html: names the folder the report is written into)"
                )
            if where and kind == "json" and Path(where).is_dir():
                raise pytest.UsageError(
                    f"--statekit-cov-report: {text!r}: {where} is a folder (json: names a file)"
                )
            self.reports.append((kind, where or None))
        bounds = config.getoption("statekit_cov_fail_under")
        try:
            self.thresholds = parse_thresholds(bounds) if bounds else {}
        except ThresholdError as exc:
            raise pytest.UsageError(str(exc)) from None
        for path in self.paths or ():
            if not Path(path).exists():
                raise pytest.UsageError(f"--statekit-cov: {path!r} does not exist")
        # with paths, only their charts are recorded (the suite may load thousands)
        self.measured: dict[str, CompiledChart] = charts_under(self.paths or ())
        self.recorder: Recorder = Recorder(None if self.paths is None else frozenset(self.measured))
        self.charts: dict[str, ChartCoverage] = {}
        self.notes: list[str] = []
        self.failed: list[str] = []
        self.written: list[str] = []
        self.failed_reports: list[str] = []
        # on a pytest-xdist worker: where its recordings go (the controller reports)
        self.worker_output: dict[str, Any] | None = getattr(config, "workeroutput", None)
        self.merge_notes: list[str] = []
        self.command = shlex.join(["pytest", *config.invocation_params.args])
        """The command of the run, as the HTML report's stamp shows it."""

    def start(self) -> None:
        """Install the recorder as an engine observer and chart watcher."""
        from statekit.engine import observers

        observers.install(self.recorder)
        observers.watch(self.recorder.loaded)

    def stop(self) -> None:
        """Uninstall it."""
        from statekit.engine import observers

        observers.uninstall(self.recorder)
        observers.unwatch(self.recorder.loaded)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """pytest-xdist, on the controller: merge a finished worker's recordings."""
        from statekit.testing.coverage.workers import merge

        output = getattr(node, "workeroutput", None) or {}
        text = output.get(WORKER_OUTPUT)
        if isinstance(text, str):
            self.merge_notes += merge(self.recorder, text, self.measured)
        else:
            name = output.get("workerid", getattr(node, "gateway", None))
            self.merge_notes.append(
                f"statekit coverage: worker {name} ended without its recordings "
                "(it crashed?): the numbers leave its tests out"
            )

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Measure, write the reports, check the bounds (a failing bound fails the run);
        on a pytest-xdist worker, hand the recordings over instead."""
        from statekit.testing.coverage.html_frame import Stamp
        from statekit.testing.coverage.html_report import write_html
        from statekit.testing.coverage.report import collect, failures, to_json

        self.stop()
        if self.worker_output is not None:
            from statekit.testing.coverage.workers import recordings

            self.worker_output[WORKER_OUTPUT] = recordings(self.recorder)
            return
        self.charts, self.notes = collect(self.recorder, self.paths)
        self.notes = [*self.merge_notes, *self.notes]
        for kind, where in self.reports:
            try:
                if kind == "json" and where is not None:
                    Path(where).parent.mkdir(parents=True, exist_ok=True)
                    Path(where).write_text(json.dumps(to_json(self.charts), indent=2) + "\n")
                    self.written.append(f"JSON report written to {where}")
                elif kind == "html" and where is not None:
                    stamp = Stamp.now(self.command)
                    written = write_html(self.charts, where, stamp)
                    self.written.append(f"HTML report written to {written}")
            except OSError as exc:  # made unwritable during the run: say so, fail the run
                self.failed_reports.append(f"{kind} report not written to {where}: {exc}")
        self.failed = failures(self.charts, self.thresholds)
        if (self.failed or self.failed_reports) and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """The table, the notes, and why the run failed (nothing on a worker)."""
        from statekit.testing.coverage.report import terminal_lines

        if self.worker_output is not None:
            return
        terminalreporter.write_sep("-", "statekit coverage")
        if any(kind == "term" for kind, _ in self.reports):
            for line in terminal_lines(self.charts):
                terminalreporter.write_line(line)
        for line in [*self.notes, *self.written]:
            terminalreporter.write_line(line)
        for line in self.failed_reports:
            terminalreporter.write_line(f"FAIL: {line}", red=True)
        if self.failed:
            terminalreporter.write_line("FAIL: statekit coverage below --statekit-cov-fail-under:")
            for line in self.failed:
                terminalreporter.write_line(f"  {line}", red=True)
        elif self.thresholds:
            bounds = ", ".join(f"{k} {v:g}%" for k, v in self.thresholds.items())
            terminalreporter.write_line(f"statekit coverage reached every bound ({bounds})")


def pytest_configure(config: pytest.Config) -> None:
    """Turn the plugin on when `--statekit-cov` was given."""
    if not config.getoption("statekit_cov", None):
        return
    plugin = CoveragePlugin(config)
    config.pluginmanager.register(plugin, "statekit-coverage")
    plugin.start()


def pytest_unconfigure(config: pytest.Config) -> None:
    """Make sure the observer is gone (also when the run ended early)."""
    plugin = config.pluginmanager.get_plugin("statekit-coverage")
    if isinstance(plugin, CoveragePlugin):
        plugin.stop()
