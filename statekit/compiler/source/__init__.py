"""The source document: YAML text loaded into a tree whose every node keeps its position."""
