"""The chart model: states numbered, references resolved, and the whole frozen into the IR."""
