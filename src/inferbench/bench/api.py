"""The library call: `run_bench(endpoint, workload, load, options) -> BenchRun`.

Each load point runs over one or several client worker processes, is summarised
with `inferbench.bench.metrics.summarize`, and becomes a `PointResult` (the
per-point result file). The gates (failure rate, prompt-length mismatch) are
decided here and reported on each point; the CLI turns them into exit codes.
"""

from __future__ import annotations

import math
import os
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import Field

from inferbench.bench.metrics import (
    DEFAULT_PERCENTILES,
    PERCENTILE_METRICS,
    Slo,
    percentiles_ms,
    summarize,
)
from inferbench.bench.preset import SA_BENCH
from inferbench.bench.records import FailureKind
from inferbench.bench.result import EndpointInfo, PointResult, build_point_result
from inferbench.bench.runner import PointRun, run_in_process, run_in_processes
from inferbench.bench.schedule import LoadPoint, arrival_offsets, split_evenly
from inferbench.bench.settings import ApiKind, ClientOptions, Endpoint, RequestOptions
from inferbench.bench.worker import WorkerTask
from inferbench.bench.workload import RandomWorkload, RangeMode, SharedPrefixWorkload, Workload
from inferbench.core.errors import InputError, Location
from inferbench.core.model import FrozenModel

__all__ = [
    "BenchOptions",
    "BenchRun",
    "Endpoint",
    "LoadPoint",
    "PointMeasurement",
    "sa_bench_point",
    "sa_bench_workload",
    "run_bench",
]

STREAMS_PER_WORKER = 512  # above this a worker process gets a share of its own

ProgressCallback = Callable[[LoadPoint, int, int], None]  # point, finished, total


class BenchOptions(FrozenModel):
    request: RequestOptions = Field(default_factory=RequestOptions)
    client: ClientOptions = Field(default_factory=ClientOptions)
    slo: Slo | None = None
    backend: str = "openai"
    model_id: str | None = Field(
        default=None, description="the model named in results, when the API name differs"
    )
    percentile_metrics: tuple[str, ...] = PERCENTILE_METRICS
    percentiles: tuple[float, ...] = DEFAULT_PERCENTILES
    metadata: dict[str, str] = Field(default_factory=dict)


@dataclass(frozen=True)
class PointMeasurement:
    """One measured point: its result file content and the raw records."""

    result: PointResult
    run: PointRun

    @property
    def passed(self) -> bool:
        return self.result.inferbench.gate_failure is None and self.result.complete


@dataclass(frozen=True)
class BenchRun:
    points: list[PointMeasurement]
    interrupted: bool = False

    @property
    def failures(self) -> list[str]:
        """Why points failed (gates, incomplete runs), one line each."""
        out = []
        for p in self.points:
            block = p.result.inferbench
            if block.gate_failure:
                out.append(f"{p.result.inferbench.load.label}: {block.gate_failure}")
            if not block.complete:
                out.append(f"{block.load.label}: incomplete ({block.incomplete_reason})")
        return out


def sa_bench_workload(isl: int, osl: int) -> RandomWorkload:
    """InferenceX's sa-bench dataset: random, range ratio 0.8, U[floor(0.8 L), L]."""
    return RandomWorkload(
        isl=isl, osl=osl, range_ratio=SA_BENCH.range_ratio, range_mode=RangeMode.INFERENCEX
    )


def sa_bench_point(concurrency: int) -> LoadPoint:
    """InferenceX's defaults: 10 x conc prompts, 2 x conc warm-ups, closed loop."""
    return LoadPoint(
        concurrency=concurrency,
        num_prompts=SA_BENCH.num_prompts(concurrency),
        warmups=SA_BENCH.num_warmups(concurrency),
    )


def _worker_count(point: LoadPoint, client: ClientOptions) -> int:
    if client.workers is not None:
        wanted = client.workers
    else:
        streams = point.concurrency or max(1, int((point.request_rate or 1.0) * 2))
        wanted = min(os.cpu_count() or 1, math.ceil(streams / STREAMS_PER_WORKER))
    if point.concurrency is not None:
        wanted = min(wanted, point.concurrency)
    return max(1, min(wanted, point.num_prompts))


