"""Drive one concurrency point with inferbench's load generator and keep its result file.

The result is written to a temporary name and renamed into `results/conc<C>.json` only when
the bench finished, so a killed run never leaves a half point that a resume would trust.
"""

from __future__ import annotations

from pathlib import Path

from inferbench.launch.local import PointRunner
from inferbench.launch.outcome import PointOutcome
from inferbench.launch.plan import BenchPoint, BenchSpec


def bench_point_runner() -> PointRunner:
    """The point runner backed by `inferbench.bench.api.run_bench` (in this process)."""

    def run(
        base_url: str, spec: BenchSpec, point: BenchPoint, result_path: Path, log_path: Path
    ) -> PointOutcome:
        try:
            from inferbench.bench import api  # noqa: F401
        except ImportError:
            return PointOutcome(
                concurrency=point.concurrency,
                ok=False,
                reason="the load generator (inferbench.bench.api) is not installed",
            )
        raise RuntimeError("unreachable until the bench API is wired")

    return run
