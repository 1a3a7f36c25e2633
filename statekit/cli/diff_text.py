"""`statekit diff` as text: each change on one line with its old and new answers marked
`was` and `now` (an answer itself often starts with `→`), and a re-timed `after` timer
summarised as one change instead of a removed and an added transition and the answers
that only moved from the old timer's event to the new one's (`--format json` keeps every
change as `statekit.analysis.diff` found it)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from statekit.analysis.diff import Change, ChartDiff

_TIMER_TRANSITION = re.compile(
    r"^(?P<source>.+) on (?P<event>after\((?P<due>[^()]*)\)@(?P<at>.+))$"
)
_TIMER_ANSWER = re.compile(r"^(?P<where>\{.*\}) \+ (?P<event>after\((?P<due>[^()]*)\)@(?P<at>.+))$")
NOT_CLASSIFIED = "(not classified)"


@dataclass(frozen=True, slots=True)
class Retimed:
    """An `after` timer of state `at` whose delay changed and nothing else: `old` and `new`
    are its events (`after(1d)@idle`), `due` the two delays."""

    at: str
    old: str
    new: str
    old_due: str
    new_due: str

    def text(self) -> str:
        return (
            f"timer-retimed {self.old} in {self.at}: was {self.old_due}, now {self.new_due} "
            f"(event {self.new}; the same transitions and answers)"
        )


def change_text(change: Change) -> str:
    """`kind subject: was OLD, now NEW` (either part left out where there is none)."""
    parts = [f"was {change.old}" if change.old else "", f"now {change.new}" if change.new else ""]
    said = ", ".join(p for p in parts if p)
    return f"{change.kind} {change.subject}: {said}" if said else f"{change.kind} {change.subject}"


def retimed_timers(changes: tuple[Change, ...]) -> tuple[list[Retimed], set[int]]:
    """The re-timed timers among `changes` and the positions of the changes each explains:
    a removed transition on `after(D1)@S` and an added one on `after(D2)@S` from the same
    source with the same answer, and every answer that moved from one event to the other
    in the same configuration unchanged."""
    removed: dict[tuple[str, str, str | None], tuple[int, re.Match[str]]] = {}
    for i, c in enumerate(changes):
        found = _TIMER_TRANSITION.match(c.subject)
        if c.kind == "transition-removed" and found and c.new is None:
            removed[(found["source"], found["at"], c.old)] = (i, found)
    pairs: dict[tuple[str, str], Retimed] = {}
    explained: set[int] = set()
    for i, c in enumerate(changes):
        found = _TIMER_TRANSITION.match(c.subject)
        if c.kind != "transition-added" or not found or c.old is not None:
            continue
        match = removed.pop((found["source"], found["at"], c.new), None)
        if match is None or match[1]["due"] == found["due"]:
            continue
        old = match[1]
        pairs.setdefault(
            (old["event"], found["event"]),
            Retimed(found["at"], old["event"], found["event"], old["due"], found["due"]),
        )
        explained |= {match[0], i}
    events = {(r.old, r.new) for r in pairs.values()}
    gone: dict[tuple[str, str, str | None], int] = {}
    for i, c in enumerate(changes):
        found = _TIMER_ANSWER.match(c.subject)
        if c.kind == "answer-changed" and found and c.new == NOT_CLASSIFIED:
            gone[(found["where"], found["event"], c.old)] = i
    for i, c in enumerate(changes):
        found = _TIMER_ANSWER.match(c.subject)
        if c.kind != "answer-changed" or not found or c.old != NOT_CLASSIFIED:
            continue
        for old_event, new_event in events:
            j = gone.get((found["where"], old_event, c.new))
            if new_event == found["event"] and j is not None:
                explained |= {i, j}
    return list(pairs.values()), explained


def diff_lines(found: ChartDiff) -> list[str]:
    """The text form of `found` (see the module docstring)."""
    base = found.lines()
    if not found.behaviour_changed:
        return base
    retimed, explained = retimed_timers(found.changes)
    out = [base[0], *(f"  {r.text()}" for r in retimed)]
    out += [f"  {change_text(c)}" for i, c in enumerate(found.changes) if i not in explained]
    return out + base[1 + len(found.changes) :]
