"""The published-points table the default calibration is fitted on: the benchmark reads a
figure for each of its ten deployments (benchmarks/data/published_points.yaml)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from ruamel.yaml import YAML

from .oracles import PUBLISHED_POINTS_ENV, REPO_ROOT

SCRIPT = REPO_ROOT / "benchmarks" / "sim_calibration.py"


def _benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sim_calibration", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_calibration_point_has_published_figures(published_points_file: Path) -> None:
    bench = _benchmark()
    figures = bench.published(published_points_file)
    names = [p["name"] for p in YAML(typ="safe").load(bench.POINTS.read_text())["points"]]
    assert len(names) == 10 and set(names) <= set(figures)
    for name in names:
        measured = figures[name]
        assert measured.tok_s_gpu > 0 and measured.interactivity > 0, name
    points = bench.load(bench.POINTS, published_points_file)
    assert [p.name for p in points] == names


def test_benchmark_without_the_table_says_how_to_give_it(tmp_path: Path) -> None:
    bench = _benchmark()
    assert bench.PUBLISHED_ENV == PUBLISHED_POINTS_ENV
    missing = tmp_path / "absent.md"
    assert bench.published_file(missing) is None
    env = {k: v for k, v in os.environ.items() if k != PUBLISHED_POINTS_ENV}
    for args in ([], ["--published", str(missing)]):
        done = subprocess.run(
            [sys.executable, str(SCRIPT), *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=120,
        )
        assert done.returncode == 2, done.stderr
        assert "--published FILE" in done.stderr and PUBLISHED_POINTS_ENV in done.stderr
