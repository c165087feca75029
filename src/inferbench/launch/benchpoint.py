"""Drive one concurrency point with inferbench's load generator and keep its result file.

The bench stage's library call (`inferbench.bench.api.run_bench`) is resolved when a point
runs, so the launch stage builds and is tested without it; while it is not installed every
job ends as `bench_error` with a reason saying so, and no point is counted as finished.
The result file is expected under its final name only once the point finished (the bench
writes it atomically), so a killed run never leaves half a point that a resume would trust.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inferbench.errors import ExternalToolError
from inferbench.launch.local import PointRunner
from inferbench.launch.outcome import PointOutcome
from inferbench.launch.plan import BenchPoint, BenchSpec

BENCH_API = "inferbench.bench.api"


def _run_bench() -> Callable[..., Any]:
    try:
        module = importlib.import_module(BENCH_API)
    except ImportError:
        module = None
    run = getattr(module, "run_bench", None)
    if run is None:
        raise ExternalToolError(
            f"the load generator ({BENCH_API}.run_bench) is not available in this install",
            hint="install inferbench with its bench stage, or run the sweep with --dry-run",
        )
    return run


def bench_point_runner() -> PointRunner:
    """The point runner backed by the bench stage's library call, in this process."""

    def run(
        base_url: str, spec: BenchSpec, point: BenchPoint, result_path: Path, log_path: Path
    ) -> PointOutcome:
        run_bench = _run_bench()
        result = run_bench(
            base_url=base_url,
            model=spec.model,
            isl=spec.isl,
            osl=spec.osl,
            random_range_ratio=spec.random_range_ratio,
            concurrency=point.concurrency,
            num_prompts=point.num_prompts,
            num_warmups=point.num_warmups,
            max_failure_rate=spec.max_failure_rate,
            result_path=result_path,
            log_path=log_path,
        )
        gate = getattr(result, "gate_failure", None)
        return PointOutcome(
            concurrency=point.concurrency,
            ok=gate is None,
            reason=str(gate or ""),
            result_file=f"results/{result_path.name}",
        )

    return run
