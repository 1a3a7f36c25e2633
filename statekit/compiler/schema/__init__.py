"""The statechart JSON Schema and the check of a positioned tree against it."""
