"""The CLI parses, calls the library and renders: no function in `inferbench.cli` is over 60
lines (decorators included). A longer one holds logic that belongs in the library, or options
that belong on a request model (`inferbench.cli.options`)."""

from __future__ import annotations

import ast
from pathlib import Path

import inferbench.cli

LIMIT = 60


def _lengths(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            assert node.end_lineno is not None
            out.append((f"{path.name}:{node.lineno} {node.name}", node.end_lineno - first + 1))
    return out


def test_no_cli_function_is_over_60_lines() -> None:
    folder = Path(inferbench.cli.__file__).parent
    lengths = [item for path in sorted(folder.glob("*.py")) for item in _lengths(path)]
    assert len(lengths) > 100  # the package's functions were read
    long = [f"{name} ({n} lines)" for name, n in lengths if n > LIMIT]
    assert not long, "move logic into the library: " + ", ".join(long)
