"""What the tracked context values tell about an exploration's nodes.

Nodes of one configuration may differ in the values of tracked context fields
(`statekit.analysis.tracked_context`); text that shows a configuration names
the values that tell them apart (`distinguishing_text`: `with
ctx.cancel_at_period_end = true`), and a path that starts from values other
than the declared defaults names the context to start an instance with
(`start_context`). Read through `Exploration.tracked_nodes`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from statekit.analysis.tracked_context import shown_value


class Explored(Protocol):
    """What `TrackedNodes` reads of an `Exploration` (its per-node arrays), named here
    so that this module does not import the one that owns it."""

    @property
    def tracked(self) -> tuple[str, ...]: ...
    @property
    def config_index(self) -> Sequence[int]: ...
    @property
    def valuation_index(self) -> Sequence[int]: ...
    @property
    def valuations(self) -> Sequence[tuple[object, ...]]: ...
    @property
    def parent_index(self) -> Sequence[int]: ...
    @property
    def via_index(self) -> Sequence[int]: ...
    @property
    def initial_starts(self) -> Sequence[Mapping[str, object]]: ...


class TrackedNodes:
    """The nodes' tracked values per configuration, indexed once (`size` nodes)."""

    __slots__ = ("by_config", "exploration", "size")

    def __init__(self, exploration: Explored) -> None:
        self.exploration = exploration
        self.size = len(exploration.config_index)
        self.by_config: dict[int, set[int]] = {}
        """Configuration number → the valuation numbers of its nodes."""
        if exploration.tracked:
            indexes = zip(exploration.config_index, exploration.valuation_index, strict=True)
            for number, valuation in indexes:
                self.by_config.setdefault(number, set()).add(valuation)

    def distinguishing(self, node_id: int) -> dict[str, object]:
        """The tracked values that tell node `node_id` from other nodes of the same
        configuration (empty when none do): field → its value there."""
        of = self.exploration
        if not of.tracked:
            return {}
        mine = of.valuations[of.valuation_index[node_id]]
        differing: set[int] = set()
        for other in self.by_config[of.config_index[node_id]]:
            theirs = of.valuations[other]
            differing.update(
                i
                for i, (a, b) in enumerate(zip(mine, theirs, strict=True))
                if (type(a), a) != (type(b), b)
            )
        return {of.tracked[i]: mine[i] for i in sorted(differing)}

    def distinguishing_text(self, node_id: int) -> str:
        """`with ctx.cancel_at_period_end = true` (`distinguishing`; empty when none)."""
        values = self.distinguishing(node_id)
        if not values:
            return ""
        return "with " + ", ".join(f"ctx.{k} = {shown_value(v)}" for k, v in values.items())

    def start_context(self, node_id: int) -> dict[str, object]:
        """The context to start an instance with (`Chart.start(context)`) for the path to
        `node_id` that `Exploration.path` gives: the tracked fields whose start values
        differ from the declared defaults (empty: start with the defaults)."""
        of = self.exploration
        current = node_id
        while of.parent_index[current] >= 0:
            current = of.parent_index[current]
        return dict(of.initial_starts[of.via_index[current]])
