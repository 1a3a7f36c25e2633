"""The cost of `now`: a chart that reads the step's clock next to the same chart reading a
payload timestamp instead (the workaround `now` replaces), measured in the same run.

Run: `python -m bench.clock_steps` from the repository root (`--runs N`, default 7).
Both charts open a ticket (an assign of the time), answer it under a guard over the
time elapsed, and reopen it, on every event; "now" sends each event with `now_ms`,
"payload" with the time as `event.at_ms` (no clock reading). Each run times both over
the same stream; rows show events/s, median over the runs (min-max), and the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart

STEPS = 60_000
T0 = 1_767_225_600_000

_CHART = """
statechart: ticket_{name}
context:
  opened_at: {{type: integer, default: 0}}
  late: {{type: boolean, default: false}}
events:
  OPEN: {{{fields}}}
  REPLY: {{{fields}}}
initial: closed
states:
  closed:
    on:
      OPEN: {{to: open, do: [{{assign: {{opened_at: {time}}}}}]}}
  open:
    on:
      REPLY:
        - {{to: closed, if: "{time} - ctx.opened_at <= 4h"}}
        - {{to: closed, do: [{{assign: {{late: true}}}}]}}
"""
NOW = _CHART.format(name="now", fields="", time="now")
PAYLOAD = _CHART.format(name="payload", fields="at_ms: integer", time="event.at_ms")


def _chart(text: str) -> Chart:
    ir = compile_source(text, "bench.yaml").chart
    assert ir is not None
    return Chart(ir)


def _rate(send: Callable[[object, str, int], object], chart: Chart) -> float:
    state = chart.start()
    began = time.process_time()
    for i in range(STEPS):
        event = "OPEN" if i % 2 == 0 else "REPLY"
        state = send(state, event, T0 + i * 1_000).state  # type: ignore[attr-defined]
    return STEPS / (time.process_time() - began)


def main(argv: list[str] | None = None) -> None:
    """Print events/s of both charts and their ratio, median (min-max) over the runs."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args(argv).runs
    now_chart, payload_chart = _chart(NOW), _chart(PAYLOAD)

    def by_clock(state: object, event: str, at: int) -> object:
        return now_chart.send(state, event, now_ms=at)  # type: ignore[arg-type]

    def by_payload(state: object, event: str, at: int) -> object:
        return payload_chart.send(state, event, {"at_ms": at})  # type: ignore[arg-type]

    for send, chart in ((by_clock, now_chart), (by_payload, payload_chart)):  # agree, warm up
        assert _rate(send, chart) > 0
    clock_rates, payload_rates, ratios = [], [], []
    for _ in range(runs):
        a, b = _rate(by_clock, now_chart), _rate(by_payload, payload_chart)
        clock_rates.append(a)
        payload_rates.append(b)
        ratios.append(a / b)

    def row(values: list[float], scale: float = 1e-3, unit: str = "k", digits: int = 1) -> str:
        m, low, high = (v * scale for v in (statistics.median(values), min(values), max(values)))
        return f"{m:,.{digits}f}{unit} ({low:,.{digits}f}-{high:,.{digits}f})"

    print(f"{'what':<44} events/s")
    print(f"{'now (the step clock, now_ms)':<44} {row(clock_rates)}")
    print(f"{'payload timestamp (event.at_ms)':<44} {row(payload_rates)}")
    print(f"{'now / payload':<44} {row(ratios, 1.0, 'x', 2)}")


if __name__ == "__main__":
    main()
