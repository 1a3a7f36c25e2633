"""The language server (`statekit lsp`): diagnostics as you type, and navigation, over pygls.

Which documents are charts: one the client opens with the language id
`statekit-yaml`, one named `*.statechart.yaml`, and a YAML document whose root
mapping has a `statechart` key (the sniff of `statekit lint`'s folder walk,
`is_chart_text`). Other documents get no diagnostics and no answers.

Diagnostics come in two stages per document version:

- **compile**: `compile_delay` seconds after the last change the text is
  compiled (in a worker thread) and the compile findings are published, with
  the project's `[tool.statekit.lint]` configuration and the chart's own
  `lint:` key applied.
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
import threading
from collections.abc import Callable, Coroutine, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from statekit._version import __version__
from statekit.analysis.explorer import Progress
from statekit.analysis.options import ExplorationOptions
from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import CompileResult, compile_source
from statekit.lint.config import (
    ConfigError,
    LintConfig,
    find_pyproject,
    load_project_config,
    with_chart_settings,
)
from statekit.lint.lint_files import CHART_SUFFIXES, is_chart_text, lint_compiled
from statekit.lsp import navigation, records
from statekit.lsp.settings import ServerSettings

LANGUAGE_ID = "statekit-yaml"
"""The language id a client may give any chart document, whatever its name."""
CHART_NAME_SUFFIX = ".statechart.yaml"
"""A document with this name is a chart, whatever its language id."""
STATS_COMMAND = "statekit.serverStats"
"""`workspace/executeCommand` that reports what the server retains (for tests and bug reports)."""
SOURCE = "statekit"

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
}


class _Superseded(Exception):
    """A newer edit of the document: the analysis of the older text stops."""


@dataclass(slots=True)
class _Document:
    """What the server keeps for one open document (only its newest version)."""

    uri: str
    file: str
    language_id: str
    generation: int = 0  # bumped by every change; a stage of an older generation is dropped
    compiled: CompileResult | None = None
    compiled_text: str | None = None
    compiled_generation: int = -1
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
        if state.compiled_generation == state.generation:
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
            state.compiled = state.compiled_text = None
            state.compiled_generation = generation
            state.findings = ()
            self._publish(state.uri, (), document.version)
            return
        loop = asyncio.get_running_loop()
        compiled, config, problems, findings = await loop.run_in_executor(
            self._compiler, _compile_stage, text, state.file
        )
        if self.documents.get(state.uri) is not state or state.generation != generation:
            return
        state.compiled, state.compiled_text, state.compiled_generation = compiled, text, generation
        state.config, state.config_problems = config, problems
        state.findings = findings
        self._publish(state.uri, findings, document.version)
        if state.analyse_after_compile:
            state.analyse_after_compile = False
            self._spawn(self._analyse(state))
        elif compiled.chart is not None:
            state.analysis_timer = loop.call_later(
                self.settings.analysis_delay_s, lambda: self._spawn(self._analyse(state))
            )

    async def _analyse(self, state: _Document) -> None:
        state.analysis_timer = None
        compiled, generation = state.compiled, state.compiled_generation
        if compiled is None or compiled.chart is None or generation != state.generation:
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
            findings = await loop.run_in_executor(
                self._analyser,
                _analysis_stage,
                compiled,
                state.file,
                state.config,
                state.config_problems,
                options,
            )
        except _Superseded:
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
                raise _Superseded

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
            result = state.compiled if state.compiled_text == text else None
            if result is None:
                loop = asyncio.get_running_loop()
                result = await loop.run_in_executor(
                    self._compiler, compile_source, text, state.file
                )
                if document.source != text:  # edited meanwhile: answer for the newer text
                    return await self.chart_at(uri)
            state.navigation = navigation.chart_document(text, result)
        return state.navigation, document

    def findings_in(self, uri: str, where: records.Range) -> tuple[Diagnostic, ...]:
        """The published findings of `uri` that touch `where` (code points)."""
        state = self.documents.get(uri)
        if state is None:
            return ()
        touching = []
        for finding in state.findings:
            start, end = _span_positions(finding.span)
            if start <= where.end and where.start <= end:
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


def _compile_stage(
    text: str, file: str
) -> tuple[CompileResult, LintConfig, tuple[Diagnostic, ...], tuple[Diagnostic, ...]]:
    """Compile `text`: the result, the project configuration and its problems, and the
    compile findings with the project's and the chart's settings applied."""
    config, problems = _project_config(file)
    try:
        result = compile_source(text, file)
    except Exception as exc:  # a bug in statekit: a positioned finding, never a dead server
        crash = _crash(file, exc)
        return CompileResult(None, (crash,), text), config, problems, (*problems, crash)
    found = [*problems, *result.diagnostics]
    chart_config = config
    if result.chart is not None:
        chart_config, chart_problems = with_chart_settings(config, result.chart.lint, file)
        found.extend(chart_problems)
    kept = (chart_config.effective(d) for d in found)
    findings = tuple(sorted((d for d in kept if d is not None), key=Diagnostic.sort_key))
    return result, config, problems, findings


def _analysis_stage(
    compiled: CompileResult,
    file: str,
    config: LintConfig,
    problems: tuple[Diagnostic, ...],
    options: ExplorationOptions,
) -> tuple[Diagnostic, ...]:
    """Every finding of the compiled chart, as `statekit lint` reports them."""
    try:
        found = lint_compiled(compiled, file, config, options)
    except _Superseded:
        raise
    except Exception as exc:  # a bug in statekit: a positioned finding, never a dead server
        found = [*compiled.diagnostics, _crash(file, exc)]
    return tuple(sorted([*problems, *found], key=Diagnostic.sort_key))


def _project_config(file: str) -> tuple[LintConfig, tuple[Diagnostic, ...]]:
    """`[tool.statekit.lint]` of the nearest pyproject.toml; a broken one is a finding."""
    try:
        return load_project_config(find_pyproject(Path(file).absolute().parent)), ()
    except ConfigError as exc:
        return LintConfig(), (
            Diagnostic("config", Severity.ERROR, str(exc), SourceSpan.start_of(file)),
        )


def _crash(file: str, exc: Exception) -> Diagnostic:
    return Diagnostic(
        "internal-error",
        Severity.ERROR,
        f"statekit crashed on this file: {type(exc).__name__}: {exc}",
        SourceSpan.start_of(file),
        ("please report this",),
    )


# --- conversions (code points here, the client's units there) --------------------------


def _span_positions(span: SourceSpan) -> tuple[records.Position, records.Position]:
    start = records.Position(max(span.line - 1, 0), max(span.column - 1, 0))
    end = records.Position(max(span.end_line - 1, 0), max(span.end_column - 1, 0))
    return start, max(start, end)


def _to_client(document: TextDocument, where: records.Range) -> types.Range:
    return document.range_to_client_units(
        ServerTextRange(
            start=ServerTextPosition(where.start.line, where.start.character),
            end=ServerTextPosition(where.end.line, where.end.character),
        )
    )


def _from_client(document: TextDocument, position: types.Position) -> records.Position:
    server = document.position_from_client_units(position)
    return records.Position(server.line, server.character)


def _range_from_client(document: TextDocument, where: types.Range) -> records.Range:
    return records.Range(_from_client(document, where.start), _from_client(document, where.end))


def span_range(document: TextDocument, span: SourceSpan) -> types.Range:
    """The LSP range of a statekit span in `document` (1-based code points to client units)."""
    start, end = _span_positions(span)
    return _to_client(document, records.Range(start, end))


def lsp_diagnostic(finding: Diagnostic, document: TextDocument, file: str) -> types.Diagnostic:
    """A statekit finding as an LSP diagnostic: related places and notes as relatedInformation."""
    here = span_range(document, finding.span)
    related = [
        types.DiagnosticRelatedInformation(
            location=types.Location(
                uri=_uri_of(r.span.file, document, file), range=_range_in(r.span, document, file)
            ),
            message=r.message,
        )
        for r in finding.related
    ]
    related += [
        types.DiagnosticRelatedInformation(
            location=types.Location(uri=document.uri, range=here), message=note
        )
        for note in finding.notes
    ]
    return types.Diagnostic(
        range=here,
        message=finding.message,
        severity=_SEVERITY.get(finding.severity, types.DiagnosticSeverity.Information),
        code=finding.slug,
        source=SOURCE,
        related_information=related or None,
    )


def _uri_of(span_file: str, document: TextDocument, file: str) -> str:
    if span_file == file:
        return document.uri
    return Path(span_file).absolute().as_uri()


def _range_in(span: SourceSpan, document: TextDocument, file: str) -> types.Range:
    if span.file == file:
        return span_range(document, span)
    start, end = _span_positions(span)  # another file: code points, as best we know
    return types.Range(
        start=types.Position(start.line, start.character),
        end=types.Position(end.line, end.character),
    )


def _text_edit(document: TextDocument, edit: records.TextEdit) -> types.TextEdit:
    return types.TextEdit(range=_to_client(document, edit.range), new_text=edit.new_text)


def _completion(document: TextDocument, item: records.CompletionItem) -> types.CompletionItem:
    return types.CompletionItem(
        label=item.label,
        kind=types.CompletionItemKind(int(item.kind)),
        detail=item.detail,
        text_edit=_text_edit(document, item.edit),
        documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=item.documentation)
        if item.documentation
        else None,
    )


def _symbol(document: TextDocument, symbol: records.DocumentSymbol) -> types.DocumentSymbol:
    return types.DocumentSymbol(
        name=symbol.name,
        kind=types.SymbolKind(int(symbol.kind)),
        detail=symbol.detail or None,
        range=_to_client(document, symbol.range),
        selection_range=_to_client(document, symbol.selection_range),
        children=[_symbol(document, c) for c in symbol.children] or None,
    )


# --- the server and its features -------------------------------------------------------


class _DocumentRequest(Protocol):
    """The parameters of a request about one text document."""

    @property
    def text_document(self) -> types.TextDocumentIdentifier: ...


_Request = TypeVar("_Request", bound=_DocumentRequest)
_Answer = TypeVar("_Answer")
_ChartAnswer = Callable[
    [ChartLanguageServer, navigation.ChartDocument, TextDocument, _Request], _Answer
]


def _chart_request(
    server: ChartLanguageServer, method: str, options: Any | None = None
) -> Callable[[_ChartAnswer[_Request, _Answer]], _ChartAnswer[_Request, _Answer]]:
    """A decorator registering an answer to `method`, a request about one document: it is
    called with the document's current chart and text, and a document that is not a chart
    gets no answer (null)."""

    def register(answer: _ChartAnswer[_Request, _Answer]) -> _ChartAnswer[_Request, _Answer]:
        async def handler(ls: ChartLanguageServer, params: _Request) -> _Answer | None:
            found = await ls.chart_at(params.text_document.uri)
            return None if found is None else answer(ls, found[0], found[1], params)

        server.feature(method, options)(handler)
        return answer

    return register


def make_server(settings: ServerSettings | None = None) -> ChartLanguageServer:
    """A server with every feature registered (start it with `start_io()`)."""
    server = ChartLanguageServer(settings if settings is not None else ServerSettings())

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: ChartLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.opened(params.text_document.uri, params.text_document.language_id)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: ChartLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: ChartLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.saved(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: ChartLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.closed(params.text_document.uri)

    @_chart_request(
        server,
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=[".", "'", '"', " "]),
    )
    def completion(
        ls: ChartLanguageServer,
        chart: navigation.ChartDocument,
        document: TextDocument,
        params: types.CompletionParams,
    ) -> types.CompletionList:
        items = navigation.completions(chart, _from_client(document, params.position))
        return types.CompletionList(
            is_incomplete=False, items=[_completion(document, i) for i in items]
        )

    @_chart_request(server, types.TEXT_DOCUMENT_HOVER)
    def hover(
        ls: ChartLanguageServer,
        chart: navigation.ChartDocument,
        document: TextDocument,
        params: types.HoverParams,
    ) -> types.Hover | None:
        answer = navigation.hover(chart, _from_client(document, params.position))
        if answer is None:
            return None
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=answer.markdown),
            range=_to_client(document, answer.range),
        )

    @_chart_request(server, types.TEXT_DOCUMENT_DEFINITION)
    def definition(
        ls: ChartLanguageServer,
        chart: navigation.ChartDocument,
        document: TextDocument,
        params: types.DefinitionParams,
    ) -> list[types.Location]:
        ranges = navigation.definition(chart, _from_client(document, params.position))
        return [types.Location(uri=document.uri, range=_to_client(document, r)) for r in ranges]

    @_chart_request(server, types.TEXT_DOCUMENT_REFERENCES)
    def references(
        ls: ChartLanguageServer,
        chart: navigation.ChartDocument,
        document: TextDocument,
        params: types.ReferenceParams,
    ) -> list[types.Location]:
        ranges = navigation.references(
            chart,
            _from_client(document, params.position),
            include_declaration=params.context.include_declaration,
        )
        return [types.Location(uri=document.uri, range=_to_client(document, r)) for r in ranges]

    @_chart_request(server, types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbol(
        ls: ChartLanguageServer,
        chart: navigation.ChartDocument,
        document: TextDocument,
        params: types.DocumentSymbolParams,
    ) -> list[types.DocumentSymbol]:
        return [_symbol(document, s) for s in navigation.document_symbols(chart)]

    @_chart_request(server, types.TEXT_DOCUMENT_PREPARE_RENAME)
    def prepare_rename(
        ls: ChartLanguageServer,
        chart: navigation.ChartDocument,
        document: TextDocument,
        params: types.PrepareRenameParams,
    ) -> types.Range | None:
        where = navigation.prepare_rename(chart, _from_client(document, params.position))
        return None if where is None else _to_client(document, where)

    @_chart_request(server, types.TEXT_DOCUMENT_RENAME, types.RenameOptions(prepare_provider=True))
    def rename(
        ls: ChartLanguageServer,
        chart: navigation.ChartDocument,
        document: TextDocument,
        params: types.RenameParams,
    ) -> types.WorkspaceEdit:
        outcome = navigation.rename(chart, _from_client(document, params.position), params.new_name)
        if outcome.refusal is not None:
            raise JsonRpcInvalidRequest(outcome.refusal)
        return types.WorkspaceEdit(
            changes={document.uri: [_text_edit(document, e) for e in outcome.edits]}
        )

    @_chart_request(
        server,
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(
        ls: ChartLanguageServer,
        chart: navigation.ChartDocument,
        document: TextDocument,
        params: types.CodeActionParams,
    ) -> list[types.CodeAction]:
        where = _range_from_client(document, params.range)
        actions = navigation.code_actions(
            chart, where, ls.findings_in(params.text_document.uri, where)
        )
        return [
            types.CodeAction(
                title=a.title,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[d for d in params.context.diagnostics if d.code == a.fixes] or None,
                is_preferred=a.preferred or None,
                edit=types.WorkspaceEdit(
                    changes={document.uri: [_text_edit(document, e) for e in a.edits]}
                ),
            )
            for a in actions
        ]

    @server.command(STATS_COMMAND)
    def stats(ls: ChartLanguageServer, *_args: object) -> dict[str, int]:
        return ls.stats()

    return server
