"""`inferbench bench`: measure an OpenAI-compatible server (parse, call the library, render)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from inferbench.bench.api import BenchOptions, BenchRun, PointOutcome, run_bench
from inferbench.bench.arguments import (
    build_workload,
    load_points,
    parse_extra_body,
    parse_preset,
    parse_slo,
    result_path,
    validated,
)
from inferbench.bench.preset import SA_BENCH
from inferbench.bench.result import write_detail_jsonl, write_point_result
from inferbench.bench.schedule import LoadPoint
from inferbench.bench.settings import ApiKind, ClientOptions, Endpoint, RequestOptions


def _summary(console: Console, run: BenchRun) -> None:
    table = Table(title="inferbench bench", show_lines=False)
    for col in (
        "point",
        "ok",
        "failed",
        "req/s",
        "out tok/s",
        "TTFT p50/p99 ms",
        "TPOT p50 ms",
        "ITL p99 ms",
        "in flight max/mean",
    ):
        table.add_column(col, justify="right")
    for p in run.points:
        sa, ib = p.result.sa, p.result.inferbench
        failed = ", ".join(f"{k} {v}" for k, v in ib.failures.items() if v) or "0"
        table.add_row(
            ib.load.label + ("" if ib.complete else " (incomplete)"),
            str(sa.completed),
            failed,
            f"{sa.request_throughput:.2f}",
            f"{sa.output_throughput:.1f}",
            f"{sa.median_ttft_ms:.1f} / {sa.p99_ttft_ms:.1f}",
            f"{sa.median_tpot_ms:.2f}",
            f"{sa.p99_itl_ms:.2f}",
            f"{ib.in_flight.max} / {ib.in_flight.time_weighted_mean:.1f}",
        )
    console.print(table)
    for p in run.points:
        for example in p.result.inferbench.failure_examples:
            console.print(f"  [yellow]{p.result.inferbench.load.label}[/] {example}")


def register(app: typer.Typer) -> None:
    app.command("bench")(bench)


def bench(
    base_url: str = typer.Option(..., "--base-url", help="Server root, e.g. http://127.0.0.1:8000"),
    model: str = typer.Option(..., "--model", help="Model name the server serves"),
    isl: int | None = typer.Option(None, "--isl", help="Input length (tokens)"),
    osl: int | None = typer.Option(None, "--osl", help="Output length (tokens)"),
    concurrency: str | None = typer.Option(None, "--concurrency", help="4,8,16 or 4x8x16"),
    num_prompts: int | None = typer.Option(None, "--num-prompts"),
    request_rate: float | None = typer.Option(None, "--request-rate", help="req/s (open loop)"),
    burstiness: float = typer.Option(1.0, "--burstiness", help="gamma shape; 1 = Poisson"),
    warmups: int | None = typer.Option(None, "--warmups"),
    duration: float | None = typer.Option(None, "--duration", help="seconds per point"),
    endpoint: ApiKind = typer.Option(ApiKind.COMPLETIONS, "--endpoint"),
    api_key_env: str | None = typer.Option(None, "--api-key-env", help="env var with the key"),
    result_file: Path | None = typer.Option(None, "--result-file"),
    result_dir: Path | None = typer.Option(None, "--result-dir"),
    detail_file: Path | None = typer.Option(None, "--detail-file", help="per-request JSONL"),
    detail: bool = typer.Option(False, "--detail", help="ttfts/itls/texts in the result file"),
    max_failure_rate: float = typer.Option(SA_BENCH.max_failure_rate, "--max-failure-rate"),
    request_timeout: float = typer.Option(600.0, "--request-timeout", help="seconds"),
    slo: str | None = typer.Option(None, "--slo", help="ttft=2000,tpot=50,e2el=60000 (ms)"),
    preset: str | None = typer.Option(None, "--preset", help="sa-bench"),
    tokenizer: Path | None = typer.Option(None, "--tokenizer", help="local tokenizer.json"),
    dataset: Path | None = typer.Option(None, "--dataset", help="JSONL or ShareGPT file"),
    dataset_format: str = typer.Option("jsonl", "--dataset-format", help="jsonl|sharegpt"),
    range_ratio: float | None = typer.Option(None, "--range-ratio"),
    range_mode: str | None = typer.Option(None, "--range-mode", help="inferencex|vllm|sglang"),
    prefix_groups: int | None = typer.Option(
        None, "--prefix-groups", help="shared-prefix groups (requests cycle through them)"
    ),
    prefix_len: int | None = typer.Option(
        None, "--prefix-len", help="tokens of each group's shared prefix (--isl: the suffix)"
    ),
    seed: int = typer.Option(0, "--seed"),
    workers: int | None = typer.Option(None, "--workers", help="client processes (default auto)"),
    no_ignore_eos: bool = typer.Option(False, "--no-ignore-eos"),
    temperature: float = typer.Option(0.0, "--temperature"),
    http_client: str = typer.Option("fast", "--http-client", help="fast|aiohttp"),
    receive_stamps: str = typer.Option(
        "kernel", "--receive-stamps", help="kernel (arrival, SO_TIMESTAMPNS) | user (handled)"
    ),
    extra_body: str | None = typer.Option(
        None, "--extra-body", help='JSON object merged into each request body, e.g. {"top_k": 1}'
    ),
) -> None:
    """Stream requests at an OpenAI-compatible server and write one result file per point."""
    chosen = parse_preset(preset)
    ep = validated(
        Endpoint,
        "--base-url",
        base_url=base_url,
        model=model,
        api=endpoint,
        api_key_env=api_key_env,
    )
    spec = build_workload(
        isl,
        osl,
        dataset,
        dataset_format,
        tokenizer,
        range_ratio,
        range_mode,
        chosen,
        prefix_groups,
        prefix_len,
    )
    points = load_points(
        concurrency, request_rate, burstiness, num_prompts, warmups, duration, chosen
    )
    request = validated(
        RequestOptions,
        "--temperature",
        ignore_eos=not no_ignore_eos,
        temperature=temperature,
        extra_body=parse_extra_body(extra_body),
    )
    client = validated(
        ClientOptions,
        "--max-failure-rate",
        request_timeout_s=request_timeout,
        workers=workers,
        max_failure_rate=max_failure_rate,
        detail=detail,
        seed=seed,
        http_client=http_client,
        receive_stamps=receive_stamps,
    )
    options = BenchOptions(request=request, client=client, slo=parse_slo(slo))
    console = Console(stderr=True)
    many = len(points) > 1

    def save(outcome: PointOutcome) -> None:
        point = outcome.result.inferbench.load
        path = result_path(result_file, result_dir, point, many)
        if path is not None:
            write_point_result(path, outcome.result)
            console.print(f"wrote {path}")
        if detail_file is not None:
            write_detail_jsonl(
                result_path(detail_file, None, point, many) or detail_file, outcome.run.records
            )

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        bars: dict[str, TaskID] = {}

        def on_progress(point: LoadPoint, done: int, total: int) -> None:
            if point.label not in bars:
                bars[point.label] = progress.add_task(point.label, total=total)
            progress.update(bars[point.label], completed=done)

        run = run_bench(ep, spec, points, options, on_progress=on_progress, on_point=save)
    _summary(console, run)
    if run.interrupted:
        console.print(
            "[red]interrupted[/]: finished requests were kept, the point is marked incomplete"
        )
        raise typer.Exit(130)
    if run.failures:
        for line in run.failures:
            console.print(f"[red]failed[/] {line}")
        raise typer.Exit(1)
