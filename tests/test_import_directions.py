"""Which package of inferbench may import which: the allow-list `docs/architecture.md` draws.

The doc's "Import layers" table is the only statement of the rules; this test reads it and
walks every module under `src/inferbench` with `ast`. Every import counts: at module level,
inside a function, under `if TYPE_CHECKING:`, and `importlib.import_module` with a literal
`inferbench...` name. A lazy import is still a dependency and a type-only import still ties
one package to another's objects. A package without a row may import nothing (and fails as
unplaced); a row naming no package in `src` fails as stale.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
DOC = ROOT / "docs" / "architecture.md"
TABLE_HEADING = "## Import layers"
ROOT_PACKAGE = ""  # `inferbench` itself (`__version__`): every package may import it
# the simulator's engine and what it reaches know a deployment, not benchmark trees
SIM_ENGINE = "inferbench.sim.engine"
SIM_ENGINE_FORBIDDEN = frozenset({"config", "matrix", "launch", "checks", "cli"})


@dataclass(frozen=True)
class Layer:
    layer: int
    may_import: frozenset[str]


def read_layers(doc: str) -> dict[str, Layer]:
    """The doc's table: package -> its layer and the packages it may import."""
    _, found, rest = doc.partition(TABLE_HEADING + "\n")
    assert found, f"{DOC.name} has no '{TABLE_HEADING}' section"
    layers: dict[str, Layer] = {}
    for line in rest.splitlines():
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or not cells[0].isdigit():
            continue  # prose, the header row or the divider
        name = re.fullmatch(r"`(\w+)`", cells[1])
        assert name, f"{DOC.name}: a row's package is one `name`: {line}"
        assert name[1] not in layers, f"{DOC.name}: {name[1]} has two rows"
        allowed = frozenset(re.findall(r"`(\w+)`", cells[2]))
        assert allowed or cells[2] == "nothing", f"{DOC.name}: {name[1]} allows what? {line}"
        layers[name[1]] = Layer(int(cells[0]), allowed)
    assert layers, f"{DOC.name}: the '{TABLE_HEADING}' table has no rows"
    return layers


def module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _literal_import_module(node: ast.Call) -> str | None:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name != "import_module" or not node.args:
        return None
    arg = node.args[0]
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None


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
        elif isinstance(node, ast.Call) and (named := _literal_import_module(node)):
            found.add(named)
    return {name for name in found if name == "inferbench" or name.startswith("inferbench.")}


def import_graph(src: Path) -> dict[str, set[str]]:
    modules = {module_name(p, src): p for p in (src / "inferbench").rglob("*.py")}
    return {
        name: {m for m in imports_of(path, src) if m in modules} for name, path in modules.items()
    }


def package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ROOT_PACKAGE


def packages_in(src: Path) -> set[str]:
    """First-level packages under `src/inferbench` (a folder with Python in it)."""
    top = src / "inferbench"
    return {d.name for d in top.iterdir() if d.is_dir() and any(d.rglob("*.py"))}


def placement_problems(layers: dict[str, Layer], src: Path) -> list[str]:
    found: list[str] = []
    present = packages_in(src)
    for name in sorted(present - layers.keys()):
        found.append(f"{name}: a package docs/architecture.md does not place (add its row)")
    for name in sorted(layers.keys() - present):
        found.append(f"{name}: docs/architecture.md has a row for a package not in src")
    for path in sorted((src / "inferbench").glob("*.py")):
        if path.name != "__init__.py":
            found.append(f"inferbench.{path.stem}: a root module (it belongs in a package)")
    return found


def ordering_problems(layers: dict[str, Layer]) -> list[str]:
    """Rows that allow a package of their own layer or above, or one without a row."""
    found: list[str] = []
    for name, row in sorted(layers.items()):
        for other in sorted(row.may_import):
            target = layers.get(other)
            if target is None:
                found.append(f"{name} may import {other}, which has no row")
            elif target.layer >= row.layer:
                found.append(f"{name} (layer {row.layer}) may import {other} (layer "
                             f"{target.layer}): a row allows only lower layers")  # fmt: skip
    return found


def violations(graph: dict[str, set[str]], layers: dict[str, Layer]) -> list[str]:
    found: list[str] = []
    for module, targets in sorted(graph.items()):
        own = package(module)
        row = layers.get(own, Layer(-1, frozenset()))
        for target in sorted(targets):
            other = package(target)
            if other in (own, ROOT_PACKAGE):
                continue
            if own == ROOT_PACKAGE or other not in row.may_import:
                found.append(f"{module} imports {target}: {own or 'inferbench'} may not "
                             f"import {other} (docs/architecture.md, Import layers)")  # fmt: skip
    for module in sorted(reachable(graph, SIM_ENGINE)):
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


def doc_layers() -> dict[str, Layer]:
    return read_layers(DOC.read_text(encoding="utf-8"))


def test_the_doc_places_every_package_in_a_layer() -> None:
    layers = doc_layers()
    assert {"core", "engines", "sim", "cli"} <= layers.keys()
    assert placement_problems(layers, SRC) == []
    assert ordering_problems(layers) == []


