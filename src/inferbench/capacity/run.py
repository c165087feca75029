"""`run_capacity(request)`: simulate the job (when given) to bracket or predict, measure the
server (when given) starting from the prediction, and put both per GPU and per MW.

The load is sa-bench request streams by default, or agent sessions (lanes replaying a trace,
`--trace`/`--synth`), each of its turns judged against the targets."""

from __future__ import annotations

import tempfile
from pathlib import Path

from inferbench.bench.settings import Endpoint
from inferbench.capacity.measure import (
    bench_measure,
    replay_measure,
    sim_measure,
    sim_replay_measure,
)
from inferbench.capacity.request import CapacityAnswer, CapacityReport, CapacityRequest
from inferbench.capacity.search import CapacityResult, Measure, search_capacity
from inferbench.capacity.targets import parse_targets
from inferbench.core.concurrency import parse_concurrency_list
from inferbench.core.errors import InputError, Location
from inferbench.sim.points import JobPoints


def run_capacity(request: CapacityRequest) -> CapacityReport:
    targets = parse_targets(request.slo)
    grid = _grid(request.grid)
    if request.base_url is None and request.job is None:
        raise InputError(
            "nothing to search", hint="give --base-url (and --model) to measure, --job to predict"
        )
    if request.trace is not None and request.synth is not None:
        raise InputError("give --trace or --synth, not both", location=Location(key="--synth"))
    unit = "agents" if request.agentic else "users"
    predicted = None
    gpus, gpu_kw = request.gpus, request.gpu_kw
    isl, osl = request.isl, request.osl
    with tempfile.TemporaryDirectory(prefix="inferbench-capacity-") as scratch:
        if request.job is not None:
            from inferbench.sim.points import open_job

            job = open_job(Path(request.job))
            gpus = gpus or job.deployment.total_gpus
            gpu_kw = gpu_kw or job.deployment.gpu.provisioned_kw  # the catalog's, cited there
            isl = isl or job.deployment.workload.isl
            osl = osl or job.deployment.workload.osl
            found = search_capacity(
                targets,
                grid,
                _predict(job, request, Path(request.result_dir or scratch)),
                noise=request.noise,
                repeats=1,  # the simulator is deterministic: a repeat says nothing new
            )
            predicted = _answer("predicted", unit, found, gpus, gpu_kw)
    measured = None
    if request.base_url is not None:
        start = None if predicted is None else predicted.result.capacity
        found = search_capacity(
            targets,
            grid,
            _measure(request, isl, osl),
            start=start,
            noise=request.noise,
            repeats=request.repeats,
        )
        measured = _answer("measured", unit, found, gpus, gpu_kw)
    return CapacityReport(request=request, predicted=predicted, measured=measured)


def _predict(job: JobPoints, request: CapacityRequest, folder: Path) -> Measure:
    if request.agentic:
        folder.mkdir(parents=True, exist_ok=True)
        return sim_replay_measure(
            job,
            folder,
            duration_s=request.duration,
            trace=str(request.trace) if request.trace is not None else None,
            synth=request.synth,
        )
    return sim_measure(job, prompts_per_load=request.prompts_per_load)


def _measure(request: CapacityRequest, isl: int | None, osl: int | None) -> Measure:
    if not request.model:
        raise InputError("--base-url needs --model", location=Location(key="--model"))
    endpoint = Endpoint(base_url=request.base_url or "", model=request.model)
    if request.agentic:
        from inferbench.bench.traces.source import open_traces

        traces = open_traces(trace=request.trace, synth=request.synth)
        return replay_measure(
            endpoint, traces, duration_s=request.duration, result_dir=request.result_dir
        )
    if isl is None or osl is None:
        raise InputError(
            "the workload's lengths are not known",
            location=Location(key="--isl"),
            hint="give --isl and --osl (or --job, whose lengths are used)",
        )
    return bench_measure(
        endpoint,
        isl,
        osl,
        prompts_per_load=request.prompts_per_load,
        result_dir=request.result_dir,
    )


def _grid(text: str) -> tuple[int, ...]:
    try:
        return tuple(sorted(set(parse_concurrency_list(text))))
    except ValueError as exc:
        raise InputError(str(exc), location=Location(key="--concurrency")) from None


def _answer(
    kind: str,
    unit: str,
    result: CapacityResult,
    gpus: int | None,
    gpu_kw: float | None,
) -> CapacityAnswer:
    at = result.verdict_at(result.capacity) if result.capacity is not None else None
    users = float(result.capacity) if result.capacity is not None else None
    tput = at.total_tok_s if at is not None else None
    mw = gpus * gpu_kw / 1000 if gpus and gpu_kw else None
    return CapacityAnswer(
        kind=kind,
        unit=unit,
        result=result,
        gpus=gpus,
        kw_per_gpu=gpu_kw,
        users_per_gpu=_per(users, gpus),
        tok_s_per_gpu=_per(tput, gpus),
        users_per_mw=_per(users, mw),
        tok_s_per_mw=_per(tput, mw),
    )


def _per(value: float | None, unit: float | None) -> float | None:
    return value / unit if value is not None and unit else None
