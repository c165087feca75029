"""`make demo`: whole curves of the example tree on the simulator's virtual clock."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inferbench.cli.demo import demo_concurrencies, demo_deployments, find_examples
from inferbench.config.project import load_project

from .clirun import run_cli


def test_each_demo_curve_has_at_least_six_points() -> None:
    deps = demo_deployments(load_project(find_examples(None)))
    assert len(deps) == 3
    for dep in deps:
        assert len(dep.concurrencies) >= 6, (dep.config_key, dep.concurrencies)
    assert demo_concurrencies((4, 8, 16, 32, 64)) == (1, 2, 4, 8, 16, 32, 64)
    assert demo_concurrencies((2048,)) == (32, 64, 128, 256, 512, 1024, 2048)
    assert demo_concurrencies((3, 5)) == (1, 2, 3, 4, 5)


@pytest.mark.slow
def test_the_demo_stores_its_curves_on_the_virtual_clock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = run_cli(["demo", "--runs-dir", str(tmp_path / "runs")], capsys)
    assert ran.code == 0, ran.text
    assert "(21 new records)" in ran.out
    # each point's simulated seconds pass faster than wall seconds: the virtual clock, not a
    # server answering in real time (the demo's speed: benchmarks/demo_time.py)
    done = [
        m.groups()
        for log in (tmp_path / "runs").glob("*/*/logs/client.log")
        for m in re.finditer(r"simulated=([\d.]+)s wall=([\d.]+)s", log.read_text())
    ]
    assert len(done) == 21
    assert all(float(sim) > float(wall) for sim, wall in done), done
