"""statekit.analysis: the reachable configurations of a chart, and what they tell.

The chart is run as written, with the engine's
own selection, exit/entry sets and macrosteps (through `statekit.engine.abstract`:
the abstract value domain and a guard oracle), without the engine's
runtime invariant check. The abstract state is a configuration plus the
recorded history values and the values of the tracked context fields
(finite-domain fields every `assign` of which is exact); the rest of the
context is abstracted away; guards are evaluated three-valued (`active()`
exact, `ctx.*`/`event.*` unknown), those reading only tracked fields on their
values, and unknown ones are explored both ways, each outcome keeping the
assumptions it made so that findings can cite them.

Modules:

- `explorer`: `explore(chart, max_configurations=..., max_memory=..., progress=...)` →
  `Exploration`, the breadth-first search;
- `exploration`: what it found: `Exploration` (nodes in breadth-first order, their
  `MacrostepBranch`es per event, conflicts, limits);
- `guard_choices`: the scripted oracle that enumerates data-guard outcomes;
- `tracked_context`: which context fields the exploration tracks, and the value domain
  that keeps them exact; `tracked_nodes`: the values that tell nodes of one
  configuration apart, and the start context of a path;
- `macrostep_runs`: the runs of one macrostep from one abstract state;
- `guards`: three-valued evaluation and `Assumption`;
- `options`: `ExplorationOptions` (the bounds, the progress display) and `explore_with`;
- `memory`: the process's memory, read for the exploration's memory bound;
- `facts`: `ChartFacts`, the exploration and what the chart rules read of it
  (reached states, selected transitions, exits, traps), computed once per chart;
- `static`: facts from the chart alone (mentioned events, the regions that own an event,
  shadowed alternatives);
- `report`: how findings describe configurations, transitions and paths;
- `explain`, `paths`: the data behind `statekit explain` and `statekit paths`;
- `components`, `compositional`: the independent components of a parallel root's
  regions, and the exploration that expands each apart where their product is large
  (`explore_composed`, which `facts` and `races` use);
- `races`: pairs of events whose order of arrival matters, by class (`find_races`),
  behind `statekit races` and the race rules.

The lint rules that use it live in `statekit.lint.rules` (unreachable-state,
dead-state, no-final-path, undefined-pair, shadowed-reject, region-reset,
shadowed-transition, conflicting-transitions, invariant-violation,
unreachable-transition, undecided-race, stale-race-decision, analysis-limit).
"""
