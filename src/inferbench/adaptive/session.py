"""`inferbench run --adaptive`: an adaptive sweep as one resumable run directory.

The run directory is a plain run's (run.json with the planner's settings, jobs.json with
every deployment the planner may choose from, state.json, one job directory per
deployment), plus `adaptive.json`: the rounds chosen so far and the latest assessment
(every point, measured or predicted, with its interval and why it was or was not
measured). Each round runs as a resume of the run over the chosen points, so a round cut
short is continued by `inferbench run --resume RUN-ID` like any run: the measurements on
disk are read back, the planner reassesses, and the rounds go on from there.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from inferbench.adaptive.candidates import Candidate, Excluded, build_candidates
from inferbench.adaptive.model import SimModel
from inferbench.adaptive.planner import (
    AdaptivePlanner,
    AdaptiveSettings,
    Assessment,
    Measurement,
)
from inferbench.core.errors import InferbenchError, InputError, Location
from inferbench.core.fsio import atomic_write_text
from inferbench.core.fsread import MAX_RUN_FILE_BYTES, read_file
from inferbench.core.status import RunPhase
from inferbench.launch.deployment import Deployment
from inferbench.launch.rundir import RunDir, run_dir
from inferbench.launch.runner import RunRequest, RunSummary, start_run
from inferbench.launch.state import StateFile
from inferbench.sim.calibrate import dump_calibration
from inferbench.sim.calibration import load_calibration

ADAPTIVE_JSON = "adaptive.json"


@dataclass(frozen=True)
class AdaptiveOptions:
    """What run.json keeps of `--adaptive` (settings.adaptive)."""

    confidence: float = 0.95
    tolerance: float = 0.03
    per_round: int = 1
    max_points: int | None = None
    calibration: str | None = None  # the base calibration (None: the packaged default)
    run_noise: float | None = None  # the least run-to-run noise assumed (None: the floor)
    local_correction: bool = False  # kriged residuals of measured look-alikes
    both_axes: bool = False  # the tolerance band on interactivity too

    def settings(self) -> AdaptiveSettings:
        extra = {"noise": self.run_noise} if self.run_noise is not None else {}
        return AdaptiveSettings(
            confidence=self.confidence,
            tolerance=self.tolerance,
            per_round=self.per_round,
            max_points=self.max_points,
            local=self.local_correction,
            both_axes=self.both_axes,
            **extra,
        )

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AdaptiveOptions:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


@dataclass
class AdaptiveRun:
    """What an adaptive run did: its rounds' run summaries and the last assessment."""

    run: RunDir
    assessment: Assessment
    excluded: list[Excluded]
    rounds: list[list[str]] = field(default_factory=list)  # chosen keys per round
    summaries: list[RunSummary] = field(default_factory=list)
    interrupted: bool = False
    points_left: int = 0

    @property
    def ok(self) -> bool:
        return not self.interrupted


def planner_for(
    deployments: Sequence[Deployment],
    options: AdaptiveOptions,
    progress: Callable[[str], None] | None = None,
) -> tuple[AdaptivePlanner, list[Excluded]]:
    candidates, excluded, deps = build_candidates(deployments)
    if not candidates:
        raise InputError(
            "no fixed-length point to plan: the selection has only jobs the planner leaves "
            "out (" + "; ".join(sorted({e.reason for e in excluded})) + ")",
            hint="widen the sweep filters",
        )
    planner = AdaptivePlanner(
        candidates=candidates,
        deps=deps,
        model=SimModel(deps, progress),
        base=load_calibration(options.calibration),
        settings=options.settings(),
    )
    return planner, excluded


def measurements(
    run: RunDir, candidates: Sequence[Candidate]
) -> tuple[dict[str, Measurement], set[str]]:
    """The points measured in `run` (their result files) and those whose measurement failed
    the point gate."""
    from inferbench.bench.result import read_point_result

    state = StateFile(run.state_json, run.run_id)
    got: dict[str, Measurement] = {}
    failed: set[str] = set()
    for c in candidates:
        job = state.job(c.fingerprint)
        path = run.job(c.fingerprint).result_file(c.concurrency)
        if c.concurrency in job.failed:
            failed.add(c.key)
            continue
        if not path.is_file():
            continue
        try:
            sa = read_point_result(path).sa
        except InferbenchError:
            failed.add(c.key)
            continue
        if sa.median_tpot_ms <= 0 or sa.total_token_throughput <= 0:
            failed.add(c.key)
            continue
        got[c.key] = Measurement(
            tok_s_gpu=sa.total_token_throughput / c.gpus,
            interactivity=1000.0 / sa.median_tpot_ms,
            ttft_ms=sa.median_ttft_ms or None,
        )
    return got, failed


def _round_deployments(
    chosen: Sequence[Candidate], deployments: Mapping[str, Deployment], state: StateFile
) -> list[Deployment]:
    """Each chosen point's deployment, at its finished concurrencies and the chosen ones (the
    runner runs only those without a result); a job done in an earlier round is reopened."""
    wanted: dict[str, set[int]] = {}
    for c in chosen:
        wanted.setdefault(c.fingerprint, set()).add(c.concurrency)
    out = []
    for fingerprint, concs in wanted.items():
        job = state.job(fingerprint)
        if job.done:
            job.status = RunPhase.PENDING
        concs |= set(job.finished)
        out.append(replace(deployments[fingerprint], concurrencies=tuple(sorted(concs))))
    state.save()
    return out