def _check(endpoint: Endpoint, workload: Workload) -> None:
    needs_text = endpoint.api is ApiKind.CHAT
    if (
        needs_text
        and isinstance(workload, RandomWorkload | SharedPrefixWorkload)
        and workload.tokenizer is None
    ):
        raise InputError(
            "chat requests take text, and random text needs a tokenizer",
            location=Location(key="--tokenizer"),
            hint="pass --tokenizer PATH (a local tokenizer.json), or use --endpoint completions",
        )


def _tasks(
    endpoint: Endpoint, workload: Workload, point: LoadPoint, options: BenchOptions, tag: str
) -> list[WorkerTask]:
    n = _worker_count(point, options.client)
    indices = list(range(point.num_prompts))
    offsets = None
    if point.request_rate is not None:
        offsets = arrival_offsets(
            point.num_prompts, point.request_rate, point.burstiness, options.client.seed
        ).tolist()
    caps = split_evenly(point.concurrency, n) if point.concurrency else [None] * n
    warm = list(range(point.warmups))
    return [
        WorkerTask(
            worker=k,
            endpoint=endpoint,
            workload=workload,
            request=options.request,
            client=options.client,
            point=point,
            indices=tuple(indices[k::n]),
            offsets=tuple(offsets[k::n]) if offsets is not None else None,
            concurrency=caps[k],
            warmups=tuple(warm[k::n]),
            tag=f"{tag}-{k}",
        )
        for k in range(n)
    ]


def _gate(run: PointRun, client: ClientOptions) -> str | None:
    total = len(run.records)
    if total == 0:
        return "no request finished"
    mismatched = sum(1 for r in run.records if r.failure is FailureKind.PROMPT_MISMATCH)
    if mismatched:
        example = next(r.error for r in run.records if r.failure is FailureKind.PROMPT_MISMATCH)
        return f"{mismatched} prompts had the wrong length ({example}); check the tokenizer"
    failed = sum(1 for r in run.records if not r.ok)
    if failed / total > client.max_failure_rate:
        return (
            f"{failed}/{total} requests failed ({failed / total:.1%}),"
            f" above --max-failure-rate {client.max_failure_rate:.1%}"
        )
    return None


def run_point(
    endpoint: Endpoint,
    workload: Workload,
    point: LoadPoint,
    options: BenchOptions,
    on_progress: ProgressCallback | None = None,
) -> PointMeasurement:
    tasks = _tasks(endpoint, workload, point, options, tag=f"ib{secrets.token_hex(3)}")

    def progress(done: int) -> None:
        if on_progress is not None:
            on_progress(point, done, point.num_prompts)

    started = datetime.now(UTC)
    run = (
        run_in_process(tasks[0], progress) if len(tasks) == 1 else run_in_processes(tasks, progress)
    )
    finished = datetime.now(UTC)
    to_unix = time.time() - time.monotonic()  # the run's stamps are monotonic
    metrics = summarize(run.records, run.duration_s, slo=options.slo)
    result = build_point_result(
        records=run.records,
        metrics=metrics,
        endpoint=EndpointInfo(base_url=endpoint.base_url, model=endpoint.model, api=endpoint.api),
        workload=workload,
        load=point,
        request=options.request,
        client=options.client,
        started_at=started,
        finished_at=finished,
        complete=run.complete,
        incomplete_reason=run.reason,
        gate_failure=_gate(run, options.client),
        backend=options.backend,
        tokenizer_id=str(getattr(workload, "tokenizer", None) or "") or None,
        model_id=options.model_id,
        extra_percentiles=percentiles_ms(
            run.records, options.percentile_metrics, options.percentiles
        ),
        metadata=options.metadata,
        window=(run.t0 + to_unix, run.end + to_unix),
    )
    return PointMeasurement(result=result, run=run)


def run_bench(
    endpoint: Endpoint,
    workload: Workload,
    load: Sequence[LoadPoint],
    options: BenchOptions | None = None,
    *,
    on_progress: ProgressCallback | None = None,
    on_point: Callable[[PointMeasurement], None] | None = None,
) -> BenchRun:
    """Measure every load point in order; an interrupted point ends the run (kept, incomplete)."""
    options = options or BenchOptions()
    _check(endpoint, workload)
    points: list[PointMeasurement] = []
    for point in load:
        outcome = run_point(endpoint, workload, point, options, on_progress)
        points.append(outcome)
        if on_point is not None:
            on_point(outcome)
        if outcome.run.reason == "interrupted":
            return BenchRun(points=points, interrupted=True)
    return BenchRun(points=points)