def test_the_library_imports_only_what_the_doc_allows() -> None:
    graph = import_graph(SRC)
    assert "inferbench.core.job" in graph and SIM_ENGINE in graph
    assert violations(graph, doc_layers()) == []


# -- the rules catch what they should, on a throwaway tree ------------------------------------

LAYERS = """# Architecture

## Import layers

| layer | package | may import | why |
|---|---|---|---|
| 0 | `core` | nothing | leaf |
| 1 | `config` | `core` | trees |
| 1 | `bench` | `core` | load |
| 2 | `sim` | `core`, `config`, `bench` | simulator |
| 3 | `cli` | `core`, `config`, `bench`, `sim` | commands |

## Next
| 9 | `ignored` | `core` | after the section |
"""


def _tree(tmp_path: Path, files: Iterable[tuple[str, str]]) -> Path:
    base = (
        ("__init__.py", ""),
        ("core/job.py", ""),
        ("config/__init__.py", ""),
        ("config/base.py", ""),
        ("config/layout.py", ""),
        ("bench/__init__.py", ""),
        ("sim/engine.py", ""),
        ("sim/perf.py", ""),
        ("cli/main.py", ""),
    )
    for name, text in (*base, *files):
        path = tmp_path / "inferbench" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            (("core/job.py", "from inferbench.config import base\n"),),
            "inferbench.core.job imports inferbench.config.base: core may not import config",
        ),
        (
            (("sim/perf.py", "def f():\n    import inferbench.cli.main\n"),),
            "sim may not import cli",
        ),
        (
            (("bench/x.py", "if 1:\n    from inferbench.sim.perf import Plan\n"),),
            "bench may not import sim",
        ),
        (
            (("config/r.py", "from ..bench import x\n"),),
            "config may not import bench",
        ),
        (
            (
                (
                    "bench/y.py",
                    "from typing import TYPE_CHECKING\n"
                    "if TYPE_CHECKING:\n    from inferbench.config.base import Base\n",
                ),
            ),
            "bench may not import config",
        ),
        (
            (("bench/z.py", "import importlib\nimportlib.import_module('inferbench.sim.perf')\n"),),
            "bench may not import sim",
        ),
        (
            # a package the doc has no row for may import nothing, not even core
            (("newpkg/a.py", "from inferbench.core import job\n"),),
            "newpkg may not import core",
        ),
        (
            (
                ("sim/engine.py", "from inferbench.sim import perf\n"),
                ("sim/perf.py", "from inferbench.config.layout import x\n"),
            ),  # fmt: skip
            "inferbench.sim.perf (reached from sim.engine) imports inferbench.config.layout",
        ),
    ],
)
def test_a_forbidden_import_is_found(
    tmp_path: Path, files: tuple[tuple[str, str], ...], expected: str
) -> None:
    src = _tree(tmp_path, files)
    found = violations(import_graph(src), read_layers(LAYERS))
    assert any(expected in line for line in found), found


def test_allowed_imports_pass(tmp_path: Path) -> None:
    src = _tree(
        tmp_path,
        (
            ("sim/perf.py", "import inferbench\nfrom inferbench.bench import x\n"),
            ("cli/main.py", "from ..sim import perf\nfrom inferbench.core.job import Job\n"),
        ),
    )
    layers = read_layers(LAYERS)
    assert "ignored" not in layers
    assert violations(import_graph(src), layers) == []
    assert placement_problems(layers, src) == []
    assert ordering_problems(layers) == []


def test_an_unplaced_package_a_stale_row_and_a_root_module_are_named(tmp_path: Path) -> None:
    src = _tree(tmp_path, (("newpkg/a.py", ""), ("errors.py", "")))
    (src / "inferbench" / "bench" / "__init__.py").unlink()
    (src / "inferbench" / "bench").rmdir()
    found = placement_problems(read_layers(LAYERS), src)
    assert found == [
        "newpkg: a package docs/architecture.md does not place (add its row)",
        "bench: docs/architecture.md has a row for a package not in src",
        "inferbench.errors: a root module (it belongs in a package)",
    ]


def test_a_row_may_allow_only_lower_layers() -> None:
    upward = LAYERS.replace("| 1 | `config` | `core` |", "| 1 | `config` | `core`, `sim` |")
    sideways = LAYERS.replace("| 1 | `bench` | `core` |", "| 1 | `bench` | `core`, `config` |")
    unknown = LAYERS.replace("| 1 | `bench` | `core` |", "| 1 | `bench` | `core`, `gpu` |")
    assert ordering_problems(read_layers(upward)) == [
        "config (layer 1) may import sim (layer 2): a row allows only lower layers"
    ]
    assert ordering_problems(read_layers(sideways)) == [
        "bench (layer 1) may import config (layer 1): a row allows only lower layers"
    ]
    assert ordering_problems(read_layers(unknown)) == ["bench may import gpu, which has no row"]
