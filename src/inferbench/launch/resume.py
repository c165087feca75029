"""`inferbench run --resume RUN-ID`: every setting comes back from the run directory.

`run.json` holds the tree, filters, backend, engine, cluster and options; `jobs.json` the
deployments the run was started with, so a resume runs exactly those (the tree is re-read
only to plan them, never re-expanded). A flag given beside `--resume` that disagrees with
`run.json` is refused: a resume that quietly changed the engine or the filters would mix
two experiments in one run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from inferbench.config.srt_slurm_refs import absolute_source
from inferbench.core.errors import InputError, Location
from inferbench.core.rundir import RunInfo, read_jobs
from inferbench.launch.deployment import Deployment, deployment_from_dicts
from inferbench.launch.local import LocalOptions
from inferbench.launch.plan import Backend, Engine
from inferbench.launch.planner import PlanOptions
from inferbench.launch.rundir import RunDir, read_run_info, run_dir
from inferbench.launch.session import RunOptions

T = TypeVar("T")


@dataclass(frozen=True)
class _Setting:
    flag: str  # the flag that gives it, as a message names it
    value: Callable[[RunOptions], object]  # where RunOptions holds it, as run.json keeps it


# The settings a flag can give: a resume refuses a flag that changes one (in this order).
SETTINGS = {
    "root": _Setting("--root", lambda o: str(Path(o.root).resolve())),
    "backend": _Setting("--backend", lambda o: str(o.backend)),
    "engine": _Setting("--engine", lambda o: str(o.engine) if o.engine else None),
    "cluster": _Setting("--cluster", lambda o: o.cluster),
    "retries": _Setting("--retries", lambda o: o.retries),
    "fail_fast": _Setting("--fail-fast", lambda o: o.fail_fast),
    "max_jobs": _Setting("--max-jobs", lambda o: o.max_jobs),
    "max_prompts": _Setting("--max-prompts", lambda o: o.plan.max_prompts),
    "repeats": _Setting("--repeats", lambda o: o.plan.repeats),
    "request_timeout": _Setting("--request-timeout", lambda o: o.plan.request_timeout_s),
    "engine_args": _Setting("--engine-args", lambda o: list(o.plan.engine_args)),
    "engine_env": _Setting("--engine-env", lambda o: dict(o.plan.engine_env)),
    "sim_realtime": _Setting("--sim-realtime", lambda o: o.plan.sim_realtime),
    "filters": _Setting("the sweep filters", lambda o: o.filters),
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
        options = options_of(self.info, runs_dir)
        if srtctl_root is not None:
            plan = replace(options.plan, srtctl_root=str(srtctl_root.resolve()))
            options = replace(options, plan=plan)
        if srt_slurm:
            options = replace(options, srt_slurm=tuple(absolute_source(s) for s in srt_slurm))
        return options


def options_of(info: RunInfo, runs_dir: Path = Path("runs")) -> RunOptions:
    """The RunOptions run.json says the run was started with (resuming it)."""
    settings = info.settings
    saved = runs_dir / info.run_id / "run.json"
    return RunOptions(
        root=Path(info.root),
        backend=_saved(saved, "backend", lambda: Backend(info.backend)),
        engine=_saved_engine(info.engine, info.run_id),
        runs_dir=runs_dir,
        resume=info.run_id,
        retries=settings.retries,
        fail_fast=settings.fail_fast,
        max_jobs=settings.max_jobs,
        cluster=info.cluster,
        plan=_saved(saved, "settings.plan", lambda: PlanOptions(**settings.plan)),
        local=_saved(saved, "settings.local", lambda: LocalOptions(**settings.local)),
        slurm_poll_s=settings.slurm_poll_s,
        filters=dict(info.filters),
        srt_slurm=settings.srt_slurm,
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


def _plain(value: object) -> object:
    """JSON's view of a value (tuples are lists, enums their strings), to compare with run.json."""
    return json.loads(json.dumps(value, default=str))


def resume_options(saved: SavedRun, asked: RunOptions, given: Collection[str]) -> RunOptions:
    """The run's own options, once none of the settings in `given` (typed beside --resume)
    changes one. The srt-slurm sources and srtctl root `asked` names replace the saved ones
    (they say where the sources are now, not what runs)."""
    refuse_conflicts(saved.info, asked, given)
    srtctl_root = asked.plan.srtctl_root
    return saved.options(
        asked.runs_dir,
        srt_slurm=asked.srt_slurm,
        srtctl_root=Path(srtctl_root) if srtctl_root is not None else None,
    )


def refuse_conflicts(info: RunInfo, asked: RunOptions, given: Collection[str]) -> None:
    """InputError naming every setting in `given` (those the flags typed beside --resume
    set, by their SETTINGS names) where `asked` disagrees with the run's own."""
    unknown = sorted(set(given) - set(SETTINGS))
    if unknown:
        raise ValueError(f"not run settings: {unknown}")
    saved = options_of(info)
    wrong = []
    for name, setting in SETTINGS.items():
        want, have = _plain(setting.value(asked)), _plain(setting.value(saved))
        if name in given and want != have:
            wrong.append(f"{setting.flag} {want!r} (this run: {have!r})")
    if wrong:
        raise InputError(
            f"--resume {info.run_id} takes every setting from its run.json; these differ: "
            + "; ".join(wrong),
            location=Location(key="--resume"),
            hint=f"drop them (`inferbench run --resume {info.run_id}`), or start a new run",
        )


def _saved(path: Path, key: str, build: Callable[[], T]) -> T:
    """A setting of run.json as the type it is, or an InputError naming the key (a run.json
    edited by hand, or written by another version, may hold anything)."""
    try:
        return build()
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"cannot be resumed: {str(exc).splitlines()[0]}",
            location=Location(file=path, key=key),
            hint="run.json was edited or written by another inferbench version: start a"
            " new run (or resume with the version that started it)",
        ) from None


def _saved_engine(key: str | None, run_id: str) -> Engine | None:
    """The run's `--engine`; one no longer registered (its package uninstalled) is refused."""
    if not key:
        return None
    try:
        return Engine(key)
    except ValueError as exc:
        raise InputError(
            f"run {run_id} was started with --engine {key}: {exc}",
            location=Location(key="engine"),
            hint="install the package that registers it again, or start a new run",
        ) from None
