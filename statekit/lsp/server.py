"""The language server (`statekit lsp`): diagnostics as you type, and navigation, over pygls.

Which documents are charts: one the client opens with the language id
`statekit-yaml`, one named `*.statechart.yaml`, and a YAML document whose root
mapping has a `statechart` key (the sniff of `statekit lint`'s folder walk,
`is_chart_text`). Other documents get no diagnostics and no answers.

Diagnostics come in two stages per document version:

- **compile**: `compile_delay` seconds after the last change the text is
  compiled (in a worker thread) and the compile findings are published, with
  the project's `[tool.statekit.lint]` configuration and the chart's own
  `lint:` key applied; they are published as soon as the passes that report
  are done. The IR (the compiled chart the analysis and the requests read) is
  frozen from that check when first needed (`stages.check_stage`, then
  `stages.freeze_stage`), so a check does not wait for the freezing of the text
  before it.
- **analysis**: on save, or when the text has been still for `analysis_delay`
  seconds, the chart rules run in another worker thread, off the request path;
  their findings are published with the compile ones. A newer edit cancels an
  older run (the exploration's progress callback stops it), and a chart the
  exploration cannot finish within `max_configurations` gets the
  `analysis-limit` finding, as from `statekit lint`.

Requests (completion, hover, definition, references, document symbols,
prepare rename, rename, code actions) are answered by `statekit.lsp.navigation`
from the current text and its compile result (compiled in the compile worker
when the last compile is of an older text, off the message loop); the
positions of its records are code points, converted here to the client's
position encoding.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from statekit._version import __version__
from statekit.analysis.explorer import Progress
from statekit.analysis.options import ExplorationOptions
from statekit.compiler.diagnostics import Diagnostic
from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import CheckedSource, CompileResult, compile_source
from statekit.lint.config import LintConfig
from statekit.lint.lint_files import CHART_SUFFIXES, is_chart_text
from statekit.lsp import navigation, records, stages
from statekit.lsp.conversions import lsp_diagnostic, span_positions
from statekit.lsp.settings import ServerSettings
from statekit.lsp.transport import FrameReader, deliver

LANGUAGE_ID = "statekit-yaml"
"""The language id a client may give any chart document, whatever its name."""
CHART_NAME_SUFFIX = ".statechart.yaml"
"""A document with this name is a chart, whatever its language id."""
STATS_COMMAND = "statekit.serverStats"
"""`workspace/executeCommand` that reports what the server retains (for tests and bug reports)."""

_log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Document:
    """What the server keeps for one open document (only its newest version)."""

    uri: str
    file: str
    language_id: str
    generation: int = 0  # bumped by every change; a stage of an older generation is dropped
    checked: CheckedSource | None = None  # the newest checked text (None: not a chart)
    checked_generation: int = -1
    compiled: CompileResult | None = None  # frozen from a checked text when first needed
    compiled_text: str | None = None
    config: LintConfig = field(default_factory=LintConfig)
    config_problems: tuple[Diagnostic, ...] = ()
    findings: tuple[Diagnostic, ...] = ()
    navigation: navigation.ChartDocument | None = None
    analysed_generation: int = -1
    analyse_after_compile: bool = False
    compile_timer: asyncio.TimerHandle | None = None
    analysis_timer: asyncio.TimerHandle | None = None
    running_analysis: int | None = None  # the generation being analysed


class ChartLanguageServer(LanguageServer):
    """A pygls server that knows statekit charts (see the module docstring)."""

    def __init__(self, settings: ServerSettings) -> None:
        super().__init__(
            "statekit",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.settings = settings
        self.documents: dict[str, _Document] = {}
        self._compiler = ThreadPoolExecutor(max_workers=1, thread_name_prefix="statekit-compile")
        self._analyser = ThreadPoolExecutor(max_workers=1, thread_name_prefix="statekit-analysis")
        self._lock = threading.Lock()  # guards `generation` read from the analysis thread
        self._tasks: set[asyncio.Future[None]] = set()

    # --- the wire ---------------------------------------------------------------------

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve over `stdin` and `stdout` (the process's by default) until the client exits.

        pygls' own loop is replaced by `statekit.lsp.transport`'s: a bounded frame, every
        request answered, and resynchronisation after a malformed frame."""
        self._stop_event = threading.Event()
        writer = StdoutWriter(stdout or sys.stdout.buffer)
        self.protocol.set_writer(writer)
        reader = FrameReader(stdin or sys.stdin.buffer, self.settings.max_message_bytes)
        try:
            asyncio.run(self._serve(reader, writer))
        except BrokenPipeError:
            _log.error("the client closed the connection")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    async def _serve(self, reader: FrameReader, writer: StdoutWriter) -> None:
        loop = asyncio.get_running_loop()
        stop = self._stop_event
        while stop is None or not stop.is_set():
            frame = await loop.run_in_executor(self.thread_pool, reader.next)
            if frame is None:
                return
            try:
                deliver(
                    self.protocol, writer, frame, bool(getattr(self.protocol, "_shutdown", False))
                )
            except (BrokenPipeError, SystemExit):
                raise
            except Exception:  # a bug in statekit or pygls: logged, and the next frame is read
                _log.exception("unable to handle a message")

    # --- document life cycle ---------------------------------------------------------

    def opened(self, uri: str, language_id: str) -> None:
        """A document was opened: remember it and schedule its compile."""
        path = to_fs_path(uri) or uri
        self.documents[uri] = _Document(uri=uri, file=path, language_id=language_id)
        self.changed(uri)

    def changed(self, uri: str) -> None:
        """The text changed: every older stage is stale; compile after a quiet moment."""
        self._forget_finished_handlers()
        state = self.documents.get(uri)
        if state is None:
            return
        with self._lock:
            state.generation += 1
        state.navigation = None
        _cancel(state.analysis_timer)
        state.analysis_timer = None
        _cancel(state.compile_timer)
        loop = asyncio.get_running_loop()
        state.compile_timer = loop.call_later(
            self.settings.compile_delay_s, lambda: self._spawn(self._compile(state))
        )

    def saved(self, uri: str) -> None:
        """Saved: run the analysis now (or as soon as the newest text is compiled)."""
        state = self.documents.get(uri)
        if state is None:
            return
        _cancel(state.analysis_timer)
        state.analysis_timer = None
        if state.checked_generation == state.generation:
            self._spawn(self._analyse(state))
        else:
            state.analyse_after_compile = True

    def closed(self, uri: str) -> None:
        """Closed: forget the document (a running stage finds it gone) and clear its findings."""
        state = self.documents.pop(uri, None)
        if state is None:
            return
        with self._lock:
            state.generation += 1
        _cancel(state.compile_timer)
        _cancel(state.analysis_timer)
        self._publish(uri, (), None)

    def _forget_finished_handlers(self) -> None:
        """Drop the finished notification handlers pygls keeps.

        pygls 2.1 files the future of every generator handler (its own
        didOpen/didChange/didClose are generators) under a fresh id in the table
        of pending requests and never removes it: one leaked future per change.
        A finished request is removed when its answer is sent, so whatever is
        finished and still there is such a leftover.
        """
        pending: dict[object, Any] | None = getattr(self.protocol, "_request_futures", None)
        if pending is None:
            return
        for key in [k for k, f in pending.items() if f.done()]:
            del pending[key]

    def _spawn(self, job: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(job)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- the two stages -----------------------------------------------------------

    async def _compile(self, state: _Document) -> None:
        state.compile_timer = None
        generation = state.generation
        document = self.workspace.get_text_document(state.uri)
        text = document.source
        if not self._is_chart(state, text):
            state.checked, state.checked_generation = None, generation
            state.compiled = state.compiled_text = None
            state.findings = ()
            self._publish(state.uri, (), document.version)
            return
        loop = asyncio.get_running_loop()
        checked, config, problems, findings = await loop.run_in_executor(
            self._compiler, stages.check_stage, text, state.file
        )
        if self.documents.get(state.uri) is not state or state.generation != generation:
            return
        state.checked, state.checked_generation = checked, generation
        state.config, state.config_problems = config, problems
        state.findings = findings
        self._publish(state.uri, findings, document.version)
        # The IR is frozen only when the analysis or a request needs it (`_frozen`): while
        # the user types, the next check does not wait for it (a third of the compile of
        # a 500-state chart; bench/lsp_latency.py).
        if state.analyse_after_compile:
            state.analyse_after_compile = False
            self._spawn(self._analyse(state))
        elif checked.model is not None:
            state.analysis_timer = loop.call_later(
                self.settings.analysis_delay_s, lambda: self._spawn(self._analyse(state))
            )

    async def _frozen(self, state: _Document) -> CompileResult | None:
        """The compile result of the newest checked text (None: not a chart), frozen in
        the compile worker the first time it is needed."""
        checked = state.checked
        if checked is None:
            return None
        if state.compiled is not None and state.compiled_text is checked.source:
            return state.compiled
        loop = asyncio.get_running_loop()
        compiled, crash = await loop.run_in_executor(
            self._compiler, stages.freeze_stage, checked, state.file
        )
        if state.checked is checked and self.documents.get(state.uri) is state:
            state.compiled, state.compiled_text = compiled, checked.source
            if crash is not None:
                state.findings = tuple(sorted((*state.findings, crash), key=Diagnostic.sort_key))
                version = self.workspace.get_text_document(state.uri).version
                self._publish(state.uri, state.findings, version)
        return compiled

    async def _analyse(self, state: _Document) -> None:
        state.analysis_timer = None
        checked, generation = state.checked, state.checked_generation
        if checked is None or checked.model is None or generation != state.generation:
            return
        if state.analysed_generation == generation or state.running_analysis == generation:
            return
        version = self.workspace.get_text_document(state.uri).version
        state.running_analysis = generation
        options = ExplorationOptions(
            max_configurations=self.settings.max_configurations,
            progress=self._stopper(state, generation),
        )
        loop = asyncio.get_running_loop()
        try:
            compiled = await self._frozen(state)
            if compiled is None or compiled.chart is None or state.generation != generation:
                return
            findings = await loop.run_in_executor(
                self._analyser,
                stages.analysis_stage,
                compiled,
                state.file,
                state.config,
                state.config_problems,
                options,
            )
        except stages.Superseded:
            return
        finally:
            if state.running_analysis == generation:
                state.running_analysis = None
        if self.documents.get(state.uri) is not state or state.generation != generation:
            return
        state.analysed_generation = generation
        state.findings = findings
        self._publish(state.uri, findings, version)

    def _stopper(self, state: _Document, generation: int) -> Callable[[CompiledChart], Any]:
        """The exploration's progress factory: its callback stops a superseded run."""

        def check(_done: int, _queued: int) -> None:
            with self._lock:
                current = state.generation
            if current != generation:
                raise stages.Superseded

        @contextmanager
        def factory(_chart: CompiledChart) -> Iterator[Progress | None]:
            yield check

        return factory

    def _is_chart(self, state: _Document, text: str) -> bool:
        if state.language_id == LANGUAGE_ID or state.file.endswith(CHART_NAME_SUFFIX):
            return True
        return state.file.endswith(CHART_SUFFIXES) and is_chart_text(text)

    # --- publishing -----------------------------------------------------------------

    def _publish(self, uri: str, findings: Sequence[Diagnostic], version: int | None) -> None:
        document = self.workspace.get_text_document(uri)
        state = self.documents.get(uri)
        file = state.file if state is not None else (to_fs_path(uri) or uri)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri,
                version=version,
                diagnostics=[lsp_diagnostic(d, document, file) for d in findings],
            )
        )

    # --- navigation -----------------------------------------------------------------

    async def chart_at(self, uri: str) -> tuple[navigation.ChartDocument, TextDocument] | None:
        """The navigation index of the document's current text (None: not a chart).

        A text newer than the last compile is compiled in the compile worker, so the
        server keeps reading messages meanwhile."""
        state = self.documents.get(uri)
        if state is None:
            return None
        document = self.workspace.get_text_document(uri)
        text = document.source
        if state.navigation is None or state.navigation.text != text:
            if not self._is_chart(state, text):
                return None
            result = None
            if state.checked is not None and state.checked.source == text:
                result = await self._frozen(state)  # checked already: only freeze it
            if result is None:
                loop = asyncio.get_running_loop()
                result = await loop.run_in_executor(
                    self._compiler, compile_source, text, state.file
                )
            if document.source != text:  # edited meanwhile: answer for the newer text
                return await self.chart_at(uri)
            state.navigation = navigation.chart_document(text, result, state.navigation)
        return state.navigation, document

    def findings_in(self, uri: str, where: records.Range) -> tuple[Diagnostic, ...]:
        """The published findings of `uri` on the lines of `where` (a code action is asked
        for at the cursor, anywhere on the finding's line)."""
        state = self.documents.get(uri)
        if state is None:
            return ()
        touching = []
        for finding in state.findings:
            start, end = span_positions(finding.span)
            if start.line <= where.end.line and where.start.line <= end.line:
                touching.append(finding)
        return tuple(touching)

    def stats(self) -> dict[str, int]:
        """What the server retains: open documents, pending timers, tasks and handlers, and
        the live objects."""
        self._forget_finished_handlers()
        gc.collect()
        return {
            "documents": len(self.documents),
            "workspace_documents": len(self.workspace.text_documents),
            "timers": sum(
                (d.compile_timer is not None) + (d.analysis_timer is not None)
                for d in self.documents.values()
            ),
            "tasks": len(self._tasks),
            "handlers": len(getattr(self.protocol, "_request_futures", {})),
            "objects": len(gc.get_objects()),
        }


def _cancel(timer: asyncio.TimerHandle | None) -> None:
    if timer is not None:
        timer.cancel()