def read_rounds(run: RunDir) -> list[list[str]]:
    path = run.path / ADAPTIVE_JSON
    if not path.is_file():
        return []
    try:
        data = json.loads(read_file(path, MAX_RUN_FILE_BYTES, what=ADAPTIVE_JSON))
        return [list(map(str, r)) for r in data["rounds"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(
            f"{ADAPTIVE_JSON} of run {run.run_id} is unreadable: {exc}",
            location=Location(file=path),
            hint="move it aside: the rounds are rebuilt from the measurements on disk",
        ) from None


def execute_adaptive(
    request: RunRequest,
    options: AdaptiveOptions,
    execute: Callable[[RunRequest], RunSummary],
    on_round: Callable[[int, Assessment], None] | None = None,
    progress: Callable[[str], None] | None = None,
) -> AdaptiveRun:
    """Run (or, with `request.resume`, continue) an adaptive sweep over the request's
    deployments; `execute` runs one round's request (the CLI's progress display)."""
    planner, excluded = planner_for(request.deployments, options, progress)
    if request.resume:
        run = run_dir(request.runs_dir, request.resume)
    else:
        run = start_run(replace(request, deployments=_planned(request.deployments, planner)))
    by_fp = {d.fingerprint: d for d in request.deployments}
    rounds = read_rounds(run)
    if rounds and request.resume:
        measured, _ = measurements(run, planner.candidates)
        if not any(key in measured for key in rounds[-1]):
            rounds.pop()  # cut short before any of its points: planned again, same number
    outcome = AdaptiveRun(run=run, assessment=None, excluded=excluded, rounds=rounds)  # type: ignore[arg-type]
    n = len(rounds)
    while True:
        measured, failed = measurements(run, planner.candidates)
        failed |= _lost(run, rounds, measured)
        assessment = planner.assess(measured, frozenset(failed))
        outcome.assessment = assessment
        write_adaptive(run, assessment, rounds, excluded)
        if on_round is not None:
            on_round(n + 1, assessment)
        if assessment.done or not assessment.chosen:
            return outcome
        chosen = assessment.chosen
        rounds.append([c.key for c in chosen])
        n += 1
        write_adaptive(run, assessment, rounds, excluded)
        state = StateFile(run.state_json, run.run_id)
        deps = _round_deployments(chosen, by_fp, state)
        summary = execute(replace(request, deployments=deps, resume=run.run_id, max_jobs=None))
        outcome.summaries.append(summary)
        if summary.interrupted:
            outcome.interrupted = True
            outcome.points_left = summary.points_left
            return outcome


def _planned(deployments: Sequence[Deployment], planner: AdaptivePlanner) -> list[Deployment]:
    keep = {c.fingerprint for c in planner.candidates}
    return [d for d in deployments if d.fingerprint in keep]


def _lost(run: RunDir, rounds: Sequence[Sequence[str]], measured: Mapping[str, object]) -> set[str]:
    """Points chosen in an earlier round whose job ended (not cut short) without a result:
    their measurement failed (a plan error, a server that did not start)."""
    state = StateFile(run.state_json, run.run_id)
    lost = set()
    for keys in rounds:
        for key in keys:
            fingerprint = key.split("@", 1)[0]
            jobs = [j for fp, j in state.state.jobs.items() if fp.startswith(fingerprint)]
            if key not in measured and jobs and all(j.done for j in jobs):
                lost.add(key)
    return lost


def point_row(p: Any, z: float) -> dict[str, object]:
    c = p.candidate
    t_lo, t_hi = p.interval(z, "tok_s_gpu")
    i_lo, i_hi = p.interval(z, "interactivity")
    row: dict[str, object] = {
        "key": c.key,
        "label": c.label,
        "fingerprint": c.fingerprint,
        "concurrency": c.concurrency,
        "frontier": list(c.frontier),
        "gpu": c.gpu,
        "engine": c.engine,
        "gpus": c.gpus,
        "status": str(p.status),
        "predicted": {
            "tok_s_gpu": p.predicted.tok_s_gpu,
            "tok_s_gpu_interval": [t_lo, t_hi],
            "interactivity": p.predicted.interactivity,
            "interactivity_interval": [i_lo, i_hi],
        },
        "spread": {
            "tok_s_gpu": p.spread.tok_s_gpu,
            "interactivity": p.spread.interactivity,
            "source": p.spread.source,
        },
        "p_above": p.p_above,
        "gpu_hours": p.gpu_hours(),
    }
    if p.measured is not None:
        row["measured"] = {
            "tok_s_gpu": p.measured.tok_s_gpu,
            "interactivity": p.measured.interactivity,
            "ttft_ms": p.measured.ttft_ms,
        }
    return row


def write_adaptive(
    run: RunDir, a: Assessment, rounds: Sequence[Sequence[str]], excluded: Sequence[Excluded]
) -> None:
    """adaptive.json (the rounds and the latest assessment) and calibration.yaml (the fit)."""
    s = a.settings
    data = {
        "settings": {"confidence": s.confidence, "tolerance": s.tolerance,
                     "per_round": s.per_round, "max_points": s.max_points},
        "rounds": [list(r) for r in rounds],
        "done": a.done,
        "gpu_hours": {"full": a.gpu_hours_full, "measured": a.gpu_hours_measured,
                      "saved": a.gpu_hours_saved},
        "points": [point_row(p, s.z) | {"reason": p.reason(s)} for p in a.points],
        "excluded": [{"label": e.label, "fingerprint": e.fingerprint,
                      "concurrencies": list(e.concurrencies), "reason": e.reason}
                     for e in excluded],
    }  # fmt: skip
    atomic_write_text(run.path / ADAPTIVE_JSON, json.dumps(data, indent=1) + "\n")
    atomic_write_text(run.path / "calibration.yaml", dump_calibration(a.calibration))
