"""The compiler: YAML text → positioned tree → schema check → model → immutable IR.

- `source/`: the YAML text loaded into a tree whose nodes keep their positions
  (`loader`, `nodes`, and the `limits` on what is accepted);
- `schema/`: the shipped JSON Schema (`document`), the check against it
  (`validator`), its errors in the DSL's terms (`explanation`), and the
  `vocabulary` the compiler reads from it;
- `expressions/`: the safe expression language (`expression`: compile one;
  `checker`, `scope`, `positions`, `language`, `type_relations`; the typed
  `tree` and its `closures`);
- `model/`: pass 1 (`numbering`), pass 2 (`resolution`, with `declarations`,
  `effect_compiler`, `invariants`, `state_index`), and `freezing` into the IR
  (with `redaction`: which fields evidence must redact);
- `rules/`: one module per slug the compiler reports;
- `pipeline` runs it all; `ir`, `diagnostics`, `value_types`, `serialize`,
  `canonical` (the canonical JSON) and `scxml_procedures` are what the later stages
  read.
"""
