"""undefined-pair on parallel charts: one finding per event and owning region.

The order chart (tests/charts/order.yaml) has five regions that classify the
events they own with region-level `reject:` maps, and one deliberately
unclassified event (SMS_SENT, owned by `notification`). Variants of it remove
entries from those maps: each missing event must give exactly one finding,
placed in and naming the region that owns it, the same on every run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from analysis_charts import chart_of, findings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from statekit.compiler.diagnostics import Diagnostic

ROOT = Path(__file__).resolve().parents[2]
ORDER = ROOT / "tests" / "charts" / "order.yaml"

# (event, the region that owns it, the region-level entry that classifies it)
OWNED = [
    ("PAY_FAIL", "payment", "      PAY_FAIL: PAYMENT_NOT_PROCESSING\n"),
    ("PAY_START", "payment", "      PAY_START: PAYMENT_IN_PROGRESS\n"),
    ("PAY_SUCCESS", "payment", "      PAY_SUCCESS: PAYMENT_NOT_PROCESSING\n"),
    ("SHIP", "fulfilment", "      SHIP: ALREADY_SHIPPED\n"),
    ("DELIVER", "fulfilment", "      DELIVER: NOT_SHIPPED\n"),
    ("REFUND_DONE", "refund", "      REFUND_DONE: NO_REFUND_REQUESTED\n"),
    ("REFUND_REQUEST", "refund", "      REFUND_REQUEST: REFUND_IN_PROGRESS\n"),
    ("INVOICE_ISSUE", "invoice", "      INVOICE_ISSUE: ALREADY_ISSUED\n"),
    ("INVOICE_VOID", "invoice", "      INVOICE_VOID: NOT_ISSUED\n"),
    ("EMAIL_SENT", "notification", "    reject:\n      EMAIL_SENT: ALREADY_EMAILED\n"),
]


def _undefined(tmp_path: Path, text: str) -> list[Diagnostic]:
    return findings(tmp_path, text, "undefined-pair")


def _event(finding: Diagnostic) -> str:
    return finding.message.split()[1]


def _owner(finding: Diagnostic) -> str:
    (note,) = [n for n in finding.notes if " belongs to " in n]
    return note.split("'")[1]


def _region_of_location(finding: Diagnostic, text: str) -> str:
    """The top-level region whose block holds the finding's line."""
    region = ""
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("  ") and not line.startswith("   ") and line.rstrip().endswith(":"):
            region = line.strip().rstrip(":")
        if number == finding.span.line:
            return region
    raise AssertionError(finding.span)


def test_the_order_chart_has_one_finding_for_its_one_unclassified_event(tmp_path: Path) -> None:
    text = ORDER.read_text(encoding="utf-8")
    (finding,) = _undefined(tmp_path, text)
    assert finding.message == (
        "event SMS_SENT is not classified under 'notification': no transition, `already` or "
        "`reject` answers it there (UNDEFINED_TRANSITION)"
    )
    assert _owner(finding) == "notification"
    assert _region_of_location(finding, text) == "notification"
    count = finding.notes[0]
    assert count.startswith("UNDEFINED_TRANSITION in ")
    assert "reachable configurations with 'notification' active, for example in:" in count
    examples = [n for n in finding.notes if n.startswith("  {")]
    assert 1 <= len(examples) <= 3
    assert all("notification.emailed" not in e for e in examples)
    assert "path from the initial configuration:" in finding.notes
    assert any(
        n.startswith("classify it at 'notification': `reject: {SMS_SENT: REASON}`")
        for n in finding.notes
    )


@pytest.mark.parametrize(("event", "region", "entry"), OWNED, ids=[e for e, _r, _x in OWNED])
def test_an_event_missing_from_its_region_level_reject_gives_one_finding_there(
    tmp_path: Path, event: str, region: str, entry: str
) -> None:
    text = ORDER.read_text(encoding="utf-8")
    assert entry in text
    text = text.replace(entry, "", 1)
    chart_of(text)
    found = _undefined(tmp_path, text)
    by_event = {_event(f): f for f in found}
    assert len(by_event) == len(found)
    assert set(by_event) == {event, "SMS_SENT"}
    assert _owner(by_event[event]) == region
    assert _region_of_location(by_event[event], text) == region


def test_every_region_level_entry_removed_gives_one_finding_per_event(tmp_path: Path) -> None:
    text = re.sub(
        r"^    reject:\n(?:      .*\n)+", "", ORDER.read_text(encoding="utf-8"), flags=re.M
    )
    chart_of(text)
    found = _undefined(tmp_path, text)
    assert sorted((_event(f), _owner(f)) for f in found) == sorted(
        [(e, r) for e, r, _x in OWNED] + [("SMS_SENT", "notification")]
    )


def test_an_event_whose_region_is_not_active_is_grouped_apart(tmp_path: Path) -> None:
    found = _undefined(
        tmp_path,
        """
        statechart: nested
        events: {GO: {}, BACK: {}, T: {}}
        initial: idle
        states:
          idle: {on: {GO: busy}}
          busy:
            parallel: true
            on: {BACK: idle}
            states:
              left: {initial: l1, states: {l1: {on: {T: l2}}, l2: {reject: {T: DONE}}}}
              right: {initial: r1, states: {r1: {}}}
        """,
    )
    assert [(_event(f), f.message.split("'")[1]) for f in found] == [
        ("BACK", "idle"),
        ("T", "idle"),
        ("GO", "busy"),
    ]
    (outside,) = [f for f in found if _event(f) == "T"]
    assert "T belongs to 'busy.left', not active here" in outside.notes


