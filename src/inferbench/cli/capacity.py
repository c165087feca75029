"""`inferbench capacity`: the most load a deployment carries within latency targets."""

from __future__ import annotations

from pathlib import Path

import typer

from inferbench.cli.outputs import output_folder
from inferbench.core.errors import InputError


def capacity_cmd(
    slo: str = typer.Option(..., "--slo", help="targets, e.g. ttft_p90<=2s,tpot_p90<=50ms"),
    base_url: str | None = typer.Option(None, "--base-url", help="server to measure"),
    model: str | None = typer.Option(None, "--model", help="model the server serves"),
    job: str | None = typer.Option(
        None, "--job", help="sweep job (jobs.json:N): simulated first (bracket), or alone"
    ),
    isl: int | None = typer.Option(None, "--isl", help="input length (default: the job's)"),
    osl: int | None = typer.Option(None, "--osl", help="output length (default: the job's)"),
    grid: str = typer.Option(
        "1,2,4,8,16,32,64,128,256,512", "--concurrency", help="the loads to choose from"
    ),
    repeats: int = typer.Option(3, "--repeats", help="measurements of a load near a bound"),
    noise: float = typer.Option(0.05, "--noise", help="within this of a bound, measure again"),
    prompts_per_load: int = typer.Option(10, "--prompts-per-load", help="prompts per stream"),
    gpus: int | None = typer.Option(None, "--gpus", help="GPUs of the deployment"),
    gpu_kw: float | None = typer.Option(
        None,
        "--gpu-kw",
        help="provisioned kW per GPU, for per-MW figures (default: the catalog's for a --job)",
    ),
    result_dir: Path | None = typer.Option(
        None, "--output-dir", parser=output_folder("--output-dir"), help="measured points"
    ),
    trace: Path | None = typer.Option(
        None, "--trace", help="agent sessions: replay this trace file or folder as the load"
    ),
    synth: str | None = typer.Option(None, "--synth", help="agent sessions: synthetic, k=v,..."),
    duration: float = typer.Option(60.0, "--duration", help="agentic: seconds each load runs"),
    fmt: str = typer.Option("table", "--format", help="table, or json (inferbench.capacity/1)"),
) -> None:
    """Find the highest concurrency of the grid that meets every target: simulated for a
    --job (labelled predicted), measured on a --base-url (started at the prediction), with
    repeats where a measurement lies within --noise of a bound. Exit 0 when a load met
    the targets, 1 when even the lowest missed them."""
    from inferbench.bench.arguments import validated
    from inferbench.capacity.render import render_report
    from inferbench.capacity.request import CapacityRequest
    from inferbench.capacity.run import run_capacity

    if fmt not in ("table", "json"):
        raise InputError(f"unknown --format {fmt!r}", hint="use table or json")
    request = validated(
        CapacityRequest,
        {"": "--slo", "grid": "--concurrency", "result_dir": "--output-dir"}
        | {f: "--" + f.replace("_", "-") for f in CapacityRequest.model_fields},
        slo=slo, base_url=base_url, model=model, job=job, isl=isl, osl=osl, grid=grid,
        repeats=repeats, noise=noise, prompts_per_load=prompts_per_load, gpus=gpus,
        gpu_kw=gpu_kw, result_dir=result_dir, trace=trace, synth=synth, duration=duration,
    )  # fmt: skip
    report = run_capacity(request)
    typer.echo(render_report(report, fmt), nl=False)
    answer = report.measured or report.predicted
    if answer is not None and answer.result.capacity is None:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("capacity")(capacity_cmd)
