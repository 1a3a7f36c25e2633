"""statekit.lint.rules."""
