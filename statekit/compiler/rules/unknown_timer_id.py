"""unknown-timer-id: A `cancel:`, `pause:` or `resume:` names an id that no timer uses.

`cancel: name` removes the armed timer of a delayed `send` with `id: name`.
When no `send` in the chart has that id, nothing can ever be cancelled: the
name is misspelt, or the `send` it meant was removed. `pause: name` and
`resume: name` take a delayed `send`'s `id:` or a named `after` timer's `id:`;
any other name is this error too, with the closest names as a hint.

Failing::

    events: {Remind: {}}
    states:
      waiting:
        entry: [{send: {event: Remind, delay: 1h, id: reminder}}]
        exit: [{cancel: remindr}]

Passing::

    events: {Remind: {}}
    states:
      waiting:
        entry: [{send: {event: Remind, delay: 1h, id: reminder}}]
        exit: [{cancel: reminder}]

Found by the compiler (effect compilation): a chart with this error cannot be built, so the rule is
always an error and cannot be ignored.
"""

from __future__ import annotations

from statekit.compiler.diagnostics import Severity

SLUG = "unknown-timer-id"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "compile"
