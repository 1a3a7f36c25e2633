"""Node.js packages some tests drive (yaml-language-server, Mermaid's parser and renderer).

`make node-tools` (part of `make test`) installs Node where missing and the
pinned npm packages into `build/node`. A test that needs them fails, naming the
command that installs them; it is never skipped.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NODE_MODULES = REPO / "build" / "node" / "node_modules"

HARNESS_TIMEOUT_S = 300.0
"""How long a Node process may go without answering before it counts as hung (not a
speed bound: it only turns a hang into a failure)."""


def require(path: Path) -> Path:
    """`path` (inside `NODE_MODULES` or given by the user); fail when it is missing."""
    if not path.exists():
        pytest.fail(f"{path} is not installed: run `make node-tools`")
    return path
