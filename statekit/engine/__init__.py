"""statekit.engine."""
