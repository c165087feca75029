"""A job's accuracy evals, after its throughput points, against the same server.

InferenceX does not publish a throughput number without an eval of the configuration:
jobs the sweep marks `run-eval` (or `eval-only`) get lm-eval at each eval concurrency.
Each eval ends as `results/eval_<task>_conc<C>.json` whatever happens (lm-eval missing,
data missing, the server failing mid-eval): an outcome that the results stage stores,
never an exception that ends the sweep. A rerun skips evals already recorded as run.
lm-eval's own files are staged as InferenceX stages them, under
`<run>/eval_results/<fingerprint>/` with the job's `meta_env.json` (`evals.inferencex`).
"""

from __future__ import annotations

from pathlib import Path

from inferbench.core.job import Job
from inferbench.launch.plan import BenchSpec

EVAL_WALL_TIMEOUT_S = 4 * 3600.0  # a full GSM8K at low concurrency takes a while


def eval_result_name(task: str, concurrency: int) -> str:
    return f"eval_{task}_conc{concurrency}.json"


def eval_statuses(results: Path) -> list[str]:
    """One word per eval a job recorded, for a run's summary: `gsm8k@c32 ok 0.712`,
    `gsm8k@c32 simulated`, `gsm8k@c32 unavailable`, `gsm8k@c32 failed`."""
    from inferbench.core.errors import InferbenchError
    from inferbench.evals.result import EvalStatus, read_eval_result

    out = []
    for path in sorted(results.glob("eval_*_conc*.json")):
        conc = path.stem.rpartition("_conc")[2]
        try:
            result = read_eval_result(path)
        except InferbenchError:
            out.append(f"{path.stem.removeprefix('eval_')} unreadable")
            continue
        word = str(result.status)
        if result.status is EvalStatus.OK:
            primary = result.primary
            word = "simulated" if result.simulated else "ok"
            if primary is not None and not result.simulated:
                word += f" {primary.value:.3f}"
        out.append(f"{result.task}@c{conc} {word}")
    return out


def read_job(path: Path) -> Job | None:
    """The job a job directory ran (None when job.json is missing or damaged: the evals still
    run, only the InferenceX artifact's identity is lost)."""
    try:
        return Job.model_validate_json(path.read_bytes())
    except (OSError, ValueError):
        return None


def run_evals(
    base_url: str,
    bench: BenchSpec,
    results: Path,
    logs: Path,
    job: Job | None = None,
    *,
    tree: Path | None = None,
) -> list[Path]:
    """Run the plan's evals; returns the result files written (or already there). With the
    job, lm-eval's files also become its InferenceX artifact (`<run>/eval_results/<fp>/`);
    with the benchmark tree, its task files and lm-eval patch are used where it has them."""
    from inferbench.evals.inferencex import (
        ARTIFACTS_DIR,
        meta_env,
        stage_lm_eval_files,
        write_meta_env,
    )
    from inferbench.evals.lmeval import run_eval
    from inferbench.evals.result import EvalStatus, read_eval_result, write_eval_result
    from inferbench.evals.spec import EvalSpec

    plan = bench.eval
    if plan is None:
        return []
    written = []
    done: list[int] = []
    failed: list[int] = []
    artifact = results.parent.parent / ARTIFACTS_DIR / results.parent.name
    for conc in plan.concurrencies:
        target = results / eval_result_name(plan.task, conc)
        if target.is_file():
            try:
                if read_eval_result(target).status is EvalStatus.OK:
                    written.append(target)
                    done.append(conc)
                    continue
            except Exception:  # an unreadable file is redone
                pass
        spec = EvalSpec(
            task=plan.task,
            dataset=Path(plan.dataset) if plan.dataset else None,
            concurrency=conc,
            context_length=plan.context_length,
            limit=plan.limit,
            tree=tree.resolve() if tree is not None else None,
        )
        result = run_eval(
            base_url,
            bench.model,
            spec,
            logs / f"eval_{plan.task}_conc{conc}",
            wall_timeout_s=EVAL_WALL_TIMEOUT_S,
        )
        write_eval_result(target, result)
        written.append(target)
        ok = result.status is EvalStatus.OK
        (done if ok else failed).append(conc)
        if job is not None and ok:
            stage_lm_eval_files(logs / f"eval_{plan.task}_conc{conc}", artifact, conc)
    if job is not None and done:
        meta = meta_env(
            job,
            model=bench.model,
            conc=plan.concurrencies[0],
            eval_concs=plan.concurrencies,
            completed=done,
            failed=failed,
        )
        write_meta_env(artifact, meta)
    return written
