"""`statekit diff` reports exactly the configurations that `statekit migrate --dry-run`
strands, timers included: a table of chart-version pairs (a timer re-timed, a timer
named, a named timer re-timed, a state holding a timer renamed, a context field a
`delay:` reads renamed, a region added (entered by default or by `enter:`, at top level
or inside one state, with a timer)), each without and with a `migrations:` mapping.
For every pair an instance is put in each reachable configuration of the old version
(on SQLite and on PostgreSQL); the configurations the dry run strands must be the ones
`diff` lists, each with a path that reaches it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_process import statekit as statekit_cli

import statekit

OLD = """
statechart: sub
version: 1
context: {grace_ms: {type: integer, default: 604800000}}
events: {LAPSE: {}, PAY: {}, SUSPEND: {}}
initial: entitlement
states:
  entitlement:
    initial: active
    states:
      active: {on: {LAPSE: grace}}
      grace:
        on: {PAY: active, SUSPEND: suspended}
        after: {7d: suspended}
      suspended: {on: {PAY: active}}
"""

PATHS = {("entitlement.active",): [], ("entitlement.grace",): ["LAPSE"]}
PATHS[("entitlement.suspended",)] = ["LAPSE", "SUSPEND"]

NAMED = OLD.replace("after: {7d: suspended}", "after: [{id: grace, delay: 7d, to: suspended}]")
BY_CONTEXT = OLD.replace("after: {7d: suspended}", "after: [{delay: ctx.grace_ms, to: suspended}]")


def _v2(text: str, *, migration: str = "") -> str:
    head = "version: 2\n" + (f"migrations:\n  - from: 1\n{migration}" if migration else "")
    return text.replace("version: 1\n", head)


REGION = """
parallel: true
states:
  billing:
    initial: open
    states: {open: {}, dunning: {after: {3d: open}}}
  entitlement:
    initial: active"""


def _with_region(text: str) -> str:
    """`text` with a `billing` region beside `entitlement` (its `dunning` state timed)."""
    return text.replace(
        "\ninitial: entitlement\nstates:\n  entitlement:\n    initial: active", REGION
    )


def _regions_in_grace(text: str) -> str:
    """`text` with two regions inside `grace` (a timer in the one entered by default)."""
    return text.replace(
        "        after: {7d: suspended}\n",
        "        after: {7d: suspended}\n"
        "        parallel: true\n"
        "        states:\n"
        "          notice:\n"
        "            initial: due\n"
        "            states: {due: {after: {1d: sent}}, sent: {}}\n"
        "          hold: {initial: none, states: {none: {}}}\n",
    )


@dataclass(frozen=True)
class Pair:
    old: str
    new: str
    stranded: frozenset[tuple[str, ...]]
    """What both must find (a check that the table means what it says)."""
    entered: frozenset[str] = frozenset()
    """States every instance the dry run migrates enters (`mapped_configuration`)."""


GRACE = frozenset({("entitlement.grace",)})
EVERY = frozenset(PATHS)
BILLING_OPEN = frozenset({"billing", "billing.open"})

PAIRS = {
    "unchanged": Pair(OLD, _v2(OLD), frozenset()),
    "timer-retimed": Pair(OLD, _v2(OLD.replace("7d: suspended", "10d: suspended")), GRACE),
    "timer-retimed-mapped": Pair(
        OLD,
        _v2(
            OLD.replace("7d: suspended", "10d: suspended"),
            migration='    timers: {"after(7d)@entitlement.grace": '
            '{to: "after(10d)@entitlement.grace", due: recompute}}\n',
        ),
        frozenset(),
    ),
    "timer-retimed-dropped": Pair(
        OLD,
        _v2(
            OLD.replace("7d: suspended", "10d: suspended"),
            migration='    timers: {"after(7d)@entitlement.grace": drop}\n',
        ),
        frozenset(),
    ),
    "timer-named": Pair(OLD, _v2(NAMED), GRACE),
    "timer-named-mapped": Pair(
        OLD,
        _v2(
            NAMED,
            migration='    timers: {"after(7d)@entitlement.grace": '
            '{to: "after(grace)@entitlement.grace"}}\n',
        ),
        frozenset(),
    ),
    "named-timer-retimed": Pair(NAMED, _v2(NAMED.replace("delay: 7d", "delay: 10d")), frozenset()),
    "state-renamed": Pair(OLD, _v2(OLD.replace("grace", "lapsed")), GRACE),
    "state-renamed-mapped": Pair(
        OLD,
        _v2(
            OLD.replace("grace", "lapsed"),
            migration="    rename: {entitlement.grace: entitlement.lapsed}\n",
        ),
        frozenset(),
    ),
    "context-field-renamed": Pair(
        BY_CONTEXT, _v2(BY_CONTEXT.replace("grace_ms", "grace_period_ms")), GRACE
    ),
    "context-field-renamed-mapped": Pair(
        BY_CONTEXT,
        _v2(
            BY_CONTEXT.replace("grace_ms", "grace_period_ms"),
            migration="    context: {grace_period_ms: ctx.grace_ms}\n"
            '    timers: {"after(ctx.grace_ms)@entitlement.grace": '
            '{to: "after(ctx.grace_period_ms)@entitlement.grace", due: keep}}\n',
        ),
        frozenset(),
    ),
    # a region added: entered by default (its `initial:`), as a new instance would be
    "region-added": Pair(OLD, _v2(_with_region(OLD)), frozenset(), BILLING_OPEN),
    "region-added-entered": Pair(
        OLD,
        _v2(_with_region(OLD), migration="    enter: {billing: billing.dunning}\n"),
        frozenset(),
        frozenset({"billing.dunning"}),
    ),
    # a region added and a state holding a timer renamed without a `rename`: the new
    # region does not save the instances in the renamed state
    "region-added-state-renamed": Pair(
        OLD, _v2(_with_region(OLD).replace("grace", "lapsed")), GRACE, BILLING_OPEN
    ),
    # regions added inside `grace` only: an instance elsewhere enters nothing
    "region-added-inside-a-state": Pair(OLD, _v2(_regions_in_grace(OLD)), frozenset(), frozenset()),
    "region-added-inside-a-state-entered": Pair(
        OLD,
        _v2(
            _regions_in_grace(OLD),
            migration="    enter: {entitlement.grace.notice: entitlement.grace.notice.sent}\n",
        ),
        frozenset(),
        frozenset(),
    ),
    # the new region's timer's delay overflows over the migrated context: it cannot be
    # armed, so every instance strands, by both
    "region-added-timer-unarmable": Pair(
        OLD,
        _v2(
            _with_region(OLD).replace(
                "open: {}",
                "open: {after: [{delay: ctx.grace_ms * ctx.grace_ms * ctx.grace_ms, to: open}]}",
            )
        ),
        EVERY,
    ),
}


def _atomic(paths: list[str]) -> tuple[str, ...]:
    return tuple(sorted(p for p in paths if not any(q.startswith(p + ".") for q in paths)))


def _instances(url: str, old: Path) -> None:
    store = statekit.open_store(url)
    try:
        runner = statekit.Runner(statekit.load(old), store, clock=lambda: 1_700_000_000_000)
        for n, (configuration, path) in enumerate(PATHS.items()):
            instance = f"i{n}"
            runner.create(instance)
            for k, event in enumerate(path):
                assert runner.apply(instance, f"e{k}", event, {}).applied
            assert _atomic(sorted(runner.load(instance).state.to_data()["configuration"])) == (
                configuration
            )
    finally:
        store.close()


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_diff_and_migrate_strand_the_same_configurations(
    name: str, store_url: str, tmp_path: Path
) -> None:
    pair = PAIRS[name]
    old, new = tmp_path / "v1.yaml", tmp_path / "v2.yaml"
    old.write_text(pair.old.lstrip("\n"), encoding="utf-8")
    new.write_text(pair.new.lstrip("\n"), encoding="utf-8")
    diffed = statekit_cli("diff", str(old), str(new), "--format", "json")
    assert diffed.returncode == 0, diffed.stderr
    by_diff = {tuple(s["configuration"]): s for s in json.loads(diffed.stdout)["stranded"]}
    _instances(store_url, old)
    dry = statekit_cli("migrate", "--db", store_url, "--chart", str(new), "--dry-run",
                       "--format", "json")  # fmt: skip
    reports = [json.loads(line) for line in dry.stdout.splitlines()]
    assert len(reports) == len(PATHS), dry.stdout + dry.stderr
    by_migrate = {
        _atomic(r["configuration"]): r["reason"] for r in reports if r["status"] == "STRANDED"
    }
    assert set(by_diff) == set(by_migrate) == pair.stranded, (by_diff, by_migrate)
    assert dry.returncode == (1 if pair.stranded else 0)
    entered_by_diff = {tuple(e["configuration"]): e for e in json.loads(diffed.stdout)["entered"]}
    entered_by_migrate = {}
    for report in reports:
        if report["status"] == "WOULD_MIGRATE":
            entered = set(report["mapping"].get("entered", []))
            assert pair.entered <= entered <= set(report["mapped_configuration"]), report
            assert not entered & set(report["configuration"]), report
            if entered:
                entered_by_migrate[_atomic(report["configuration"])] = report["mapping"]["entered"]
    # the states a migration enters: the same by both, with a path to each
    assert {c: e["entered"] for c, e in entered_by_diff.items()} == entered_by_migrate
    assert all(e["path"] == PATHS[c] for c, e in entered_by_diff.items())
    for configuration, found in by_diff.items():
        assert found["path"] == PATHS[configuration]
        if "timer" in by_migrate[configuration]:  # a timer strands it: diff names it
            assert found["why"] == by_migrate[configuration]
            assert found["timers"] or "armed" not in found["why"]  # an armed one: named


DAY_MS = 86_400_000
ARMED_AT = 1_700_000_000_000


@pytest.mark.parametrize(
    ("migration", "said", "due_ms"),
    [
        ("", "kept", ARMED_AT + 7 * DAY_MS),
        (
            '    timers: {"after(grace)@entitlement.grace": {due: recompute}}\n',
            "recomputed",
            ARMED_AT + 10 * DAY_MS,
        ),
    ],
)
def test_a_named_timer_re_timed_is_one_change_that_says_what_migrate_does(
    migration: str, said: str, due_ms: int, tmp_path: Path
) -> None:
    """A named timer's event keeps its name when its delay changes, so no transition or
    answer differs: `diff` reports the re-timing as one `timer-retimed` change, and what
    it says happens to a timer already armed is what `migrate` does to it."""
    old, new = tmp_path / "v1.yaml", tmp_path / "v2.yaml"
    old.write_text(NAMED.lstrip("\n"), encoding="utf-8")
    new.write_text(
        _v2(NAMED.replace("delay: 7d", "delay: 10d"), migration=migration).lstrip("\n"),
        encoding="utf-8",
    )
    diffed = statekit_cli("diff", str(old), str(new))
    assert diffed.returncode == 0, diffed.stderr
    changes = [line.strip() for line in diffed.stdout.splitlines()[1:]]
    assert changes == [
        "timer-retimed after(grace)@entitlement.grace: was after 7d, "
        f"now after 10d (a timer already armed: its due time is {said})"
    ]
    unbumped = NAMED.replace("delay: 7d", "delay: 10d")
    new_same_version = tmp_path / "v1-retimed.yaml"
    new_same_version.write_text(unbumped.lstrip("\n"), encoding="utf-8")
    assert statekit_cli("diff", str(old), str(new_same_version)).returncode == 1
    url = f"sqlite:///{tmp_path / 'store.db'}"
    _instances(url, old)
    migrated = statekit_cli("migrate", "--db", url, "--chart", str(new))
    assert migrated.returncode == 0, migrated.stderr
    store = statekit.open_store(url)
    try:
        runner = statekit.Runner(statekit.load(new), store)
        timers = [t for i in ("i0", "i1", "i2") for t in runner.load(i).state.timers]
    finally:
        store.close()
    assert [(t.id, t.due_ms) for t in timers] == [("after(grace)@entitlement.grace", due_ms)]
