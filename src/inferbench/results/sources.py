"""Find benchmark points under the paths a user names and turn each into a Record.

Three kinds of input:
- run directories (`run.json`, `<job>/job.json`, `<job>/outcome.json`,
  `<job>/results/conc<C>.json`): identity from the job, provenance from run + outcome;
- inferbench result files (sa-bench fields + an `inferbench` block), read with the
  load generator's typed reader; their window dates the point;
- plain sa-bench result JSONs, whose identity is supplied (`--identity`) or read from
  InferenceX / srt-slurm style file names.
Every point comes back as a Record or as the InputError that explains why not.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from inferbench.bench.naming import repeat_of
from inferbench.core.concurrency import MAX_CONCURRENCY
from inferbench.core.errors import InputError, Location
from inferbench.core.fsread import MAX_RESULT_BYTES, not_regular, read_file
from inferbench.core.outcome import StoredOutcome
from inferbench.core.rundir import (
    EnvRecord,
    OutcomeRecord,
    PlanCommand,
    RunHeader,
    parse_stamp,
    read_optional,
)
from inferbench.evals.result import is_eval_file, read_eval_result
from inferbench.power.hostzone import recorded_zone
from inferbench.results.agentic import agentic_fields
from inferbench.results.benchfile import BenchFile, load_json_object, read_bench_file
from inferbench.results.build import build_record
from inferbench.results.evalrecord import EvalRecord
from inferbench.results.identity import identity_from_job, nest
from inferbench.results.measured import SIMULATED, measured_identity
from inferbench.results.names import identity_from_name
from inferbench.results.power import read_power_csv
from inferbench.results.record import Identity, Provenance, Record
from inferbench.results.samples import PointSamples

RUN_FILES = {
    "run.json",
    "jobs.json",
    "state.json",
    "job.json",
    "plan.json",
    "outcome.json",
    "env.json",
}
# aiperf's artifact files a replay writes beside its result (`--aiperf-artifacts`): not points
AIPERF_ARTIFACTS = "aiperf_artifacts"
_CONC_FILE = re.compile(r"^conc(\d+)(?:_r(\d+))?\.json$")  # repeat k > 1: conc8_r2.json
_EVAL_FILE = re.compile(r"^eval_[A-Za-z0-9_.-]+\.json$")


@dataclass(frozen=True)
class Point:
    """One result file's outcome: a Record, or the reason it was skipped."""

    path: Path
    record: Record | EvalRecord | None = None  # an EvalRecord for `eval_<task>.json`
    error: InputError | None = None
    samples: PointSamples | None = None  # the point's per-request values, when its file has them


@dataclass(frozen=True)
class Unit:
    """One piece of an ingest that can be read on its own: a job directory or a file."""

    path: Path
    job: bool


def discover_units(paths: list[Path]) -> list[Unit]:
    """The job directories and result files under `paths`, in a stable order."""
    units: list[Unit] = []
    for path in paths:
        if not path.exists():
            raise InputError(
                "no such file or directory",
                location=Location(file=path),
                hint="give run directories, result files or folders of them",
            )
        if path.is_file():
            units.append(Unit(path, job=False))
            continue
        if not path.is_dir():  # a FIFO or device named on the command line: refused unread
            raise not_regular(path, path.stat().st_mode)
        jobs = sorted(p.parent for p in path.rglob("job.json"))
        if jobs:
            units.extend(Unit(job_dir, job=True) for job_dir in jobs)
        else:
            units.extend(
                Unit(file, job=False)
                for file in sorted(path.rglob("*.json"))
                if file.name not in RUN_FILES and file.parent.name != AIPERF_ARTIFACTS
            )
    return units


def unit_points(unit: Unit, identity: Mapping[str, Any] | None) -> Iterator[Point | StoredOutcome]:
    if unit.job:
        yield from _job_points(unit.path, identity)
    else:
        yield _file_point(unit.path, identity)


def discover(
    paths: list[Path], identity: Mapping[str, Any] | None = None
) -> Iterator[Point | StoredOutcome]:
    for unit in discover_units(paths):
        yield from unit_points(unit, identity)


# What reading one result file may raise beside InputError: the file is skipped and named,
# never the whole ingest stopped (one bad file must not block the valid ones).
UNREADABLE = (ValueError, TypeError, ArithmeticError, KeyError, IndexError, AttributeError)


def _safe(path: Path, make: Any) -> Point:
    try:
        made = make()
        if isinstance(made, tuple):  # (record, its samples)
            return Point(path, record=made[0], samples=made[1])
        return Point(path, record=made)
    except InputError as exc:
        if exc.location.file is None:
            exc.location = Location(path, exc.location.line, exc.location.column, exc.location.key)
        return Point(path, error=exc)
    except UNREADABLE as exc:
        return Point(path, error=unreadable(path, exc))


def unreadable(path: Path, exc: Exception) -> InputError:
    return InputError(
        f"cannot ingest this result ({type(exc).__name__}: {str(exc)[:200]})",
        location=Location(file=path),
        hint="fix or remove the file; the other results were ingested",
    )


