"""The docs pages' links between charts that invoke or message charts.

A chart that invokes others lists each invocation (state, invoke id, child
chart) with a link to the child's page ("Invoked charts"); a chart that others
invoke lists them, with links back ("Invoked by"). Likewise a chart whose
`send: {to: {chart: X, instance: ...}}` messages another instance lists each
such send ("Sends to": event, chart X, the instance expression, the `reply:`
event), and X's page lists the senders ("Receives from"). The sections appear
only on the pages of charts that have such links (the pages of other charts
do not change), and a chart that has no page in the site is named without a
link. `invocation_links` gives the DOT boxes the same addresses.
"""

from __future__ import annotations

from collections.abc import Mapping

from statekit.compiler.chart_set import ChartSet, sends_to_charts
from statekit.compiler.invocations import Invocation
from statekit.compiler.ir import CompiledChart
from statekit.compiler.markdown_text import markdown_code, markdown_text

PageKey = tuple[str, int]
"""A page's chart: its name and version."""


def _link(name: str, page: str | None) -> str:
    text = markdown_text(name)
    return f"[{text}]({page.replace(' ', '%20')})" if page is not None else text


def invocation_links(
    chart: CompiledChart, chart_set: ChartSet, pages: Mapping[PageKey, str]
) -> dict[tuple[str, str], str]:
    """(invoke id, chart name) → the page of that child chart, for the invocations whose
    child has a page (an invoke that chooses its chart: one per case's chart)."""
    links: dict[tuple[str, str], str] = {}
    for invoked in chart_set.invoked(chart):
        child = invoked.child
        if child is not None and (page := pages.get((child.name, child.version))) is not None:
            links[(invoked.invocation.id, invoked.chart_name)] = page
    return links


def _cases(inv: Invocation, chart: str) -> str:
    """` (if 'card')`: the values of `by` that start `chart` (nothing: a fixed chart)."""
    if inv.choice is None:
        return ""
    values = ", ".join(markdown_code(repr(c.value)) for c in inv.choice.cases if c.chart == chart)
    return f" (if {values})"


def family_sections(
    chart: CompiledChart, chart_set: ChartSet, pages: Mapping[PageKey, str]
) -> list[str]:
    """The Markdown lines of the "Invoked charts" and "Invoked by" sections (none for a
    chart that neither invokes nor is invoked)."""
    code = markdown_code
    out: list[str] = []
    invoked = chart_set.invoked(chart)
    if invoked:
        out += [
            "## Invoked charts",
            "",
            "| state | invoke | chart | version |",
            "|---|---|---|---|",
        ]
        for found in invoked:
            inv, child = found.invocation, found.child
            page = pages.get((child.name, child.version)) if child is not None else None
            version = str(inv.version) if inv.version is not None else "newest"
            if child is None:
                version += " (not among these charts)"
            out.append(
                f"| {code(chart.states[inv.state].path)} | {code(inv.id)} | "
                f"{_link(found.chart_name, page)}{_cases(inv, found.chart_name)} | {version} |"
            )
        out.append("")
    invokers = chart_set.invokers(chart)
    if invokers:
        out += ["## Invoked by", "", "| chart | state | invoke |", "|---|---|---|"]
        for found in invokers:
            parent, inv = found.parent, found.invocation
            page = pages.get((parent.name, parent.version))
            out.append(
                f"| {_link(parent.name, page)} | {code(parent.states[inv.state].path)} | "
                f"{code(inv.id)} |"
            )
        out.append("")
    return out + _message_sections(chart, chart_set, pages)


def _message_sections(
    chart: CompiledChart, chart_set: ChartSet, pages: Mapping[PageKey, str]
) -> list[str]:
    """The "Sends to" and "Receives from" sections (see the module docstring)."""
    code = markdown_code
    out: list[str] = []
    sends = sends_to_charts(chart)
    if sends:
        out += ["## Sends to", "", "| event | chart | instance | reply |", "|---|---|---|---|"]
        for send, target in sends:
            receiver = chart_set.resolve(target.chart, None, chart.file)
            page = pages.get((receiver.name, receiver.version)) if receiver else None
            name = _link(target.chart, page)
            if receiver is None:
                name += " (not among these charts)"
            reply = code(target.reply) if target.reply is not None else "none"
            out.append(
                f"| {code(send.event)} | {name} | {code(target.instance.source)} | {reply} |"
            )
        out.append("")
    senders = [
        (sender, send)
        for sender in chart_set.charts
        for send, target in sends_to_charts(sender)
        if chart_set.resolve(target.chart, None, sender.file) is chart
    ]
    if senders:
        out += ["## Receives from", "", "| chart | event |", "|---|---|"]
        for sender, send in senders:
            page = pages.get((sender.name, sender.version))
            out.append(f"| {_link(sender.name, page)} | {code(send.event)} |")
        out.append("")
    return out
