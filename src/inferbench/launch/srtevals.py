"""Evals on the srtctl backend, the way InferenceX's launchers ask srt-slurm for them.

srt-slurm runs lm-eval itself after the benchmark (`do_sweep.py`, its `lm-eval` runner):
on `RUN_EVAL=true` (or instead of it, `EVAL_ONLY=true`), at `EVAL_CONC`, with InferenceX's
own harness (`benchmarks/benchmark_lib.sh`, `utils/evals/`) from the checkout the submitting
environment names in `INFMAX_WORKSPACE` (mounted on the nodes at /infmax-workspace), and
the job's identity in the variables InferenceX's `append_lm_eval_summary` writes into
`meta_env.json`. It leaves lm-eval's files and that meta file in `logs/eval_results/`; they
are collected as `results/eval_<task>_conc<C>.json` and as the job's InferenceX artifact.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import orjson

from inferbench.launch.deployment import Deployment
from inferbench.launch.plan import EvalPlan
from inferbench.launch.rundir import JobDir

WORKSPACE_LIB = Path("benchmarks") / "benchmark_lib.sh"
SRTCTL_TASK = "gsm8k"  # srt-slurm's runner runs InferenceX's default task file


def _flag(value: bool | None) -> str:
    return "true" if value else "false"


def eval_env(dep: Deployment, tree: Path, plan: EvalPlan) -> dict[str, str] | str:
    """The submitting environment that makes srt-slurm run the deployment's eval, or why it
    cannot (the reason becomes the plan's warning)."""
    if not (tree / WORKSPACE_LIB).is_file():
        return (
            f"the tree has no {WORKSPACE_LIB}: srt-slurm's lm-eval runs InferenceX's harness "
            "from an InferenceX checkout (INFMAX_WORKSPACE)"
        )
    if plan.task != SRTCTL_TASK:
        return f"srt-slurm's lm-eval runs InferenceX's {SRTCTL_TASK}, not {plan.task}"
    job = dep.job
    env = {
        "RUN_EVAL": "true",
        "EVAL_ONLY": _flag(plan.only),
        "EVAL_CONC": str(plan.concurrencies[0]),
        "INFMAX_WORKSPACE": str(tree.resolve()),
        "IS_MULTINODE": "true",
        "FRAMEWORK": job.framework,
        "PRECISION": job.precision,
        "MODEL_PREFIX": job.model_prefix,
        "RUNNER_TYPE": job.runner,
        "SPEC_DECODING": job.spec_decoding,
        "MODEL": job.model,
        "RESULT_FILENAME": job.exp_name,
        "ISL": str(job.isl or 0),
        "OSL": str(job.osl or 0),
    }
    if job.max_model_len:
        env["MAX_MODEL_LEN"] = str(job.max_model_len)
    if plan.limit is not None:
        env["EVAL_LIMIT"] = str(plan.limit)
    for role, block in (("PREFILL", job.prefill), ("DECODE", job.decode)):
        if block is not None:
            env[f"{role}_TP"] = str(block.tp)
            env[f"{role}_EP"] = str(block.ep)
            env[f"{role}_DP_ATTN"] = _flag(block.dp_attn)
            env[f"{role}_NUM_WORKERS"] = str(block.num_worker)
    return env


def collect_evals(
    output_dirs: list[Path], job_dir: JobDir, plan: EvalPlan, model: str, job_id: str
) -> Path:
    """srt-slurm's `logs/eval_results/` (the first of the job's Slurm jobs that has one) as
    `results/eval_<task>_conc<C>.json` and, copied whole, the job's InferenceX artifact under
    `<run>/eval_results/<fingerprint>/`; a failed eval, with the reason, when lm-eval left no
    score or the job never got as far as its eval."""
    from inferbench.evals.inferencex import ARTIFACTS_DIR
    from inferbench.evals.lmeval import parse_results
    from inferbench.evals.result import EvalResult, EvalStatus, write_eval_result
    from inferbench.evals.spec import EvalSpec, task_info
    from inferbench.launch.evalstep import eval_result_name

    info = task_info(plan.task)
    conc = plan.concurrencies[0]
    folders = [d / "logs" / "eval_results" for d in output_dirs]
    folder = next((f for f in folders if f.is_dir()), folders[0] if folders else job_dir.path)
    ran = folder.is_dir() and folder.name == "eval_results"
    scores, samples = parse_results(folder, info) if ran else ((), None)
    newest = sorted(folder.glob("results*.json"), key=lambda p: p.stat().st_mtime)
    version = None
    if newest:
        try:
            version = orjson.loads(newest[-1].read_bytes()).get("lm_eval_version")
        except (OSError, orjson.JSONDecodeError, AttributeError):
            version = None
    ok = bool(scores) and any(s.samples for s in scores)
    why = "srt-slurm's lm-eval left no score (see logs/eval.out of the job)"
    if not ran:
        why = "the job left no logs/eval_results: srt-slurm never ran its eval"
    stamp = datetime.now(UTC).isoformat()
    result = EvalResult(
        task=info.name,
        lm_eval_task=info.lm_eval_task,
        status=EvalStatus.OK if ok else EvalStatus.FAILED,
        reason=None if ok else why,
        scores=scores,
        primary_metric=info.primary[0],
        primary_filter=info.primary[1],
        model=model,
        base_url=f"srtctl:{job_id}",
        spec=EvalSpec(
            task=info.name, concurrency=conc, context_length=plan.context_length, limit=plan.limit
        ),  # fmt: skip
        harness_version=str(version) if version else None,
        started_at=stamp,
        finished_at=stamp,
        samples_file=None if samples is None else str(samples),
    )
    target = job_dir.results / eval_result_name(info.name, conc)
    write_eval_result(target, result)
    if ran:
        artifact = job_dir.path.parent / ARTIFACTS_DIR / job_dir.path.name
        artifact.mkdir(parents=True, exist_ok=True)
        for file in folder.iterdir():
            if file.is_file() and not file.is_symlink():
                shutil.copyfile(file, artifact / file.name)
    return target