def _opt(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def engine_flags(job: Mapping[str, Any]) -> dict[str, Any] | None:
    """The engine flags a job carries: its `sim-flags` (vLLM spelling) and the job fields
    that are engine flags (`kv-cache-dtype`, `max-model-len`); scalar values only."""
    flags: dict[str, Any] = {}
    extra = job.get("sim-flags")
    if isinstance(extra, Mapping):
        flags.update(
            (str(k), v) for k, v in extra.items() if isinstance(v, str | int | float | bool)
        )
    for key in ("kv-cache-dtype", "max-model-len"):
        if isinstance(job.get(key), str | int) and key not in flags:
            flags[key] = job[key]
    return flags or None


def _point_times(bench: BenchFile) -> dict[str, datetime | None]:
    """The point's own start and finish, when its file has them (over the job's times)."""
    if bench.started_at is None or bench.finished_at is None:
        return {}
    return {"started_at": bench.started_at, "ended_at": bench.finished_at}


def _with_power(
    results_dir: Path, names: set[str], stem: str, bench: BenchFile, tz: tzinfo | None
) -> BenchFile:
    for name in (f"power_{stem}.csv", f"gpu_metrics_{stem}.csv"):
        if name in names:
            samples = read_power_csv(results_dir / name, tz)
            return replace(bench, power=bench.power + samples)
    note = f"power_{stem}.unavailable"
    if note in names:
        reason = (results_dir / note).read_text(errors="replace").strip()[:500]
        return replace(bench, power_note=reason or "power was not sampled")
    return bench


def _env_record(env_json: Path) -> EnvRecord:
    try:
        return read_optional(env_json, EnvRecord, "env.json")
    except InputError:  # a damaged env.json costs the zone and accelerator, not the points
        return EnvRecord()


def _plan_command(plan_json: Path) -> str | None:
    try:
        return read_optional(plan_json, PlanCommand, "plan.json").command
    except InputError:  # a damaged plan.json costs the command line, not the points
        return None


def _job_points(
    job_dir: Path, identity: Mapping[str, Any] | None
) -> Iterator[Point | StoredOutcome]:
    try:
        job = load_json_object(job_dir / "job.json")
        has_outcome = (job_dir / "outcome.json").is_file()
        outcome = read_optional(job_dir / "outcome.json", OutcomeRecord, "outcome.json")
        run = read_optional(job_dir.parent / "run.json", RunHeader, "run.json")
        env = _env_record(job_dir / "env.json")
        # the zone raw nvidia-smi logs of this job were stamped in (None: read as local)
        zone = recorded_zone(env)
        command = _plan_command(job_dir / "plan.json")
    except InputError as exc:
        yield Point(job_dir, error=exc)
        return
    job = {**nest(job), **nest(identity or {})}
    run_id = run.run_id or job_dir.parent.name
    provenance: dict[str, Any] = {
        "run_id": run_id,
        "attempt": outcome.attempt,
        "backend": outcome.backend or run.backend,
        "engine": outcome.engine or run.engine,
        "host": outcome.host or run.host,
        "cluster": outcome.cluster or run.cluster,
        "started_at": outcome.started,
        "ended_at": outcome.finished,
        "inferbench_version": run.version,
        "official": run.official or job.get("official") in (True, "true"),
        "tag": job.get("tag"),
        "commit": _opt(job.get("commit")) or run.commit,
        "engine_flags": engine_flags(job),
    }
    accelerator = env.accelerator
    if provenance["engine"] != SIMULATED:  # the simulator's points were measured on nothing
        provenance["accelerator"] = accelerator
    if has_outcome:
        yield StoredOutcome(
            run_id=run_id,
            job_fingerprint=str(job.get("fingerprint") or job_dir.name),
            label=str(job.get("exp-name") or job_dir.name),
            status=outcome.status,
            attempt=outcome.attempt,
            reason=outcome.reason,
        )
    results = job_dir / "results"
    names = set(os.listdir(results)) if results.is_dir() else set()
    provenance["command"] = command
    job_identity: list[Identity] = []  # built once per job: only the concurrency varies

    def identity_for(conc: int, bench: BenchFile | None = None) -> Identity:
        if not 1 <= conc <= MAX_CONCURRENCY:
            raise InputError(
                f"concurrency {conc} in the file name must be between 1 and {MAX_CONCURRENCY:,}",
                hint="name a point's result file conc<N>.json, N its concurrency",
            )
        if bench is not None:
            _same_concurrency(bench, conc, "its file name")
        if not job_identity:
            where = Location(job_dir / "job.json")
            fields = {**job, **(agentic_fields(job, bench) if bench else {})}
            planned = identity_from_job(fields, concurrency=conc, location=where)
            measured, provenance["planned_hardware"] = measured_identity(
                planned, accelerator, provenance["engine"]
            )
            job_identity.append(measured)
        return job_identity[0].at_concurrency(conc)

    for name in sorted(names):
        m = _CONC_FILE.match(name)
        if not m:
            continue
        file, conc, repeat = results / name, int(m.group(1)), int(m.group(2) or 1)

        def make(
            file: Path = file, conc: int = conc, repeat: int = repeat
        ) -> tuple[Record, PointSamples | None]:
            bench = _with_power(results, names, file.stem, read_bench_file(file), zone)
            times = _point_times(bench)
            identity = identity_for(conc, bench)  # first: it settles planned_hardware
            prov = Provenance(**{**provenance, **times}, source=str(file), repeat=repeat)
            return build_record(identity, prov, bench), bench.samples

        yield _safe(file, make)
    for name in sorted(n for n in names if _EVAL_FILE.match(n)):
        file = results / name

        def make_eval(file: Path = file) -> EvalRecord:
            result = read_eval_result(file)
            times = {"started_at": result.started_at, "ended_at": result.finished_at}
            identity = identity_for(result.spec.concurrency)  # first: see make
            prov = Provenance(**{**provenance, **times}, source=str(file))
            return EvalRecord(identity=identity, provenance=prov, result=result)

        yield _safe(file, make_eval)


def _same_concurrency(bench: BenchFile, conc: int, said: str) -> None:
    """The concurrency a file is stored under must be the one it was measured at: a renamed
    or mislabelled file would otherwise put a conc-4 curve point at 999."""
    measured = bench.metrics.max_concurrency
    if measured is None or measured == conc:
        return
    raise InputError(
        f"measured at concurrency {measured} (max_concurrency), but {said} says {conc}",
        location=Location(bench.path, key="max_concurrency"),
        hint=f"rename the file for concurrency {measured} (conc{measured}); a point is"
        " stored at the concurrency it ran at",
    )


def _file_eval(path: Path, raw: dict[str, Any], identity: Mapping[str, Any] | None) -> EvalRecord:
    """A lone `inferbench eval` result: identity from its job (in a run) or --identity."""
    result = read_eval_result(path)
    job_dir = path.parent.parent
    base: dict[str, Any] = {}
    if path.parent.name == "results" and (job_dir / "job.json").is_file():
        base = nest(load_json_object(job_dir / "job.json"))
    merged = {"model": result.model, **base, **nest(identity or {})}
    merged.setdefault("conc", result.spec.concurrency)
    ident = identity_from_job(merged, location=Location(path))
    run_id = (
        merged.get("run-id")
        or "file-" + hashlib.sha256(read_file(path, MAX_RESULT_BYTES)).hexdigest()[:12]
    )
    prov = Provenance(
        run_id=str(run_id),
        started_at=result.started_at,
        ended_at=result.finished_at,
        source=str(path),
        tag=merged.get("tag"),
    )
    return EvalRecord(identity=ident, provenance=prov, result=result)


def _file_power(path: Path, bench: BenchFile) -> BenchFile:
    """A lone result file's power log: `power_<stem>.csv` or `gpu_metrics_<stem>.csv` beside
    it, else the `gpu_metrics.csv` InferenceX's runners write beside their results (one
    monitor may span several points: each point is cut to its own window). Read in this
    process's local zone (no env.json says otherwise), as InferenceX's power step does."""
    folder = path.parent
    for name in (f"power_{path.stem}.csv", f"gpu_metrics_{path.stem}.csv", "gpu_metrics.csv"):
        if (folder / name).is_file():
            return replace(bench, power=read_power_csv(folder / name))
    return bench


def _file_point(path: Path, identity: Mapping[str, Any] | None) -> Point:
    def make() -> tuple[Record, PointSamples | None] | EvalRecord:
        raw = load_json_object(path)
        if is_eval_file(raw):
            return _file_eval(path, raw, identity)
        bench = _file_power(path, read_bench_file(path, raw))
        job_dir = path.parent.parent
        if path.parent.name == "results" and (job_dir / "job.json").is_file():
            base: dict[str, Any] = nest(load_json_object(job_dir / "job.json"))
        else:
            base = nest(identity_from_name(path))
        if raw.get("model_id") and "model" not in base:
            base["model"] = raw["model_id"]
        merged = {**base, **agentic_fields(base, bench), **nest(identity or {})}
        if "conc" not in merged and isinstance(raw.get("max_concurrency"), int):
            merged["conc"] = raw["max_concurrency"]  # the file's own load, as bench wrote it
        named = base.get("conc")  # from the file name (--identity is the user's own word)
        if "conc" not in nest(identity or {}) and str(named).isdigit():
            _same_concurrency(bench, int(str(named)), "its file name")
        ident = identity_from_job(merged, location=Location(path))
        run_id = (
            merged.get("run-id")
            or "file-" + hashlib.sha256(read_file(path, MAX_RESULT_BYTES)).hexdigest()[:12]
        )
        times = _point_times(bench) or {"started_at": parse_stamp(raw.get("date"))}
        prov = Provenance(
            run_id=str(run_id),
            backend=merged.get("backend") or raw.get("backend"),
            inferbench_version=bench.client_version,
            official=str(merged.get("official", "false")).lower() == "true",
            source=str(path),
            tag=merged.get("tag"),
            repeat=repeat_of(path.stem)[1],
            engine_flags=engine_flags(merged),
            **times,
        )
        return build_record(ident, prov, bench), bench.samples

    return _safe(path, make)
