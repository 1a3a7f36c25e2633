"""The signature of a compiled expression, shared by the closures that build one and the
analyses that call one."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, TypeAlias

Evaluator: TypeAlias = Callable[[Mapping[str, Any], Mapping[str, Any], AbstractSet[int]], Any]
"""A compiled expression: `(ctx, event_payload, active_state_ids) -> value`."""
