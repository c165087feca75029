"""A real point result to shape synthetic loads from, and a sweep job of the examples."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from inferbench.bench.result import PointResult

REPO = Path(__file__).resolve().parents[2]
JOB_KEY = "llama3.1-8b-bf16-h200-vllm"


@pytest.fixture(scope="session")
def job_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    """`jobs.json:0`: the examples' Llama-3.1-8B H200 vLLM job at 1k1k, as `sweep` writes it."""
    from inferbench.cli.main import main

    out = tmp_path_factory.mktemp("jobs") / "jobs.json"
    args = ["sweep", "--root", str(REPO / "examples"), "--config-keys", JOB_KEY]
    with pytest.raises(SystemExit) as done:
        main([*args, "--seq-lens", "1k1k", "--format", "json", "--output", str(out)])
    assert done.value.code == 0
    return f"{out}:0"


@pytest.fixture(scope="session")
def template(job_file: str) -> PointResult:
    from inferbench.capacity.measure import sim_measure
    from inferbench.sim.points import open_job

    return sim_measure(open_job(Path(job_file)), prompts_per_load=2)(4)


def shaped(template: PointResult, **sa: float) -> PointResult:
    """`template` with some sa-bench fields replaced (a load's latencies, made up)."""
    return template.model_copy(update={"sa": template.sa.model_copy(update=sa)})


Curve = Callable[[int], float]
