"""What the search measures with: a server through the load generator, or the simulator.

Both give a `PointResult` per load, the same result file either writes, so the search and
its verdicts do not know which measured. A measured point is written to the result folder
(`conc<C>.json`, `conc<C>_r<k>.json` for repeats: `bench.naming`'s rule); a simulated one is
a prediction and labelled so by its backend (`inferbench-sim`).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from inferbench.bench.api import BenchOptions, run_point, sa_bench_workload
from inferbench.bench.naming import point_stem
from inferbench.bench.preset import SA_BENCH
from inferbench.bench.result import PointResult, read_point_result, write_point_result
from inferbench.bench.schedule import LoadPoint
from inferbench.bench.settings import Endpoint
from inferbench.bench.traces.model import TraceSet
from inferbench.capacity.search import Measure
from inferbench.sim.points import JobPoints


def prompts_for(load: int, per_load: int) -> int:
    """sa-bench's rule (10 prompts per stream by default), at least one wave of streams."""
    return max(load, per_load * load)


def bench_measure(
    endpoint: Endpoint,
    isl: int,
    osl: int,
    *,
    prompts_per_load: int = SA_BENCH.prompts_per_conc,
    result_dir: Path | None = None,
    options: BenchOptions | None = None,
) -> Measure:
    """Measure a load on `endpoint`: InferenceX's sa-bench workload, a closed loop at the
    load's concurrency with one wave of warm-ups; each result file kept in `result_dir`."""
    workload = sa_bench_workload(isl, osl)
    options = options or BenchOptions()
    seen: Counter[int] = Counter()

    def measure(load: int) -> PointResult:
        point = LoadPoint(
            concurrency=load, num_prompts=prompts_for(load, prompts_per_load), warmups=load
        )
        result = run_point(endpoint, workload, point, options).result
        seen[load] += 1
        if result_dir is not None:
            repeat = seen[load]
            stem = point_stem(load) + (f"_r{repeat}" if repeat > 1 else "")
            write_point_result(result_dir / f"{stem}.json", result)
        return result

    return measure


def sim_measure(job: JobPoints, *, prompts_per_load: int = SA_BENCH.prompts_per_conc) -> Measure:
    """Predict a load on the simulated deployment (a virtual clock: seconds per point)."""
    from inferbench.sim.estimate import estimate
    from inferbench.sim.summary import point_result_of

    def measure(load: int) -> PointResult:
        run = estimate(
            job.deployment, load, num_prompts=prompts_for(load, prompts_per_load), seed=job.seed
        )
        result: PointResult = point_result_of(run, job.deployment, base_url="sim://capacity")
        return result

    return measure


def replay_measure(
    endpoint: Endpoint,
    traces: TraceSet,
    *,
    duration_s: float,
    max_idle_s: float = 300.0,
    result_dir: Path | None = None,
) -> Measure:
    """Measure a load of agent sessions on `endpoint`: `load` lanes replaying `traces` for
    `duration_s`, each turn a request (its TTFT and output speed judged per turn)."""
    from inferbench.bench.agentic.api import run_replay
    from inferbench.bench.agentic.options import ReplayOptions

    seen: Counter[int] = Counter()

    def measure(load: int) -> PointResult:
        options = ReplayOptions(lanes=load, duration_s=duration_s, max_idle_s=max_idle_s)
        result = run_replay(endpoint, traces, options).result
        seen[load] += 1
        if result_dir is not None:
            stem = point_stem(load) + (f"_r{seen[load]}" if seen[load] > 1 else "")
            write_point_result(result_dir / f"{stem}.json", result)
        return result

    return measure


def sim_replay_measure(
    job: JobPoints,
    folder: Path,
    *,
    duration_s: float,
    trace: str | None,
    synth: str | None,
    max_idle_s: float = 300.0,
) -> Measure:
    """Predict a load of agent sessions on the simulated deployment (virtual clock); the
    result files go to `folder` (`predicted_conc<C>.json`)."""

    def measure(load: int) -> PointResult:
        path = folder / f"predicted_{point_stem(load)}.json"
        job.agentic_point(
            load, duration_s, path, trace=trace, synth=synth or "", warmup_sessions=0,
            max_idle_s=max_idle_s, max_model_len=None,
        )  # fmt: skip
        return read_point_result(path)

    return measure
