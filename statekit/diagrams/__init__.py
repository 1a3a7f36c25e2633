"""Diagrams and docs of compiled charts: pure functions of the IR, deterministic output.

`model.extract(chart)` gives the small diagram model; `views` decides what
each drawing shows (one drawing, or an overview plus one per composite state
when one drawing would not fit a page, as `estimate` judges from the chart);
`dot` (with `dot_text`, `dot_notes` and the colours of `palette`), `mermaid`
and `markdown` render text from them;
`classify` builds the state x event classification table; `outputs` names
the files. `layout` is the one module that imports graphviz: it runs `dot`
under a timeout.
"""
