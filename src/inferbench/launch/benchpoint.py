"""Drive one concurrency point with inferbench's load generator and keep its result file.

The bench stage's library call (`inferbench.bench.api.run_point`) is resolved when a point
runs, so the launch stage builds and is tested without it; while it is not installed every
job ends as `bench_error` with a reason saying so, and no point is counted as finished.
The result file is expected under its final name only once the point finished (the bench
writes it atomically), so a killed run never leaves half a point that a resume would trust.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from inferbench.bench.naming import repeat_path
from inferbench.core.errors import ExternalToolError
from inferbench.core.outcome import PointOutcome
from inferbench.core.status import PointStatus
from inferbench.launch.local import PointRunner
from inferbench.launch.plan import BenchPoint, BenchSpec, client_options
from inferbench.launch.pointpower import log_line as _log_line
from inferbench.launch.pointpower import sampling_power
from inferbench.launch.replaypoint import replay_point as _replay_point

BENCH_API = "inferbench.bench.api"
INTERRUPTED = "interrupted"  # the load generator's reason for a point cut short by Ctrl-C


def _bench_api() -> Any:
    try:
        module = importlib.import_module(BENCH_API)
    except ImportError:
        module = None
    if getattr(module, "run_point", None) is None:
        raise ExternalToolError(
            f"the load generator ({BENCH_API}.run_bench) is not available in this install",
            hint="install inferbench with its bench stage, or run the sweep with --dry-run",
        )
    return module


def bench_point_runner() -> PointRunner:
    """The point runner backed by the bench stage's library call, in this process."""

    def run(
        base_url: str, spec: BenchSpec, point: BenchPoint, result_path: Path, log_path: Path
    ) -> PointOutcome:
        if spec.agentic is not None:
            return _replay_point(base_url, spec, point, result_path, log_path)
        api = _bench_api()
        from inferbench.bench.schedule import LoadPoint
        from inferbench.bench.settings import Endpoint
        from inferbench.bench.workload import RandomWorkload, RangeMode

        endpoint = Endpoint(base_url=base_url, model=spec.model)
        workload = RandomWorkload(
            isl=spec.isl,
            osl=spec.osl,
            range_ratio=spec.random_range_ratio,
            range_mode=RangeMode.INFERENCEX,
        )
        load = LoadPoint(
            concurrency=point.concurrency,
            num_prompts=point.num_prompts,
            warmups=point.num_warmups,
        )
        options = api.BenchOptions(client=client_options(spec))
        reasons: list[str] = []
        passed = True
        for repeat in range(1, spec.repeats + 1):
            # repeat k > 1 is its own measured point of the same identity: conc8_r2.json
            path = repeat_path(result_path, repeat)
            ok, reason = _measure(api, endpoint, workload, load, options, path, log_path)
            passed = passed and ok
            if reason:
                reasons.append(reason if spec.repeats == 1 else f"repeat {repeat}: {reason}")
        return PointOutcome(
            concurrency=point.concurrency,
            status=PointStatus.PASSED if passed else PointStatus.FAILED,
            reason="; ".join(reasons),
            result_file=f"results/{result_path.name}",
        )

    return run


def _measure(
    api: Any,
    endpoint: Any,
    workload: Any,
    load: Any,
    options: Any,
    result_path: Path,
    log_path: Path,
) -> tuple[bool, str]:
    """One measurement of a point into `result_path`: (passed, why not)."""
    from inferbench.bench.result import write_point_result

    conc = load.concurrency
    _log_line(log_path, f"bench {endpoint.base_url} conc={conc} n={load.num_prompts}")
    with sampling_power(result_path, log_path):
        outcome = api.run_point(endpoint, workload, load, options)
    result = outcome.result
    block = result.inferbench
    if not block.complete and block.incomplete_reason == INTERRUPTED:
        # a second Ctrl-C cut the point short: it stays to do (incomplete, not failed);
        # what it measured is kept beside the logs, never where a resume would trust it
        write_point_result(log_path.parent / f"{result_path.stem}.interrupted.json", result)
        _log_line(log_path, f"interrupted conc={conc}")
        raise KeyboardInterrupt
    write_point_result(result_path, result)
    reason = block.gate_failure or (
        "" if block.complete else f"incomplete ({block.incomplete_reason})"
    )
    counts = f"completed={result.sa.completed} failed={block.failed}"
    # `done conc=<C>` as every other point writes it; a repeat adds which (conc8_r2.json)
    repeat = result_path.stem.partition("_r")[2]
    which = f"conc={conc}" + (f" repeat={repeat}" if repeat else "")
    _log_line(log_path, f"done {which} {counts} {reason}".rstrip())
    return bool(outcome.passed), reason
