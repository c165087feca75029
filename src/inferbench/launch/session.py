"""Turn `inferbench run` / `plan` options into a RunRequest: tree, sweep, planner, executor."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from inferbench.config.cluster import Cluster
from inferbench.config.srt_slurm_refs import absolute_source
from inferbench.core.errors import InputError, Location
from inferbench.core.rundir import RunSettings
from inferbench.launch.benchpoint import bench_point_runner
from inferbench.launch.deployment import Deployment
from inferbench.launch.execute import Executor
from inferbench.launch.local import LocalExecutor, LocalOptions
from inferbench.launch.nodeport import free_port
from inferbench.launch.plan import Backend, Engine, Plan
from inferbench.launch.planner import PlanOptions, local_plan, resolve_engine, slurm_plan
from inferbench.launch.rundir import JobDir
from inferbench.launch.runner import RunRequest
from inferbench.launch.shellsafe import check_cluster
from inferbench.launch.simclock import OpenJob, SimClockExecutor, virtual_plan
from inferbench.launch.site import SlurmSite, site_from_cluster
from inferbench.launch.slurm import SlurmExecutor
from inferbench.launch.stop import StopRequest

if TYPE_CHECKING:
    from inferbench.config.project import Project
    from inferbench.launch.srtcluster import SrtctlCatalog
    from inferbench.launch.srtplan import SrtSources


@dataclass(frozen=True)
class RunOptions:
    root: Path
    backend: Backend = Backend.LOCAL
    engine: Engine | None = None
    runs_dir: Path = Path("runs")
    resume: str | None = None
    retries: int = 0
    fail_fast: bool = False
    max_jobs: int | None = None
    cluster: str | None = None
    plan: PlanOptions = field(default_factory=PlanOptions)
    local: LocalOptions = field(default_factory=LocalOptions)
    slurm_poll_s: float = 1.0
    filters: dict[str, object] = field(default_factory=dict)
    # srtctl backend: the srt-slurm sources (`--srt-slurm`: a clone, a bundle, a checkout
    # PATH[@REF]); each job's recipe is read at the ref its launcher clones
    srt_slurm: tuple[str, ...] = ()
    adaptive: dict[str, object] | None = None  # `run --adaptive`: the planner's settings


def settings_of(options: RunOptions) -> RunSettings:
    """What run.json keeps of `options` besides tree, filters, backend, engine, cluster."""
    return RunSettings(
        retries=options.retries,
        fail_fast=options.fail_fast,
        max_jobs=options.max_jobs,
        plan=asdict(options.plan),
        local=asdict(options.local),
        slurm_poll_s=options.slurm_poll_s,
        srt_slurm=[absolute_source(s) for s in options.srt_slurm],
        adaptive=options.adaptive,
    )


def find_cluster(project: Project | None, name: str | None) -> Cluster | None:
    if name is None:
        return None
    clusters = project.clusters if project is not None else {}
    entry = clusters.get(name)
    if entry is None:
        known = ", ".join(sorted(clusters)) if clusters else "none"
        raise InputError(
            f"unknown cluster {name!r}",
            location=Location(key="--cluster"),
            hint=f"the cluster catalog defines: {known}",
        )
    check_cluster(entry)  # its values reach sbatch scripts
    return entry.cluster


def find_site(cluster: Cluster | None) -> SlurmSite:
    """The Slurm view of the catalog cluster; a plain local Slurm when none is named."""
    if cluster is None:
        return SlurmSite()
    if cluster.scheduler.type != "slurm":
        raise InputError(
            f"cluster {cluster.name} has no Slurm scheduler (scheduler.type: "
            f"{cluster.scheduler.type})",
            location=Location(key="--cluster"),
            hint="use --backend local on its machines",
        )
    return site_from_cluster(cluster)


def staged_model(cluster: Cluster | None, dep: Deployment) -> str | None:
    """Where the cluster keeps the job's weights, if the catalog says."""
    if cluster is None:
        return None
    entry = cluster.model_entry(dep.model_prefix, dep.precision, dep.framework, dep.model)
    return entry.path if entry is not None else None


