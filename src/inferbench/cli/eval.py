"""`inferbench eval`: the accuracy of one OpenAI-compatible endpoint on one task (lm-eval)."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from inferbench.cli.options import with_options
from inferbench.cli.progress import working
from inferbench.evals.invocation import EvalArgs


@with_options
def eval_cmd(args: EvalArgs) -> None:
    """Score an endpoint with lm-evaluation-harness, InferenceX's task definitions and settings.

    Data come from --dataset or the local Hugging Face cache; nothing is downloaded. Against
    `inferbench sim serve` the score is labelled simulated: its answers are random tokens.
    Exit 0 when the eval ran, 1 when it failed, 2 for bad input or a missing lm-eval/dataset.
    """
    from inferbench.core.redact import redact_url
    from inferbench.evals.inferencex import meta_env, stage_lm_eval_files, write_meta_env
    from inferbench.evals.invocation import resolve
    from inferbench.evals.lmeval import run_eval
    from inferbench.evals.result import EvalStatus, write_eval_result

    inv = resolve(args)
    task, folder = inv.spec.task, inv.folder
    console = Console(stderr=True, highlight=False)
    with working(console, f"lm-eval {task} against {redact_url(args.base_url)}"):
        result = run_eval(args.base_url, args.model, inv.spec, folder, wall_timeout_s=args.timeout)
    write_eval_result(inv.target, result)
    # the folder is also an InferenceX eval artifact (collect_eval_results.py reads it)
    if stage_lm_eval_files(folder.resolve() / f"lm_eval_{task}", folder):
        write_meta_env(folder, meta_env(None, model=args.model, conc=inv.spec.concurrency))
    table = Table("task", "metric", "filter", "score", "stderr", "n", title=f"eval {args.model}")
    for s in result.scores:
        stderr = f"{s.stderr:.4f}" if s.stderr is not None else "-"
        table.add_row(task, s.metric, s.filter, f"{s.value:.4f}", stderr, str(s.samples))
    if result.scores:
        console.print(table)
    if result.simulated:
        console.print(
            "[yellow]simulated[/]: the simulator answers with random tokens; "
            "this score is a smoke test, not an accuracy"
        )
    console.print(f"wrote {inv.target}", markup=False)
    if result.status is EvalStatus.UNAVAILABLE:
        console.print(f"[red]unavailable[/]: {escape(str(result.reason))}")
        raise typer.Exit(2)
    if result.status is EvalStatus.FAILED:
        console.print(f"[red]failed[/]: {escape(str(result.reason))}")
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_cmd)
