"""Build the `Plan` of one deployment for a backend and an engine: a pure function."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from inferbench.bench.preset import SA_BENCH
from inferbench.core.errors import InputError, Location
from inferbench.core.job import short_fingerprint
from inferbench.engines.registry import sim_costing
from inferbench.evals.spec import eval_context_length
from inferbench.launch.deployment import Deployment
from inferbench.launch.plan import (
    AgenticBench,
    Backend,
    BenchPoint,
    BenchSpec,
    Engine,
    EvalPlan,
    Plan,
    ProcessSpec,
    RenderedFile,
)
from inferbench.launch.sbatch import SCRIPT_NAME, container_wrap, render_sbatch
from inferbench.launch.serverargs import build_server, detect_engine, engine_args
from inferbench.launch.site import SlurmSite

JOB_FILE = "job.json"  # relative to the job directory, the server's working directory


@dataclass(frozen=True)
class PlanOptions:
    """Knobs of a plan that do not come from the job (the sa-bench defaults otherwise)."""

    num_prompts_mult: int = SA_BENCH.prompts_per_conc
    num_warmup_mult: int = SA_BENCH.warmups_per_conc
    max_prompts: int | None = None  # cap per point (the demo keeps runs short)
    max_warmups: int | None = None
    max_failure_rate: float = SA_BENCH.max_failure_rate
    request_timeout_s: float | None = None  # per request (None: the load generator's 600 s)
    repeats: int = 1  # measurements per point, pooled by `results compare`
    host: str = "127.0.0.1"
    port: int | None = None  # None: 0 for the simulator, 8000 for real engines
    python: str | None = None  # interpreter that runs inferbench (sim, bench) on the node
    model_path: str | None = None  # the cluster's staged weights (else the model id)
    agentic_duration_s: float | None = None  # replaces an agentic job's duration (3600 s)
    trace: str | None = None  # agentic jobs: trace file or folder (default: synthetic)
    synth: str = ""  # agentic jobs without a trace: `traces synth` spec
    srtctl_root: str | None = None  # the srt-slurm checkout srtctl submits from (srtctl)
    # srtctl: run a recipe's own benchmark.concurrencies, as InferenceX's launchers run
    # `srtctl apply -f $CONFIG_FILE` unchanged; False when the user chose concurrencies
    recipe_concurrencies: bool = True
    evals: bool = True  # run the evals of jobs marked `run-eval`
    eval_task: str = "gsm8k"
    eval_dataset: str | None = None  # a local file/folder; None: the Hugging Face cache
    eval_limit: int | None = None  # first N questions only (a smoke run)
    # appended to a real engine's server argv (argparse and click take the last occurrence of
    # a flag, so these override the derived ones) and added to its environment
    engine_args: tuple[str, ...] = ()
    engine_env: Mapping[str, str] = field(default_factory=dict)
    # run a single-node job through the tree's own benchmark script when it has one (local)
    tree_script: bool = True
    # the simulator serves each point in real time (`sim serve`, for testing clients) instead
    # of estimating it on its own clock (the local backend; see simclock.py)
    sim_realtime: bool = False


def eval_plan(dep: Deployment, options: PlanOptions) -> EvalPlan | None:
    """The deployment's evals, InferenceX's way (context isl + osl + 256, capped at the
    engine's max-model-len), or None when none is marked or evals are off."""
    if not options.evals or not dep.eval_concurrencies:
        return None
    context = eval_context_length(dep.isl, dep.osl, dep.max_model_len)
    return EvalPlan(
        task=options.eval_task,
        concurrencies=dep.eval_concurrencies,
        context_length=context,
        dataset=options.eval_dataset,
        only=dep.eval_only,
        limit=options.eval_limit,
    )


def bench_spec(dep: Deployment, options: PlanOptions) -> BenchSpec:
    evals = eval_plan(dep, options)
    points = []
    for conc in () if evals is not None and evals.only else dep.concurrencies:
        prompts = conc * options.num_prompts_mult
        warmups = conc * options.num_warmup_mult
        if options.max_prompts is not None:
            prompts = max(1, min(prompts, options.max_prompts))
        if options.max_warmups is not None:
            warmups = min(warmups, options.max_warmups)
        points.append(BenchPoint(concurrency=conc, num_prompts=prompts, num_warmups=warmups))
    agentic = None
    if dep.offload is not None:
        agentic = AgenticBench(
            duration_s=options.agentic_duration_s or dep.offload.duration_s,
            trace=options.trace,
            synth=options.synth,
            max_model_len=dep.max_model_len,
        )
    return BenchSpec(
        model=dep.model,
        isl=dep.isl,
        osl=dep.osl,
        points=tuple(points),
        max_failure_rate=options.max_failure_rate,
        request_timeout_s=options.request_timeout_s,
        repeats=options.repeats,
        eval=evals,
        agentic=agentic,
    )


def resolve_engine(dep: Deployment, engine: Engine | None) -> Engine:
    """The engine asked for, else the job's own GPU engine, else the simulator."""
    return engine if engine is not None else detect_engine(dep)


def server_process(dep: Deployment, engine: Engine, options: PlanOptions) -> ProcessSpec:
    """The one server process of a single-node deployment, run from the job directory."""
    if dep.multinode and engine is not Engine.SIM:
        raise InputError(
            f"{dep.config_key or dep.fingerprint}: a multinode job runs through srtctl, "
            f"not as one {engine} process",
            location=Location(key="backend"),
            hint="use --backend srtctl, or --engine sim to simulate it on this machine",
        )
    port = options.port if options.port is not None else (0 if engine is Engine.SIM else 8000)
    args = engine_args(dep, host=options.host, port=port, model_path=options.model_path)
    cmd = build_server(engine, args, job_file=JOB_FILE, python=options.python)
    argv, env = cmd.argv, dict(cmd.env)
    if engine is not Engine.SIM:
        argv, env = (*argv, *options.engine_args), {**env, **options.engine_env}
    return ProcessSpec(
        name=f"{engine}-server",
        argv=argv,
        env=env,
        host=options.host,
        port=port,
        health_path=cmd.health_path,
        ready_pattern=cmd.ready_pattern,
    )


def local_plan(
    dep: Deployment, engine: Engine | None = None, options: PlanOptions | None = None
) -> Plan:
    """Plan for the local backend: one server process on this machine plus the bench."""
    options = options or PlanOptions()
    chosen = resolve_engine(dep, engine)
    proc = server_process(dep, chosen, options)
    args = engine_args(dep, host=options.host, port=proc.port, model_path=options.model_path)
    cmd = build_server(chosen, args, job_file=JOB_FILE, python=options.python)
    files = cmd.files
    bench = bench_spec(dep, options)
    if cmd.api_model is not None:  # the server answers to another name than the model id
        bench = bench.model_copy(update={"model": cmd.api_model})
    notes = list(args.notes)
    warnings: list[str] = []
    costed_as: str | None = None
    if chosen is Engine.SIM and detect_engine(dep) is not Engine.SIM:
        notes.append(f"simulating {dep.framework} on {dep.runner} instead of starting it")
    if chosen is Engine.SIM:
        costing, stand_in = sim_costing(dep.framework)
        if stand_in is not None:
            warnings.append(stand_in)
            costed_as = costing.key
    if chosen is Engine.SIM and (options.engine_args or options.engine_env):
        warnings.append("engine arguments are for a real engine; the simulator ignores them")
    return Plan(
        backend=Backend.LOCAL,
        engine=chosen,
        fingerprint=dep.fingerprint,
        config_key=dep.config_key,
        processes=(proc,),
        files=tuple(RenderedFile(name=n, content=c) for n, c in sorted(files.items())),
        bench=bench,
        notes=tuple(notes),
        warnings=tuple(warnings),
        costed_as=costed_as,
    )


def slurm_plan(
    dep: Deployment,
    site: SlurmSite,
    job_dir: str,
    engine: Engine | None = None,
    options: PlanOptions | None = None,
) -> Plan:
    """Plan for the slurm backend: the local plan inside one allocation, via sbatch."""
    options = options or PlanOptions()
    if site.python and options.python is None:
        options = replace(options, python=site.python)
    base = local_plan(dep, engine, options)
    gpus = 0 if base.engine is Engine.SIM else engine_args(dep).gpus
    server = container_wrap(base.processes[0], site, dep.image, job_dir)
    name = f"inferbench-{short_fingerprint(dep.fingerprint)}"
    script = render_sbatch(name, site, gpus, job_dir)
    notes = list(base.notes)
    if gpus and site.gpus_per_node == 0:
        notes.append(f"cluster {site.name} declares no GPUs: none requested")
    return base.model_copy(
        update={
            "backend": Backend.SLURM,
            "processes": (server,),
            "files": (*base.files, RenderedFile(name=SCRIPT_NAME, content=script, executable=True)),
            "submit": (
                "sbatch",
                "--parsable",
                f"--chdir={job_dir}",
                f"{job_dir}/rendered/{SCRIPT_NAME}",
            ),
            "notes": tuple(notes),
        }
    )
