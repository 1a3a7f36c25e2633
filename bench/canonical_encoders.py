"""The canonical JSON encoders on statekit's own records: the standard library's (what
statekit used before), orjson and msgspec as they come, and `canonical_json` (orjson with
the standard library where their bytes would differ); and the two decoders on the texts.

Run: `python -m bench.canonical_encoders` from the repository root (`--runs N`, default
7). The records are what the runner encodes for each event of the task chart's stream
(`bench._streams.task_stream`) and of the counter chart of `bench/runner_throughput.py`:
the payload, the evidence (compact form), the context; each run times every encoder over
the same records, interleaved. Rows show µs per record, median over the runs (min-max),
the ratio to the standard library's in the same run, and how many records each encoder
writes with the standard library's bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import msgspec
import orjson

from bench._streams import task_stream
from bench.engine_core import compiled
from bench.hand_task import TASK_CHART
from bench.runner_throughput import counter
from statekit.compiler.canonical import canonical_json
from statekit.engine.chart import Chart
from statekit.runner.evidence import evidence_json

Encode = Callable[[Any], Any]

_STDLIB = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
_MAKE: Any = json.encoder.c_make_encoder  # type: ignore[attr-defined]
_C = _MAKE(None, _STDLIB.default, json.encoder.encode_basestring, None, ":", ",", True, False, True)


def stdlib(value: Any) -> str:
    """statekit's encoder before orjson: the standard library's C encoder, built once."""
    return "".join(_C(value, 0))


def json_dumps(value: Any) -> str:
    """`json.dumps` with the same options (a new encoder per call, as the issue timed it)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


_MSGSPEC = msgspec.json.Encoder(order="sorted")


def orjson_raw(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


ENCODERS: dict[str, Encode] = {
    "json.dumps(sort_keys=True, ...)": json_dumps,
    "standard library, C encoder built once (before)": stdlib,
    "orjson.dumps(OPT_SORT_KEYS)": orjson_raw,
    "msgspec Encoder(order='sorted')": _MSGSPEC.encode,
    "canonical_json (orjson + fallbacks, now)": canonical_json,
}
DECODERS: dict[str, Encode] = {"json.loads": json.loads, "orjson.loads": orjson.loads}


def records(chart: Chart, stream: Sequence[tuple[str, Any, str]]) -> dict[str, list[Any]]:
    """The values the runner encodes per event: payload, evidence, context."""
    out: dict[str, list[Any]] = {"payload": [], "evidence": [], "context": []}
    state = chart.start()
    for event, payload, event_id in stream:
        result = chart.send(state, event, payload, event_id=event_id, now_ms=1_000)
        out["payload"].append(dict(payload or {}))
        out["evidence"].append(json.loads(evidence_json(result, None, event_id)))
        out["context"].append(dict(result.state.context))
        state = chart.start() if result.state.is_final else result.state
    return out


def per_record_us(encode: Encode, values: Sequence[Any]) -> float:
    start = time.perf_counter()
    for value in values:
        encode(value)
    return (time.perf_counter() - start) / len(values) * 1e6


def same_bytes(encode: Encode, values: Sequence[Any]) -> str:
    agree = 0
    for value in values:
        text = encode(value)
        agree += (text if isinstance(text, str) else text.decode()) == stdlib(value)
    return f"{agree}/{len(values)}"


def spread(values: Sequence[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def table(kind: str, values: list[Any], runs: int) -> None:
    timed: dict[str, list[float]] = {name: [] for name in ENCODERS}
    ratio: dict[str, list[float]] = {name: [] for name in ENCODERS}
    texts = [stdlib(v) for v in values]
    loads: dict[str, list[float]] = {name: [] for name in DECODERS}
    for _ in range(runs):
        base = 0.0
        for name, encode in ENCODERS.items():
            timed[name].append(per_record_us(encode, values))
            if encode is stdlib:
                base = timed[name][-1]
        for name in ENCODERS:
            ratio[name].append(timed[name][-1] / base)
        for name, decode in DECODERS.items():
            loads[name].append(per_record_us(decode, texts))
    print(f"\n{kind}: {len(values)} records, {statistics.mean(map(len, texts)):.0f} B on average")
    print("| encoder | µs per record | ratio to before | same bytes as before |")
    print("|---|---|---|---|")
    for name, encode in ENCODERS.items():
        print(f"| {name} | {spread(timed[name])} | {spread(ratio[name])} "
              f"| {same_bytes(encode, values)} |")  # fmt: skip
    for name in DECODERS:
        print(f"| decode: {name} | {spread(loads[name])} | | |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    task = records(compiled(TASK_CHART.read_text(), "task"), task_stream(500))
    count = records(counter(), [("Incr", {"by": 1}, f"e-{n}") for n in range(2000)])
    print("load average " + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    for kind, values in task.items():
        table(f"task chart, {kind}", values, args.runs)
    for kind, values in count.items():
        table(f"counter chart, {kind}", values, args.runs)


if __name__ == "__main__":
    main()
