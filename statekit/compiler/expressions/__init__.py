"""The safe expression language: tree, checker, closures, and `compile_expression` over them."""
