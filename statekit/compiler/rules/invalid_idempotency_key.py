"""invalid-idempotency-key: A field named in `idempotency:` cannot identify a fact.

`idempotency:` maps an event to the payload fields whose values identify the
fact it reports; the runner refuses a second accepted event of that type with
the same values. So each key field must be declared in the event's payload,
required (no `default`), not nullable, and of a type whose values compare
exactly: `integer`, `string`, `boolean` or an `enum` (a `number` is refused:
`1` and `1.0` are the same number but different texts). A field is named once.

Failing::

    events: {TaskStarted: {attempt: {type: integer, default: 1}}}
    idempotency: {TaskStarted: [attempt]}

Passing::

    events: {TaskStarted: {attempt: integer}}
    idempotency: {TaskStarted: [attempt]}

Found by the compiler: a chart with this error cannot be built, so the rule is
always an error and cannot be ignored.
"""

from __future__ import annotations

from statekit.compiler.diagnostics import Severity

SLUG = "invalid-idempotency-key"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "compile"