@pytest.mark.parametrize("seed", ["1", "2", "3"])
def test_findings_and_fingerprints_are_the_same_on_every_run(tmp_path: Path, seed: str) -> None:
    text = ORDER.read_text(encoding="utf-8")
    for _event_name, _region, entry in OWNED[::2]:
        text = text.replace(entry, "", 1)
    chart = tmp_path / "order.yaml"
    chart.write_text(text, encoding="utf-8")

    def run(hash_seed: str) -> object:
        done = subprocess.run(
            [sys.executable, "-m", "statekit.cli", "lint", "--format", "sarif", str(chart)],
            capture_output=True,
            text=True,
            check=False,
            cwd=tmp_path,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
        )
        assert done.returncode == 1, done.stderr
        results = json.loads(done.stdout)["runs"][0]["results"]
        return [(r["message"]["text"], r["partialFingerprints"]) for r in results]

    assert run(seed) == run("0")


def test_an_active_owning_region_wins_over_the_root(tmp_path: Path) -> None:
    (finding,) = _undefined(
        tmp_path,
        """
        statechart: both
        events: {GO: {}, BACK: {}, T: {}}
        initial: idle
        states:
          idle: {on: {GO: busy, T: idle}, reject: {BACK: IDLE}}
          busy:
            parallel: true
            on: {BACK: idle}
            reject: {GO: BUSY}
            states:
              left: {initial: l1, states: {l1: {on: {T: l2}}, l2: {}}}
              right: {initial: r1, states: {r1: {}}}
        """,
    )
    assert finding.message.startswith("event T is not classified under 'busy.left.l2'")
    assert _owner(finding) == "busy.left"


def _sms_sent_fingerprint(tmp_path: Path, text: str) -> tuple[str, dict[str, str]]:
    chart = tmp_path / "order.yaml"
    chart.write_text(text, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "statekit.cli", "lint", "--format", "sarif", str(chart)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    (result,) = [
        r
        for r in json.loads(done.stdout)["runs"][0]["results"]
        if r["message"]["text"].startswith("event SMS_SENT ")
    ]
    return result["message"]["text"], result["partialFingerprints"]


def test_the_fingerprint_survives_growth_elsewhere_in_the_chart(tmp_path: Path) -> None:
    """Another region gains a state (more configurations, other counts, lines shifted):
    the unclassified SMS_SENT is the same finding, with the same fingerprint."""
    text = ORDER.read_text(encoding="utf-8")
    grown = "# a comment that moves every line\n" + text.replace(
        "  SMS_SENT: {}\n", "  SMS_SENT: {}\n  INVOICE_HOLD: {}\n"
    ).replace(
        "        on: {INVOICE_ISSUE: issued}\n",
        "        on: {INVOICE_ISSUE: issued, INVOICE_HOLD: held}\n"
        "      held:\n        on: {INVOICE_ISSUE: issued}\n",
    ).replace(
        "      INVOICE_VOID: NOT_ISSUED\n",
        "      INVOICE_VOID: NOT_ISSUED\n      INVOICE_HOLD: NOT_DRAFT\n",
    )
    before_text, before = _sms_sent_fingerprint(tmp_path, text)
    after_text, after = _sms_sent_fingerprint(tmp_path, grown)
    assert before_text != after_text  # the count in the notes changed
    assert before == after


@st.composite
def _region_charts(draw: st.DrawFn) -> tuple[str, dict[str, str]]:
    """A parallel chart of 2-4 regions, each a chain of 2-3 states advanced by events it
    owns and classifies with a region-level `reject:` map, minus a random set of those
    entries; and the events left out, each with its region."""
    regions = draw(st.integers(min_value=2, max_value=4))
    lengths = [draw(st.integers(min_value=2, max_value=3)) for _ in range(regions)]
    owned = {f"E{r}_{i}": f"r{r}" for r in range(regions) for i in range(lengths[r] - 1)}
    dropped = draw(st.sets(st.sampled_from(sorted(owned))))
    lines = [
        "statechart: generated",
        "events: {" + ", ".join(f"{e}: {{}}" for e in owned) + "}",
        "parallel: true",
        "states:",
    ]
    for r, length in enumerate(lengths):
        kept = [f"E{r}_{i}: LATE_{r}_{i}" for i in range(length - 1) if f"E{r}_{i}" not in dropped]
        lines += [f"  r{r}:", "    initial: s0"]
        if kept:
            lines.append("    reject: {" + ", ".join(kept) + "}")
        lines.append("    states:")
        for i in range(length):
            if i == length - 1:
                lines.append(f"      s{i}: {{final: true}}")
            else:
                lines.append(f"      s{i}: {{on: {{E{r}_{i}: r{r}.s{i + 1}}}}}")
    return "\n".join(lines) + "\n", {e: owned[e] for e in dropped}


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_region_charts())
def test_each_unclassified_event_of_a_region_gives_one_finding_naming_it(
    tmp_path: Path, generated: tuple[str, dict[str, str]]
) -> None:
    text, dropped = generated
    chart_of(text)
    found = _undefined(tmp_path, text)
    assert sorted((_event(f), _owner(f)) for f in found) == sorted(dropped.items())
    for finding in found:
        place = finding.message.split("'")[1]
        assert place.split(".")[0] == dropped[_event(finding)]
