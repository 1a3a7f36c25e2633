"""The language server's requests, registered on a `ChartLanguageServer` by `make_server`.

Each answer is computed by `statekit.lsp.navigation` on code points and
converted here to the client's units.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidRequest
from pygls.workspace import TextDocument

from statekit.compiler.diagnostics import Diagnostic
from statekit.lsp import navigation, records
from statekit.lsp.conversions import (
    SOURCE,
    completion_item,
    diagnostic_message,
    document_symbol,
    from_client,
    range_from_client,
    span_range,
    text_edit,
    to_client,
)
from statekit.lsp.server import STATS_COMMAND, ChartLanguageServer
from statekit.lsp.settings import ServerSettings


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
        items = navigation.completions(chart, from_client(document, params.position))
        return types.CompletionList(
            is_incomplete=False, items=[completion_item(document, i) for i in items]
        )

    @_chart_request(server, types.TEXT_DOCUMENT_HOVER)
    def hover(
        ls: ChartLanguageServer,
        chart: navigation.ChartDocument,
        document: TextDocument,
        params: types.HoverParams,
    ) -> types.Hover | None:
        answer = navigation.hover(chart, from_client(document, params.position))
        if answer is None:
            return None
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=answer.markdown),
            range=to_client(document, answer.range),
        )

    @_chart_request(server, types.TEXT_DOCUMENT_DEFINITION)
    def definition(
        ls: ChartLanguageServer,
        chart: navigation.ChartDocument,
        document: TextDocument,
        params: types.DefinitionParams,
    ) -> list[types.Location]:
        ranges = navigation.definition(chart, from_client(document, params.position))
        return [types.Location(uri=document.uri, range=to_client(document, r)) for r in ranges]

    @_chart_request(server, types.TEXT_DOCUMENT_REFERENCES)
    def references(
        ls: ChartLanguageServer,
        chart: navigation.ChartDocument,
        document: TextDocument,
        params: types.ReferenceParams,
    ) -> list[types.Location]:
        ranges = navigation.references(
            chart,
            from_client(document, params.position),
            include_declaration=params.context.include_declaration,
        )
        return [types.Location(uri=document.uri, range=to_client(document, r)) for r in ranges]

    @_chart_request(server, types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def documentdocument_symbol(
        ls: ChartLanguageServer,
        chart: navigation.ChartDocument,
        document: TextDocument,
        params: types.DocumentSymbolParams,
    ) -> list[types.DocumentSymbol]:
        return [document_symbol(document, s) for s in navigation.document_symbols(chart)]

    @_chart_request(server, types.TEXT_DOCUMENT_PREPARE_RENAME)
    def prepare_rename(
        ls: ChartLanguageServer,
        chart: navigation.ChartDocument,
        document: TextDocument,
        params: types.PrepareRenameParams,
    ) -> types.Range | None:
        where = navigation.prepare_rename(chart, from_client(document, params.position))
        return None if where is None else to_client(document, where)

    @_chart_request(server, types.TEXT_DOCUMENT_RENAME, types.RenameOptions(prepare_provider=True))
    def rename(
        ls: ChartLanguageServer,
        chart: navigation.ChartDocument,
        document: TextDocument,
        params: types.RenameParams,
    ) -> types.WorkspaceEdit:
        outcome = navigation.rename(chart, from_client(document, params.position), params.new_name)
        if outcome.refusal is not None:
            raise JsonRpcInvalidRequest(outcome.refusal)
        return types.WorkspaceEdit(
            changes={document.uri: [text_edit(document, e) for e in outcome.edits]}
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
        where = range_from_client(document, params.range)
        findings = ls.findings_in(params.text_document.uri, where)
        answers: dict[records.CodeAction, list[types.Diagnostic] | None] = {}
        for finding, named in _named_findings(document, findings, params.context.diagnostics):
            for action in navigation.code_actions(chart, where, [finding]):
                answers.setdefault(action, named)
        if not answers and not any(d.source == SOURCE for d in params.context.diagnostics):
            # the client names none of statekit's findings: every fix on the line
            for action in navigation.code_actions(chart, where, findings):
                named = [d for d in params.context.diagnostics if d.code == action.fixes]
                answers.setdefault(action, named or None)
        return [
            types.CodeAction(
                title=a.title,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=named,
                is_preferred=a.preferred or None,
                edit=types.WorkspaceEdit(
                    changes={document.uri: [text_edit(document, e) for e in a.edits]}
                ),
            )
            for a, named in answers.items()
        ]

    @server.command(STATS_COMMAND)
    def stats(ls: ChartLanguageServer, *_args: object) -> dict[str, int]:
        return ls.stats()

    return server


def _named_findings(
    document: TextDocument, findings: Sequence[Diagnostic], named: Sequence[types.Diagnostic]
) -> Iterator[tuple[Diagnostic, list[types.Diagnostic]]]:
    """The findings the client names in a code-action context (as published: same code,
    message and range), each with the client's diagnostic."""
    for client in named:
        if client.source != SOURCE:
            continue
        for finding in findings:
            if (
                client.code == finding.slug
                and client.message == diagnostic_message(finding)
                and client.range == span_range(document, finding.span)
            ):
                yield finding, [client]
