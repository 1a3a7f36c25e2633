"""The classification table of `statekit explain` folded per event (`explain --table`).

`answer_groups` groups the configurations that answer an event the same way, so that a
parallel chart's table shrinks from one row per configuration and event to a few rows
per event.
"""

from __future__ import annotations

from dataclasses import dataclass

from statekit.analysis.explain import Explanation, Row, Verdict


@dataclass(frozen=True, slots=True)
class AnswerGroup:
    """Configurations that answer one event the same way (`statekit explain --table`).

    `answers` are the verdicts' short texts (an APPLIED one names only the leaves
    it enters, so that the same region-local step groups across the other
    regions' states). `where` are the most specific states active in every
    configuration of the group; `count` configurations are in it, of `among`
    reachable configurations with all of `where` active; `example` is the first.
    """

    event: str
    answers: tuple[str, ...]
    where: tuple[str, ...]
    count: int
    among: int
    example: tuple[str, ...]

    def cells(self) -> tuple[str, str, str, str, str]:
        """The row as the tables show it (`explain --table`, the docs pages): event,
        answer, configurations (`N`, or `N of M` when other configurations with the
        same states answer otherwise), where (`(any)` for none) and the example."""
        count = f"{self.count}" if self.count == self.among else f"{self.count} of {self.among}"
        where = ", ".join(self.where) if self.where else "(any)"
        return self.event, "; ".join(self.answers), count, where, ", ".join(self.example)


def _short(row: Row, verdict: Verdict) -> str:
    if verdict.target is not None:
        entered = [s for s in verdict.target if s not in row.states]
        text = "→ " + (", ".join(entered) if entered else "(unchanged)")
    else:
        text = verdict.text()
    if verdict.assuming:
        text += " assuming " + "; ".join(verdict.assuming)
    return text


def _most_specific(paths: set[str], order: tuple[str, ...]) -> tuple[str, ...]:
    """The paths with no descendant among them, in the order of `order`."""
    return tuple(p for p in order if p in paths and not any(q.startswith(p + ".") for q in paths))


def answer_groups(explanation: Explanation) -> tuple[AnswerGroup, ...]:
    """The classification table grouped: per event (in the table's order), the groups of
    configurations with the same answers, in order of their first configuration. States
    active in every row (a parallel root's regions) are left out of `where`."""
    events: dict[str, dict[tuple[str, ...], list[Row]]] = {}
    for row in explanation.rows:
        for event, verdicts in row.verdicts.items():
            key = tuple(_short(row, v) for v in verdicts)
            events.setdefault(event, {}).setdefault(key, []).append(row)
    actives = [frozenset(row.active) for row in explanation.rows]
    everywhere = frozenset.intersection(*actives) if actives else frozenset()
    groups: list[AnswerGroup] = []
    for event, by_answer in events.items():
        for answers, rows in by_answer.items():
            common = set(rows[0].active).intersection(*(r.active for r in rows[1:]))
            common -= everywhere
            where = _most_specific(common, rows[0].active)
            among = sum(1 for active in actives if common <= active)
            groups.append(AnswerGroup(event, answers, where, len(rows), among, rows[0].states))
    return tuple(groups)
