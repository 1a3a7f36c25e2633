"""An editor session with `statekit lsp`, over stdio, through the suite's LSP client.

`Editor` opens, edits, saves and closes documents as an editor does and waits
for the diagnostics the server publishes. The server is started with an
analysis delay far beyond any test, so that per document version the first
publication is the compile stage and the analysis runs only on save: each
wait is for one stage, never for a moment of quiet.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsp_client import LanguageServer

SESSION_TIMEOUT_S = 120.0
"""Harness timeout of every wait (a hung server fails the test instead of hanging it)."""
NEVER_MS = 10_000_000
"""An analysis delay no test reaches: the analysis runs on save only."""

Json = dict[str, Any]


def server_command(*options: str) -> list[str]:
    """`statekit lsp` with `options`, in this interpreter."""
    return [sys.executable, "-m", "statekit", "lsp", "--analysis-delay", str(NEVER_MS), *options]


class Editor:
    """One server process and the documents open in it."""

    def __init__(
        self,
        root: Path,
        *options: str,
        encodings: Sequence[str] | None = None,
        command: Sequence[str] | None = None,
    ) -> None:
        self.server = LanguageServer(
            command if command is not None else server_command(*options),
            timeout_s=SESSION_TIMEOUT_S,
        )
        self.versions: dict[str, int] = {}
        capabilities: Json = {
            "textDocument": {
                "publishDiagnostics": {"relatedInformation": True, "versionSupport": True},
                "rename": {"prepareSupport": True},
            }
        }
        if encodings is not None:
            capabilities["general"] = {"positionEncodings": list(encodings)}
        self.initialized: Json = self.server.request(
            "initialize",
            {"processId": None, "rootUri": root.as_uri(), "capabilities": capabilities},
        )
        self.server.notify("initialized", {})

    def close(self) -> None:
        """shutdown, exit, and the process is gone."""
        self.server.close()

    # --- documents ------------------------------------------------------------------

    def open(self, path: Path, text: str, language_id: str = "yaml") -> str:
        """didOpen `path` with `text` (version 1); returns its URI."""
        uri = path.as_uri()
        self.versions[uri] = 1
        self.server.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": language_id, "version": 1, "text": text}},
        )
        return uri

    def replace(self, uri: str, text: str) -> int:
        """didChange with the whole new text; returns the new version."""
        return self.change(uri, [{"text": text}])

    def change(self, uri: str, changes: list[Json]) -> int:
        """didChange with these content changes (ranged or whole); returns the new version."""
        self.versions[uri] += 1
        self.server.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": self.versions[uri]},
                "contentChanges": changes,
            },
        )
        return self.versions[uri]

    def save(self, uri: str) -> None:
        """didSave (the analysis runs)."""
        self.server.notify("textDocument/didSave", {"textDocument": {"uri": uri}})

    def close_document(self, uri: str) -> None:
        """didClose (the document is no longer open: `versions` forgets it)."""
        self.versions.pop(uri, None)
        self.server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})

    # --- what the server says -------------------------------------------------------

    def published(self, uri: str, version: int | None = None) -> list[Json]:
        """The next diagnostics published for `uri` (at `version`, when given)."""
        params = self.server.take_notification(
            "textDocument/publishDiagnostics",
            lambda p: p["uri"] == uri and (version is None or p.get("version") == version),
        )
        diagnostics: list[Json] = params["diagnostics"]
        return diagnostics

    def analysed(self, uri: str) -> list[Json]:
        """Save, and the diagnostics the analysis publishes for the current version."""
        version = self.versions[uri]
        self.save(uri)
        return self.published(uri, version)

    def request(self, method: str, uri: str, **params: Any) -> Any:
        """A request about `uri` (`textDocument` filled in)."""
        return self.server.request(method, {"textDocument": {"uri": uri}, **params})

    def stats(self) -> Json:
        """What the server retains (its `statekit.serverStats` command)."""
        result: Json = self.server.request(
            "workspace/executeCommand", {"command": "statekit.serverStats", "arguments": []}
        )
        return result