def planner_for(
    options: RunOptions,
    site: SlurmSite,
    project: Project | None = None,
    cluster: Cluster | None = None,
    *,
    pick_ports: bool = True,
) -> Callable[[Deployment, JobDir], Plan]:
    """Plans per deployment; a real engine on the local backend gets a free port each attempt
    (`pick_ports=False` keeps the default 8000 so printed plans are stable)."""

    catalog: list[SrtctlCatalog] = []  # the srtctl clusters, read once on first use
    # the srt-slurm sources and launcher routes: read before any job, so that a bad
    # --srt-slurm is one error (exit 2), never one per job
    srt = (
        srt_sources(options.srt_slurm, project)
        if options.backend is Backend.SRTCTL and project is not None
        else None
    )

    def plan(dep: Deployment, job: JobDir) -> Plan:
        engine = options.engine
        job_dir = str(job.path.resolve())
        if options.backend is Backend.SRTCTL:
            from inferbench.launch.srtcluster import srtctl_catalog
            from inferbench.launch.srtplan import srtctl_plan

            if not catalog and project is not None:
                catalog.append(srtctl_catalog(project))
            return srtctl_plan(
                dep,
                project,
                options.cluster,
                job_dir,
                options.plan,
                catalog=catalog[0] if catalog else None,
                srt_slurm=srt,
            )
        popts = options.plan
        if project is not None:
            args, env = project.layout.engine_overrides(dep.config_key)
            if args or env:  # the tree's per-entry arguments first; the command line's win
                extra_env = {**env, **popts.engine_env}
                popts = replace(
                    popts, engine_args=(*args, *popts.engine_args), engine_env=extra_env
                )
        if popts.model_path is None and resolve_engine(dep, engine) is not Engine.SIM:
            popts = replace(popts, model_path=staged_model(cluster, dep))
        if options.backend is Backend.SLURM:
            return slurm_plan(dep, site, job_dir, engine, popts)
        if engine is None and popts.tree_script and project is not None:
            scripted = tree_script_plan(dep, project, popts, pick_ports=pick_ports)
            if scripted is not None:  # InferenceX's own script for the job: run it
                return scripted
        real = resolve_engine(dep, engine) is not Engine.SIM
        if pick_ports and real and popts.port is None:
            popts = replace(popts, port=free_port(popts.host))
        local = local_plan(dep, engine, popts)
        if engine is not None and real and popts.tree_script and project is not None:
            local = _script_passed_over(local, dep, project, engine)
        return local if popts.sim_realtime else virtual_plan(local)

    return plan


def _script_passed_over(plan: Plan, dep: Deployment, project: Project, engine: Engine) -> Plan:
    """`--engine` launches the engine with inferbench's flags; where the tree has a script for
    the job (what InferenceX runs), the plan says so instead of falling back silently."""
    from inferbench.launch.treescript.planning import choose_script

    labels = project.runners.registry.labels if project.runners is not None else {}
    choice = choose_script(dep, project.root, labels)
    if choice is None:
        return plan
    warning = (
        f"the tree has {choice.script} for this job, which InferenceX runs; --engine {engine} "
        f"starts {engine} with inferbench's flags instead (run without --engine to use the script)"
    )
    return plan.model_copy(update={"warnings": (*plan.warnings, warning)})


def srt_sources(given: Sequence[str], project: Project) -> SrtSources:
    """The `--srt-slurm` sources of a run, with the tree's launcher routes, read once."""
    from inferbench.config.srt_job import RunnerLaunchers
    from inferbench.config.srt_slurm_refs import SrtSlurmSources
    from inferbench.launch.srtplan import SrtSources

    sources = SrtSlurmSources(list(given)) if given else None
    return SrtSources(sources, RunnerLaunchers(project))


def tree_script_plan(
    dep: Deployment, project: Project, popts: PlanOptions, *, pick_ports: bool
) -> Plan | None:
    """The plan through the tree's own benchmark script, when the tree has one for `dep`."""
    from inferbench.launch.treescript.contract import DEFAULT_PORT
    from inferbench.launch.treescript.planning import script_plan

    labels = project.runners.registry.labels if project.runners is not None else {}
    port = popts.port or (free_port(popts.host) if pick_ports else DEFAULT_PORT)
    return script_plan(dep, project.root, labels, popts, port=port)


def executor_for(
    options: RunOptions, *, preview: bool = False, simulator: OpenJob | None = None
) -> Executor:
    """The backend's executor. On the local backend the simulator's plans run on its own
    clock through `simulator` (`inferbench.sim.points.open_job`), unless `sim_realtime`."""
    if options.backend is Backend.LOCAL:
        serve = LocalExecutor(bench_point_runner(), options.local, tree_root=options.root)
        if options.plan.sim_realtime or preview:
            return serve
        if simulator is None:
            raise ValueError("a virtual-clock run needs the simulator: pass simulator=open_job")
        return SimClockExecutor(simulator, serve)
    if options.backend is Backend.SLURM:
        return SlurmExecutor(poll_s=options.slurm_poll_s)
    from inferbench.launch.srtctl import SrtctlExecutor, require_srtctl

    if not preview:
        require_srtctl()  # stop before anything is written, saying how to get it
    return SrtctlExecutor(poll_s=options.slurm_poll_s)


def build_request(
    options: RunOptions,
    project: Project | None,
    deployments: Sequence[Deployment],
    *,
    preview: bool = False,
    stop: StopRequest | None = None,
    simulator: OpenJob | None = None,
) -> RunRequest:
    """The request `execute_run` takes (`preview`: for printing plans, nothing will run;
    `simulator`: what runs the simulator's points on its own clock, see `executor_for`)."""
    cluster = None if options.backend is Backend.SRTCTL else find_cluster(project, options.cluster)
    site = find_site(cluster) if options.backend is Backend.SLURM else SlurmSite()
    return RunRequest(
        deployments=deployments,
        backend=options.backend,
        engine=options.engine,
        runs_dir=options.runs_dir.resolve(),
        root=options.root.resolve(),
        planner=planner_for(options, site, project, cluster, pick_ports=not preview),
        executor=executor_for(options, preview=preview, simulator=simulator),
        resume=options.resume,
        retries=options.retries,
        fail_fast=options.fail_fast,
        max_jobs=options.max_jobs,
        filters=options.filters,
        cluster=options.cluster,
        settings=settings_of(options),
        stop=stop or StopRequest(),
    )
