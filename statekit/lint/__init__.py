"""statekit.lint."""
