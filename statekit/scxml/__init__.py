"""SCXML in: read an SCXML document and write the equivalent statekit chart.

`read_scxml` parses hostile-safe XML with positions (`document`), `chart_of`
translates it (`translate`), refusing what statekit cannot express with an
`ScxmlError` at the element's file:line:col.
"""

from statekit.scxml.document import Element, ScxmlError, read_scxml
from statekit.scxml.translate import Translation, chart_of, chart_yaml

__all__ = ["Element", "ScxmlError", "Translation", "chart_of", "chart_yaml", "read_scxml"]
