"""statekit.analysis: reachable configurations and the facts the analysis lint rules read."""
