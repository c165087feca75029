"""`inferbench eval`: the accuracy of one OpenAI-compatible endpoint on one task (lm-eval)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from inferbench.cli.outputs import output_file, output_folder
from inferbench.cli.progress import working
from inferbench.core.errors import InputError, Location
from inferbench.core.fsio import is_stream


def eval_cmd(
    base_url: str = typer.Option(..., "--base-url", help="Server root, e.g. http://127.0.0.1:8000"),
    model: str = typer.Option(..., "--model", help="Model name the server serves"),
    task: str = typer.Option("gsm8k", "--task", help="gsm8k | gpqa"),
    dataset: Path | None = typer.Option(
        None, "--dataset", help="local JSON lines file, or a folder of <split>.jsonl"
    ),
    endpoint: str = typer.Option("chat", "--endpoint", help="chat (InferenceX) | completions"),
    concurrency: int = typer.Option(64, "--concurrency", help="requests in flight"),
    context_length: int = typer.Option(16384, "--context-length", help="max_length (tokens)"),
    num_fewshot: int | None = typer.Option(None, "--num-fewshot", help="task default if unset"),
    limit: int | None = typer.Option(None, "--limit", help="first N questions only"),
    result_file: Path | None = typer.Option(
        None, "--output", "-o", parser=output_file("--output"), help="the eval's JSON"
    ),
    result_dir: Path | None = typer.Option(
        None,
        "--output-dir",
        parser=output_folder("--output-dir"),
        help="folder: eval_<task>.json and lm-eval's logs",
    ),
    timeout: float | None = typer.Option(None, "--timeout", help="seconds for the whole eval"),
    root: Path | None = typer.Option(
        None,
        "--root",
        help="InferenceX tree: its utils/evals task files and lm-eval patch are used "
        "(default: inferbench's copies)",
    ),
) -> None:
    """Score an endpoint with lm-evaluation-harness, InferenceX's task definitions and settings.

    Data come from --dataset or the local Hugging Face cache; nothing is downloaded. Against
    `inferbench sim serve` the score is labelled simulated: its answers are random tokens.
    Exit 0 when the eval ran, 1 when it failed, 2 for bad input or a missing lm-eval/dataset.
    """
    from inferbench.bench.arguments import validated
    from inferbench.core.redact import redact_url
    from inferbench.evals.inferencex import meta_env, stage_lm_eval_files, write_meta_env
    from inferbench.evals.lmeval import run_eval
    from inferbench.evals.result import EvalStatus, eval_file_name, write_eval_result
    from inferbench.evals.spec import EvalApi, EvalSpec, task_info

    info = task_info(task)
    if timeout is not None and not timeout > 0:  # NaN too
        raise InputError(
            f"--timeout must be above 0 seconds, not {timeout:g}",
            location=Location(key="--timeout"),
            hint="give the seconds the whole eval may take, e.g. --timeout 3600",
        )
    if endpoint not in ("chat", "completions"):
        raise InputError(
            f"unknown endpoint {endpoint!r}", location=Location(key="--endpoint"), hint="chat"
        )
    if result_file is not None and result_dir is not None:
        raise InputError(
            "give --output or --output-dir, not both", location=Location(key="--output")
        )
    spec = validated(
        EvalSpec,
        {
            "": "--task",
            "dataset": "--dataset",
            "concurrency": "--concurrency",
            "context_length": "--context-length",
            "num_fewshot": "--num-fewshot",
            "limit": "--limit",
            "tree": "--root",
        },
        tree=root.resolve() if root is not None else None,
        task=info.name,
        dataset=dataset,
        api=EvalApi(endpoint),
        concurrency=concurrency,
        context_length=context_length,
        num_fewshot=num_fewshot,
        limit=limit,
    )
    # lm-eval's logs go beside the result file; not into /dev beside /dev/stdout
    beside = result_file is not None and not is_stream(result_file)
    folder = result_dir or (result_file.parent if result_file and beside else Path("."))
    console = Console(stderr=True, highlight=False)
    with working(console, f"lm-eval {info.name} against {redact_url(base_url)}"):
        result = run_eval(base_url, model, spec, folder, wall_timeout_s=timeout)
    target = result_file or folder / eval_file_name(info.name)
    write_eval_result(target, result)
    # the folder is also an InferenceX eval artifact (collect_eval_results.py reads it)
    if stage_lm_eval_files(folder.resolve() / f"lm_eval_{info.name}", folder):
        write_meta_env(folder, meta_env(None, model=model, conc=spec.concurrency))
    table = Table("task", "metric", "filter", "score", "stderr", "n", title=f"eval {model}")
    for s in result.scores:
        stderr = f"{s.stderr:.4f}" if s.stderr is not None else "-"
        table.add_row(info.name, s.metric, s.filter, f"{s.value:.4f}", stderr, str(s.samples))
    if result.scores:
        console.print(table)
    if result.simulated:
        console.print(
            "[yellow]simulated[/]: the simulator answers with random tokens; "
            "this score is a smoke test, not an accuracy"
        )
    console.print(f"wrote {target}", markup=False)
    if result.status is EvalStatus.UNAVAILABLE:
        console.print(f"[red]unavailable[/]: {escape(str(result.reason))}")
        raise typer.Exit(2)
    if result.status is EvalStatus.FAILED:
        console.print(f"[red]failed[/]: {escape(str(result.reason))}")
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_cmd)
