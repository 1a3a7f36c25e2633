"""The language server's pure part: navigation over one chart document.

`navigation` answers completion, hover, definition, references, document
symbols, rename and code actions from the document text and its
`CompileResult`, as the plain frozen records of `records` (0-based lines and
characters, characters counted in code points); the server converts them to
LSP messages. Nothing here does I/O.
"""
