"""`verify_store`: what `verify` checks of a store as a whole (the database's own
integrity check, the recorded migrations, each stored chart source against its
digest, name and version, and rows naming instances or messages that do not exist)."""

from __future__ import annotations

from collections.abc import Sequence

from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.runner.errors import RunnerError
from statekit.runner.store.base import Store
from statekit.runner.store.migrations import MIGRATIONS
from statekit.runner.store.retention_queries import watermarks


def verify_store(store: Store, given: Sequence[Chart] = ()) -> list[str]:
    """What is wrong with the store as a whole (see the module docstring); `given`: the
    chart files passed to verify (a stored chart without source is checked against
    them). A check that cannot read what it needs says so and the others go on."""
    problems = [f"integrity check failed: {p}" for p in store.integrity_problems()]
    checks = (
        ("the recorded migrations", _migration_problems),
        ("the stored charts", lambda s: _chart_problems(s, given)),
        ("the charts instances, events and snapshots name", lambda s: s.unregistered_charts()),
        ("rows of instances that are not stored", _orphan_problems),
        ("the inbox", _inbox_problems),
    )
    for what, check in checks:
        try:
            problems.extend(check(store))
        except RunnerError as exc:
            problems.append(f"cannot check {what}: {exc}")
    return problems


def _migration_problems(store: Store) -> list[str]:
    recorded = store.migration_rows()
    known = [(m.version, m.description) for m in MIGRATIONS[: len(recorded)]]
    if recorded != known:
        return [f"schema migrations: recorded {recorded}, this statekit has {known}"]
    return []


def _chart_problems(store: Store, given: Sequence[Chart]) -> list[str]:
    problems = []
    by_digest = {chart.digest: chart for chart in given}
    rows = store.charts()
    digests: dict[tuple[str, int], list[str]] = {}
    for row in rows:
        digests.setdefault((row.name, row.version), []).append(row.digest)
    for (name, version), found in sorted(digests.items(), key=repr):
        if len(found) > 1:  # a version is one digest (`chart_versions.refuse_changed_version`)
            problems.append(
                f"stored chart {name!r} version {version} has {len(found)} digests: "
                + ", ".join(sorted(found))
            )
    for row in rows:
        where = f"stored chart {row.name!r} version {row.version} ({row.digest})"
        chart = by_digest.get(row.digest)
        if row.source is not None:
            result = compile_source(row.source, f"<stored chart {row.name} v{row.version}>")
            if result.chart is None:
                problems.append(f"{where}: its stored source does not compile")
                continue
            chart = Chart(result.chart, source=row.source)
            if chart.digest != row.digest:
                problems.append(f"{where}: its stored source has digest {chart.digest}")
                continue
        if chart is not None and (chart.name, chart.version) != (row.name, row.version):
            problems.append(
                f"{where}: the chart of that digest is {chart.name!r} version {chart.version}"
            )
    return problems


def _orphan_problems(store: Store) -> list[str]:
    return [
        f"{table}: {count} row(s) of instance {instance_id!r}, which is not stored"
        for table, instance_id, count in store.orphans()
    ]


def _inbox_problems(store: Store) -> list[str]:
    pruned = {i for i, marks in watermarks(store).items() if marks.outbox_through}
    return [
        f"statekit_inbox: consumer {consumer!r} processed message {message_id!r} of "
        f"instance {instance_id!r}, which the outbox does not have"
        for consumer, instance_id, message_id in store.unknown_inbox_messages()
        if instance_id not in pruned
    ]
