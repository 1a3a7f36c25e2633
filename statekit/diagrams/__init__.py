"""statekit.diagrams."""
