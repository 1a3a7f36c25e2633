"""Walking effect lists through their `if` branches and `foreach` bodies, for code that
asks what *may* run.

An `if` effect (`ir.Conditional`) runs one of its branches, a `foreach` (`ir.Foreach`) its
body any number of times; a reader that collects what an effect list can do (the events
it raises, the fields it assigns, the timers it sends) must see every branch and body,
or it would miss what a chart does on some data.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from statekit.compiler.ir import Conditional, Effect, Foreach, GuardCheck


def leaf_effects(effects: Iterable[Effect]) -> Iterator[Effect]:
    """Every effect of `effects` that may run, each branch of an `if` included, in
    document order (the `if` effects themselves are not yielded)."""
    for effect in effects:
        if isinstance(effect, Conditional):
            for branch in effect.branches:
                yield from leaf_effects(branch.effects)
            yield from leaf_effects(effect.otherwise)
        elif isinstance(effect, Foreach):
            yield from leaf_effects(effect.effects)
        else:
            yield effect


def effect_conditions(effects: Iterable[Effect]) -> Iterator[GuardCheck]:
    """The condition of every `if` branch in `effects`, and of every `foreach` whether its
    list has an element (`len(array) > 0`), nested ones included."""
    for effect in effects:
        if isinstance(effect, Conditional):
            for branch in effect.branches:
                yield branch.check
                yield from effect_conditions(branch.effects)
            yield from effect_conditions(effect.otherwise)
        elif isinstance(effect, Foreach):
            yield effect.nonempty
            yield from effect_conditions(effect.effects)
