"""Which package of inferbench may import which: the pipeline's directions, pinned.

Every import counts, at module level, inside functions and under TYPE_CHECKING alike: a lazy
import is still a dependency. The rules:
- the library never imports the CLI;
- `core` (the objects that cross stages) imports nothing else of inferbench;
- `bench` (the load generator) and the simulator's engine never import config, matrix or
  launch: they know an endpoint and a workload, not benchmark trees;
- checks and matrix never import each other (both read config objects);
- config imports no later stage; results and report never import launch or the CLI;
- `engines` (what inferbench knows of each serving engine) imports only `core`, so every
  stage may ask it;
- launch starts the simulator, evals and the bench as what they are (it never imports the
  checks, the store or the report: the demo that chains them is the CLI's);
- the simulator never imports launch, checks, matrix, evals, power or report, nor the results
  store: `sim calibrate` takes measured points as values (the CLI reads the store);
- evals and power are leaves: they import only `core` (and `engines`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

# package -> packages it must never import (first-level names under inferbench)
FORBIDDEN: dict[str, frozenset[str]] = {
    "bench": frozenset(
        {"config", "matrix", "launch", "checks", "sim", "results", "report", "capacity"}
    ),
    "checks": frozenset({"matrix", "launch", "results", "report", "sim", "bench"}),
    "matrix": frozenset({"checks", "launch", "results", "report", "sim", "bench"}),
    "config": frozenset({"checks", "matrix", "launch", "results", "report", "sim", "bench"}),
    "results": frozenset({"launch", "report", "checks", "matrix", "adaptive"}),
    "report": frozenset({"launch", "checks", "matrix", "adaptive"}),
    # the adaptive planner drives launch and the simulator; it reads no store, no report
    "adaptive": frozenset({"checks", "results", "report"}),
    # the capacity search measures with the bench or the simulator; it reads no tree, no store
    "capacity": frozenset(
        {"config", "matrix", "launch", "checks", "results", "report", "adaptive"}
    ),
    "engines": frozenset(
        {
            "config",
            "matrix",
            "launch",
            "checks",
            "sim",
            "results",
            "report",
            "bench",
            "evals",
            "power",
            "catalog",
        }  # fmt: skip
    ),
    "launch": frozenset({"checks", "results", "report", "sim", "adaptive"}),
    "sim": frozenset(
        {"launch", "checks", "matrix", "evals", "power", "report", "adaptive", "capacity"}
    ),
    "evals": frozenset(
        {"config", "matrix", "launch", "checks", "sim", "results", "report", "bench", "power"}
    ),
    "power": frozenset(
        {"config", "matrix", "launch", "checks", "sim", "results", "report", "bench", "evals"}
    ),
}
SIM_ENGINE_FORBIDDEN = frozenset({"config", "matrix", "launch", "checks", "cli"})
# module -> package prefix -> modules it must never import (finer than FORBIDDEN)
FORBIDDEN_MODULES: dict[str, frozenset[str]] = {"sim": frozenset({"inferbench.results.store"})}


def module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, src: Path) -> set[str]:
    """Every `inferbench...` module named by an import in `path` (relative ones resolved)."""
    module = module_name(path, src)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)  # `from pkg import module`
    return {name for name in found if name == "inferbench" or name.startswith("inferbench.")}


def import_graph(src: Path) -> dict[str, set[str]]:
    modules = {module_name(p, src): p for p in (src / "inferbench").rglob("*.py")}
    return {
        name: {m for m in imports_of(path, src) if m in modules} for name, path in modules.items()
    }


def package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def violations(graph: dict[str, set[str]]) -> list[str]:
    found: list[str] = []
    for module, targets in sorted(graph.items()):
        own = package(module)
        for target in sorted(targets):
            other = package(target)
            if other == own:
                continue
            if other == "cli":
                found.append(f"{module} imports the CLI ({target})")
            if own == "core":
                found.append(f"{module}: core imports nothing else of inferbench ({target})")
            if other in FORBIDDEN.get(own, ()):
                found.append(f"{module}: {own} never imports {other} ({target})")
            if target in FORBIDDEN_MODULES.get(own, ()):
                found.append(f"{module}: {own} never imports {target}")
    for module in sorted(reachable(graph, "inferbench.sim.engine")):
        for target in sorted(graph[module]):
            if package(target) in SIM_ENGINE_FORBIDDEN:
                found.append(f"{module} (reached from sim.engine) imports {target}")
    return found


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for target in graph.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_the_library_keeps_its_import_directions() -> None:
    graph = import_graph(SRC)
    assert "inferbench.core.job" in graph and "inferbench.sim.engine" in graph
    assert violations(graph) == []


def _tree(tmp_path: Path, files: Iterable[tuple[str, str]]) -> Path:
    for name, text in files:
        path = tmp_path / "inferbench" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ((("core/job.py", "from inferbench.config import base\n"),), "core imports nothing"),
        ((("results/a.py", "def f():\n    import inferbench.cli.main\n"),), "imports the CLI"),
        ((("bench/x.py", "if 1:\n    from inferbench.launch.plan import Plan\n"),), "bench never"),
        ((("checks/r.py", "from ..matrix import expand\n"),), "checks never imports matrix"),
        ((("engines/x.py", "from inferbench.config import base\n"),), "engines never imports"),
        ((("launch/demo.py", "from inferbench.report import a\n"),), "launch never imports"),
        ((("evals/x.py", "from inferbench.bench import a\n"),), "evals never imports bench"),
        (
            (
                (
                    "sim/calibrate.py",
                    "def f():\n    from inferbench.results.store import open_store\n",
                ),
                ("results/store.py", ""),
            ),
            "sim never imports inferbench.results.store",
        ),
        (
            (
                ("sim/engine.py", "from inferbench.sim import perf\n"),
                ("sim/perf.py", "from inferbench.config.layout import x\n"),
            ),
            "reached from sim.engine",
        ),
    ],
)
def test_a_forbidden_import_is_found(
    tmp_path: Path, files: tuple[tuple[str, str], ...], expected: str
) -> None:
    base = (
        ("__init__.py", ""),
        ("sim/engine.py", ""),
        ("config/__init__.py", ""),
        ("config/base.py", ""),
        ("config/layout.py", ""),
        ("cli/main.py", ""),
        ("launch/plan.py", ""),
        ("matrix/__init__.py", ""),
        ("matrix/expand.py", ""),
        ("report/__init__.py", ""),
        ("bench/__init__.py", ""),
    )
    src = _tree(tmp_path, (*base, *files))
    found = violations(import_graph(src))
    assert any(expected in line for line in found), found
