"""The compiler: YAML text → positioned tree → schema check → model → immutable IR."""
