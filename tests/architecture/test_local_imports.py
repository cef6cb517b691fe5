"""Function-level imports in the core only where a comment says why (issue 35, item 7): an
import inside a function of ``wharf/`` carries a comment on its line or the line above
(a library loaded on first use, a mode only some processes run in). Everything else is
imported at the top of its module, where import-linter and a reader see it first."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def unexplained(source: str) -> list[int]:
    """The lines of function-level imports in ``source`` with no comment beside them."""
    lines = source.splitlines()
    found = []
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                here, above = lines[node.lineno - 1], lines[node.lineno - 2]
                if "#" not in here and not above.strip().startswith("#"):
                    found.append(node.lineno)
    return sorted(set(found))


def test_the_core_imports_inside_functions_only_with_a_reason():
    offenders = {str(p.relative_to(REPO)): lines for p in sorted((REPO / "wharf").rglob("*.py"))
                 if (lines := unexplained(p.read_text()))}
    assert offenders == {}


def test_the_check_finds_an_unexplained_import():
    """The check can fail."""
    source = ("def f():\n"
              "    import json\n"
              "    return json\n"
              "\n"
              "def g():\n"
              "    # loaded on first use: it opens a C library\n"
              "    import magic\n"
              "    import zlib  # only when compressing\n")
    assert unexplained(source) == [2]
