"""A job's accuracy evals, after its throughput points, against the same server.

InferenceX does not publish a throughput number without an eval of the configuration:
jobs the sweep marks `run-eval` (or `eval-only`) get lm-eval at each eval concurrency.
Each eval ends as `results/eval_<task>_conc<C>.json` whatever happens (lm-eval missing,
data missing, the server failing mid-eval): an outcome that the results stage stores,
never an exception that ends the sweep. A rerun skips evals already recorded as run.
"""

from __future__ import annotations

from pathlib import Path

from inferbench.launch.plan import BenchSpec

EVAL_WALL_TIMEOUT_S = 4 * 3600.0  # a full GSM8K at low concurrency takes a while


def eval_result_name(task: str, concurrency: int) -> str:
    return f"eval_{task}_conc{concurrency}.json"


def run_evals(base_url: str, bench: BenchSpec, results: Path, logs: Path) -> list[Path]:
    """Run the plan's evals; returns the result files written (or already there)."""
    from inferbench.evals.lmeval import run_eval
    from inferbench.evals.result import EvalStatus, read_eval_result, write_eval_result
    from inferbench.evals.spec import EvalSpec

    plan = bench.eval
    if plan is None:
        return []
    written = []
    for conc in plan.concurrencies:
        target = results / eval_result_name(plan.task, conc)
        if target.is_file():
            try:
                if read_eval_result(target).status is EvalStatus.OK:
                    written.append(target)
                    continue
            except Exception:  # an unreadable file is redone
                pass
        spec = EvalSpec(
            task=plan.task,
            dataset=Path(plan.dataset) if plan.dataset else None,
            concurrency=conc,
            context_length=plan.context_length,
            limit=plan.limit,
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
    return written
