"""`inferbench run --resume RUN-ID`: every setting comes back from the run directory.

`run.json` holds the tree, filters, backend, engine, cluster and options; `jobs.json` the
deployments the run was started with, so a resume runs exactly those (the tree is re-read
only to plan them, never re-expanded). A flag given beside `--resume` that disagrees with
`run.json` is refused: a resume that quietly changed the engine or the filters would mix
two experiments in one run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from inferbench.config.srt_slurm_refs import absolute_source
from inferbench.core.errors import InputError, Location
from inferbench.core.rundir import RunInfo, read_jobs
from inferbench.launch.deployment import Deployment, deployment_from_dicts
from inferbench.launch.local import LocalOptions
from inferbench.launch.plan import Backend, Engine
from inferbench.launch.planner import PlanOptions
from inferbench.launch.rundir import RunDir, read_run_info, run_dir
from inferbench.launch.session import RunOptions

# The settings a flag can give, as run.json keeps them, and the flag that gives each.
FLAGS = {
    "root": "--root",
    "backend": "--backend",
    "engine": "--engine",
    "cluster": "--cluster",
    "filters": "the sweep filters",
    "retries": "--retries",
    "fail_fast": "--fail-fast",
    "max_jobs": "--max-jobs",
    "max_prompts": "--max-prompts",
    "repeats": "--repeats",
    "request_timeout": "--request-timeout",
    "engine_args": "--engine-args",
    "engine_env": "--engine-env",
    "sim_realtime": "--sim-realtime",
}


@dataclass(frozen=True)
class SavedRun:
    run: RunDir
    info: RunInfo
    deployments: list[Deployment]

    def options(
        self,
        runs_dir: Path,
        *,
        srt_slurm: Sequence[str] = (),
        srtctl_root: Path | None = None,
    ) -> RunOptions:
        """The RunOptions the run was started with, resuming it. `srt_slurm` / `srtctl_root`
        given replace the saved ones (where the sources are, not what runs: they may have
        moved); not given, the saved ones stay."""
        info, settings = self.info, self.info.settings
        plan = PlanOptions(**settings.plan)
        if srtctl_root is not None:
            plan = replace(plan, srtctl_root=str(srtctl_root.resolve()))
        return RunOptions(
            root=Path(info.root),
            backend=Backend(info.backend),
            engine=Engine(info.engine) if info.engine else None,
            runs_dir=runs_dir,
            resume=info.run_id,
            retries=settings.retries,
            fail_fast=settings.fail_fast,
            max_jobs=settings.max_jobs,
            cluster=info.cluster,
            plan=plan,
            local=LocalOptions(**settings.local),
            slurm_poll_s=settings.slurm_poll_s,
            filters=dict(info.filters),
            srt_slurm=tuple(absolute_source(s) for s in srt_slurm) or settings.srt_slurm,
            adaptive=settings.adaptive,
        )


def _deployments(run: RunDir) -> list[Deployment]:
    if not run.jobs_json.exists() and not run.jobs_json.is_symlink():
        raise InputError(
            f"run {run.run_id} has no jobs.json (it was started by an older inferbench)",
            location=Location(file=run.jobs_json),
            hint="resume it with the inferbench version that started it, or start a new run",
        )
    try:
        return [
            replace(deployment_from_dicts([entry.job]), concurrencies=entry.concurrencies)
            for entry in read_jobs(run.jobs_json)
        ]
    except (ValueError, KeyError, TypeError, InputError) as exc:
        why = exc.message if isinstance(exc, InputError) else str(exc)
        why = why.removeprefix("jobs.json is damaged: ")
        raise InputError(
            f"jobs.json of run {run.run_id} is unreadable: {why}",
            location=Location(file=run.jobs_json),
            hint="start a new run; this one's directory was edited or truncated",
        ) from None


def load_saved_run(runs_dir: Path, run_id: str) -> SavedRun:
    run = run_dir(runs_dir.resolve(), run_id)
    info = read_run_info(run)
    return SavedRun(run=run, info=info, deployments=_deployments(run))


def _saved(info: RunInfo) -> dict[str, Any]:
    return {
        "root": info.root,
        "backend": info.backend,
        "engine": info.engine,
        "cluster": info.cluster,
        "filters": info.filters,
        "retries": info.settings.retries,
        "fail_fast": info.settings.fail_fast,
        "max_jobs": info.settings.max_jobs,
        "max_prompts": info.settings.plan.get("max_prompts"),
        "repeats": info.settings.plan.get("repeats", 1),
        "request_timeout": info.settings.plan.get("request_timeout_s"),
        "engine_args": list(info.settings.plan.get("engine_args") or ()),
        "engine_env": dict(info.settings.plan.get("engine_env") or {}),
        "sim_realtime": bool(info.settings.plan.get("sim_realtime", False)),
    }


def _plain(value: object) -> object:
    """JSON's view of a value (tuples are lists, enums their strings), to compare with run.json."""
    return json.loads(json.dumps(value, default=str))


def refuse_conflicts(info: RunInfo, given: Mapping[str, object]) -> None:
    """InputError naming every setting in `given` (the flags typed beside --resume, in
    run.json's terms) that disagrees with the run's own."""
    saved = _saved(info)
    unknown = sorted(set(given) - set(saved))
    if unknown:
        raise ValueError(f"not run settings: {unknown}")
    wrong = [
        f"{FLAGS[name]} {_plain(value)!r} (this run: {_plain(saved[name])!r})"
        for name, value in given.items()
        if _plain(value) != _plain(saved[name])
    ]
    if wrong:
        raise InputError(
            f"--resume {info.run_id} takes every setting from its run.json; these differ: "
            + "; ".join(wrong),
            location=Location(key="--resume"),
            hint=f"drop them (`inferbench run --resume {info.run_id}`), or start a new run",
        )
