"""The inputs of `inferbench run` and `plan`, as given, and the RunOptions they resolve to.

`LaunchArgs` (how each job is served: both commands) and `RunArgs` (what a run keeps and
measures: `run` only) are the one list of those options: each field's description is its
`--help` and its `Flag` its spelling (`inferbench.cli.options` makes the options from them).
`run_options` and `plan_options` turn them into the RunOptions a RunRequest is built from,
refusing a value inferbench cannot use with the option's name.
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from inferbench.core.errors import InputError, Location
from inferbench.core.flags import Flag
from inferbench.core.model import FrozenModel
from inferbench.engines.registry import engine_keys
from inferbench.launch.plan import Backend, Engine

if TYPE_CHECKING:  # `inferbench --help` reads the options without loading the launcher
    from inferbench.launch.planner import PlanOptions
    from inferbench.launch.session import RunOptions
    from inferbench.matrix.filters import SweepFilters

MAX_REQUEST_TIMEOUT_S = 86_400.0  # a day: past it a value is a typo, not a timeout


class LaunchArgs(FrozenModel):
    """How `plan` and `run` serve each job."""

    backend: Backend = Field(Backend.LOCAL, description="Where jobs run.")
    engine: Annotated[Engine | None, Flag("--engine", parse=Engine)] = Field(
        None,
        description=f"Serve with this engine: {', '.join(engine_keys())} (sim: the simulator; "
        "an engine a package registers is one too).",
    )
    cluster: str | None = Field(None, description="Catalog cluster (slurm/srtctl backends).")
    srtctl_root: Path | None = Field(
        None, description="srt-slurm checkout srtctl submits from (srtctl_root)."
    )
    engine_args: str = Field(
        "",
        description="Extra server flags for a real engine, one shell-quoted string, appended "
        "after the derived ones (so they win): --engine-args '--enforce-eager --max-num-seqs "
        "64'.",
    )
    engine_env: tuple[str, ...] = Field(
        (), description="NAME=VALUE for the engine server's environment (repeatable)."
    )
    tree_script: Annotated[bool, Flag("--tree-script/--no-tree-script")] = Field(
        True,
        description="Run single-node jobs through the tree's own benchmark script where it "
        "has one (local backend, no --engine), as InferenceX does; --no-tree-script: "
        "inferbench's launch.",
    )
    sim_realtime: bool = Field(
        False,
        description="Serve the simulator's points in real time (`sim serve` and the load "
        "generator, for testing clients) instead of on its own virtual clock (seconds for a "
        "whole curve).",
    )


class RunArgs(FrozenModel):
    """What `run` keeps, retries and measures."""

    runs_dir: Annotated[Path, Flag("--runs-dir", writes="folder")] = Field(
        Path("runs"), description="Where runs are kept."
    )
    resume: str | None = Field(
        None, description="Continue this run id, with its own settings (run.json)."
    )
    retries: int = Field(0, ge=0, description="Retries on infra failures.")
    fail_fast: bool = Field(False, description="Stop at the first failure.")
    max_jobs: int | None = Field(None, ge=1, description="Run at most N jobs.")
    max_prompts: int | None = Field(None, ge=1, description="Cap per point.")
    repeats: int = Field(
        1, ge=1, description="Measure each point N times (`results compare` pools)."
    )
    eval_task: str = Field("gsm8k", description="Task of the run-eval jobs: gsm8k | gpqa.")
    eval_dataset: Path | None = Field(
        None, description="Local eval data (else the Hugging Face cache)."
    )
    eval_limit: int | None = Field(
        None, ge=1, description="Eval only the first N questions (a smoke run)."
    )
    duration: float | None = Field(
        None, ge=1, description="Agentic jobs: seconds per point (job: 3600)."
    )
    request_timeout: float | None = Field(
        None,
        description="Seconds a request may take to answer in full before it fails (default "
        "600; a stalled server holds each point that long).",
    )
    trace: Path | None = Field(
        None, description="Agentic jobs: trace file or folder (default: synthetic)."
    )
    synth: str = Field("", description="Agentic jobs: `traces synth` spec.")


def plan_options(
    launch: LaunchArgs, filters: SweepFilters, run: RunArgs | None = None
) -> PlanOptions:
    """The plan knobs the options give (`plan`'s, or with `run`'s too)."""
    from inferbench.launch.planner import PlanOptions

    plan = PlanOptions(
        srtctl_root=_absolute(launch.srtctl_root),
        recipe_concurrencies=not filters.picks_concurrencies,
        engine_args=split_engine_args(launch.engine_args),
        engine_env=env_pairs(launch.engine_env),
        tree_script=launch.tree_script,
        sim_realtime=launch.sim_realtime,
    )
    if run is None:
        return plan
    from inferbench.evals.spec import task_info

    return replace(
        plan,
        max_prompts=run.max_prompts,
        request_timeout_s=check_request_timeout(run.request_timeout),
        repeats=run.repeats,
        eval_task=task_info(run.eval_task).name,
        eval_dataset=_absolute(run.eval_dataset),
        eval_limit=run.eval_limit,
        agentic_duration_s=run.duration,
        trace=_absolute(run.trace),
        synth=run.synth,
    )


def launch_options(
    root: Path, args: LaunchArgs, filters: SweepFilters, srt_slurm: tuple[str, ...]
) -> RunOptions:
    """What `plan` prints the plans with."""
    from inferbench.launch.session import RunOptions

    return RunOptions(
        root=root,
        backend=args.backend,
        engine=args.engine,
        cluster=args.cluster,
        srt_slurm=srt_slurm,
        plan=plan_options(args, filters),
    )


def run_options(
    root: Path,
    launch: LaunchArgs,
    run: RunArgs,
    filters: SweepFilters,
    srt_slurm: tuple[str, ...],
    adaptive: dict[str, object] | None,
) -> RunOptions:
    """What `run` runs with (a resume takes the run's own instead: `launch.resume`)."""
    from inferbench.launch.session import RunOptions

    return RunOptions(
        root=root,
        backend=launch.backend,
        engine=launch.engine,
        runs_dir=run.runs_dir,
        retries=run.retries,
        fail_fast=run.fail_fast,
        max_jobs=run.max_jobs,
        cluster=launch.cluster,
        plan=plan_options(launch, filters, run),
        filters=filters_kept(filters),
        srt_slurm=srt_slurm,
        adaptive=adaptive,
    )


def filters_kept(filters: SweepFilters) -> dict[str, object]:
    """The filters as run.json keeps them: only those that narrow the sweep."""
    return {k: v for k, v in filters.__dict__.items() if v not in (None, (), "all")}


def split_engine_args(text: str) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(text))
    except ValueError as exc:
        raise InputError(
            f"{exc} in {text!r}; quote each flag as a shell would",
            location=Location(key="--engine-args"),
        ) from None


def env_pairs(items: tuple[str, ...]) -> dict[str, str]:
    """`--engine-env NAME=VALUE ...` as the server's environment; a secret is refused, as
    run.json keeps the values."""
    from inferbench.core.redact import looks_secret

    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise InputError(
                f"{item!r} is not NAME=VALUE (e.g. VLLM_CPU_KVCACHE_SPACE=4)",
                location=Location(key="--engine-env"),
            )
        if looks_secret(name):
            raise InputError(
                f"{name} looks like a secret, and run.json keeps --engine-env values; export it"
                " in the environment instead (the server inherits it)",
                location=Location(key="--engine-env"),
            )
        out[name] = value
    return out


def check_request_timeout(seconds: float | None) -> float | None:
    if seconds is not None and not 0 < seconds <= MAX_REQUEST_TIMEOUT_S:  # NaN too
        raise InputError(
            f"must be above 0 and at most {MAX_REQUEST_TIMEOUT_S:g} seconds, got {seconds:g}",
            location=Location(key="--request-timeout"),
            hint="give the seconds one request may take, e.g. --request-timeout 120",
        )
    return seconds


def _absolute(path: Path | None) -> str | None:
    return None if path is None else str(path.resolve())
