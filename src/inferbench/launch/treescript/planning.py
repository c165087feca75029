"""The local plan of a job the tree has a benchmark script for: the script, not our argv."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from inferbench.evals.spec import task_info
from inferbench.launch.deployment import Deployment
from inferbench.launch.plan import Backend, BenchPoint, Plan
from inferbench.launch.planner import PlanOptions, bench_spec, eval_plan
from inferbench.launch.serverargs import detect_engine
from inferbench.launch.treescript.capture import DEFAULT_TIMEOUT_S, capture_script
from inferbench.launch.treescript.contract import DEFAULT_PORT, script_env
from inferbench.launch.treescript.locate import ScriptChoice, find_script, launchers_for
from inferbench.launch.treescript.model import ScriptPlan
from inferbench.launch.treescript.stage import CONTAINER_WORKSPACE, EVAL_TASK_DIR


def choose_script(
    dep: Deployment, root: Path, labels: Mapping[str, Sequence[str]]
) -> ScriptChoice | None:
    """The script InferenceX would run for `dep`, or None (multinode, or none in the tree)."""
    if dep.multinode:
        return None
    launchers = launchers_for(root, dep.runner, labels)
    if not launchers:
        return None
    probe = script_env(
        dep, dep.concurrencies[0], workspace=CONTAINER_WORKSPACE, runner_name=launchers[0][1]
    )
    return find_script(root, launchers, probe)


def point_env(
    dep: Deployment,
    choice: ScriptChoice,
    conc: int,
    options: PlanOptions,
    *,
    workspace: str = CONTAINER_WORKSPACE,
    port: int = DEFAULT_PORT,
) -> dict[str, str]:
    """The contract of one point: RUN_EVAL where the job evals at this concurrency,
    `--duration` as the workflow's duration input of an agentic job (DURATION), and
    `--eval-limit` as the workflow's eval-limit input (EVAL_LIMIT) and `--eval-dataset` as
    a copy of the tree's task file reading it (EVAL_TASKS_DIR, which run_lm_eval reads;
    the run writes the copy in its /tmp)."""
    evals = eval_plan(dep, options)
    env = script_env(
        dep,
        conc,
        workspace=workspace,
        runner_name=choice.runner_name,
        port=port,
        run_eval=evals is not None and conc in evals.concurrencies,
        eval_only=evals is not None and evals.only,
        launcher_env=dict(choice.exports),
    )
    if dep.agentic and options.agentic_duration_s is not None:  # the workflow's duration input
        env["DURATION"] = str(max(1, round(options.agentic_duration_s)))
    if evals is not None and evals.limit is not None:
        env["EVAL_LIMIT"] = str(evals.limit)
    if evals is not None and evals.dataset is not None:
        env["EVAL_TASKS_DIR"] = f"{EVAL_TASK_DIR}/{task_info(evals.task).file}"
    return env


def script_plan(
    dep: Deployment,
    root: Path,
    labels: Mapping[str, Sequence[str]],
    options: PlanOptions,
    *,
    port: int = DEFAULT_PORT,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> Plan | None:
    """A plan that runs the tree's script once per concurrency, with what each run starts
    captured under stubs; None when the tree has no script for the job."""
    choice = choose_script(dep, root, labels)
    if choice is None:
        return None
    bench = bench_spec(dep, options)
    if bench.eval is not None and bench.eval.only:
        # an eval-only job is still a run of the script (EVAL_ONLY=true: it serves and evals,
        # no throughput) at each eval concurrency, as the workflow runs it
        points = tuple(
            BenchPoint(concurrency=c, num_prompts=0, num_warmups=0)
            for c in bench.eval.concurrencies
        )
        bench = bench.model_copy(update={"points": points})
    captures = tuple(
        capture_script(
            root,
            choice.script,
            point_env(dep, choice, point.concurrency, options, port=port),
            point.concurrency,
            timeout_s=timeout_s,
        )
        for point in bench.points
    )
    script = ScriptPlan(
        script=choice.script,
        launcher=choice.launcher,
        runner_name=choice.runner_name,
        alternatives=tuple(f"{s} ({launcher})" for s, launcher in choice.alternatives),
        points=captures,
    )
    warnings = [f"conc {c.concurrency}: {c.problem}" for c in captures if c.problem]
    if options.engine_args or options.engine_env:
        warnings.append(
            "engine arguments do not reach the tree's benchmark script (it starts its own "
            "server); pass --no-tree-script to launch the engine with them"
        )
    return Plan(
        backend=Backend.LOCAL,
        engine=detect_engine(dep),
        fingerprint=dep.fingerprint,
        config_key=dep.config_key,
        bench=bench,
        notes=(f"InferenceX's own benchmark script {choice.script}, as {choice.launcher} runs it",),
        warnings=tuple(warnings),
        script=script,
    )
