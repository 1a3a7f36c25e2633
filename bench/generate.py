"""Generated charts for benchmarks: many states, many transitions, valid and lint-clean-ish."""

from __future__ import annotations


def flat_chart_yaml(states: int, transitions_per_state: int, events: int = 50) -> str:
    """A chart of `states` states in groups of 10 compound states, with guarded transitions."""
    lines = [
        "statechart: generated",
        "version: 1",
        "context:",
        "  counter: {type: integer, default: 0}",
        "events:",
    ]
    lines += [f"  E{e}: {{n: integer}}" for e in range(events)]
    lines += [
        "guards:",
        "  small: {if: event.n < ctx.counter + 10, else: TOO_BIG}",
        "initial: g0",
        "states:",
    ]
    groups = max(1, states // 10)
    for g in range(groups):
        lines.append(f"  g{g}:")
        lines.append(f"    initial: s{g}_0")
        lines.append("    states:")
        for i in range(10):
            lines.append(f"      s{g}_{i}:")
            lines.append("        on:")
            for k in range(transitions_per_state):
                target_group = (g + k) % groups
                target = f"s{target_group}_{(i + k + 1) % 10}"
                event = f"E{(i * transitions_per_state + k) % events}"
                if k % 2:
                    lines.append(
                        f"          {event}: {{to: {target}, guard: small, "
                        "do: [{assign: {counter: ctx.counter + 1}}]}"
                    )
                else:
                    lines.append(f"          {event}: {target}")
    return "\n".join(lines) + "\n"
