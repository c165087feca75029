"""Drive one agentic point: `conc` trajectory lanes replaying traces for the job's duration.

The traces are the plan's (`AgenticBench.trace`), else synthetic sessions from
`AgenticBench.synth` (`inferbench traces synth` defaults), with the context rule at the
served max-model-len. The result file is written atomically under its final name only
when the point finished, and GPU power is sampled beside it, as for fixed-length points.
aiperf's artifact files of the point go to `results/<point>/aiperf_artifacts/` (written
before the result file), so `RESULT_DIR=results/<point>` is what InferenceX's agentic
post-processing reads (`inferbench.bench.agentic.aiperf`).
"""

from __future__ import annotations

from pathlib import Path

from inferbench.core.outcome import PointOutcome
from inferbench.core.status import PointStatus
from inferbench.launch.plan import BenchPoint, BenchSpec, client_options
from inferbench.launch.pointpower import log_line as _log_line
from inferbench.launch.pointpower import sampling_power


def aiperf_artifacts_dir(result_path: Path) -> Path:
    """Where a point's aiperf artifact files go: `results/<point>/aiperf_artifacts`."""
    return result_path.with_suffix("") / "aiperf_artifacts"


def replay_point(
    base_url: str, spec: BenchSpec, point: BenchPoint, result_path: Path, log_path: Path
) -> PointOutcome:
    from inferbench.bench.agentic.aiperf import write_aiperf_artifacts
    from inferbench.bench.agentic.api import run_replay
    from inferbench.bench.agentic.options import ReplayOptions
    from inferbench.bench.result import write_point_result
    from inferbench.bench.settings import Endpoint
    from inferbench.bench.traces.source import open_traces

    agentic = spec.agentic
    assert agentic is not None
    traces = open_traces(
        trace=Path(agentic.trace) if agentic.trace else None,
        synth=None if agentic.trace else agentic.synth,
        max_model_len=agentic.max_model_len,
    )
    options = ReplayOptions(
        lanes=point.concurrency,
        duration_s=agentic.duration_s,
        warmup_sessions=agentic.warmup_sessions,
        max_idle_s=agentic.max_idle_s,
    )
    _log_line(
        log_path,
        f"replay {base_url} lanes={point.concurrency} duration={agentic.duration_s:g}s"
        f" traces={len(traces.traces)} ({traces.format})",
    )
    with sampling_power(result_path, log_path):
        outcome = run_replay(
            Endpoint(base_url=base_url, model=spec.model),
            traces,
            options,
            client=client_options(spec),
            max_model_len=agentic.max_model_len,
        )
    result = outcome.result
    write_aiperf_artifacts(aiperf_artifacts_dir(result_path), outcome, base_url)
    write_point_result(result_path, result)
    block = result.inferbench
    reason = block.gate_failure or (
        "" if block.complete else f"incomplete ({block.incomplete_reason})"
    )
    agent = block.agentic
    hit = agent.server.overall_hit_rate if agent and agent.server else None
    _log_line(
        log_path,
        f"done lanes={point.concurrency} requests={result.sa.completed} failed={block.failed}"
        f" server_hit={'n/a' if hit is None else f'{hit:.3f}'} {reason}".rstrip(),
    )
    return PointOutcome(
        concurrency=point.concurrency,
        status=PointStatus.PASSED if outcome.passed else PointStatus.FAILED,
        reason=reason,
        result_file=f"results/{result_path.name}",
    )
