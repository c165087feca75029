"""`inferbench bench`: measure an OpenAI-compatible server (parse, call the library, render)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import orjson
import typer
from pydantic import BaseModel, ValidationError
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
from inferbench.bench.metrics import Slo
from inferbench.bench.result import write_detail_jsonl, write_point_result
from inferbench.bench.schedule import LoadPoint, parse_concurrency_list
from inferbench.bench.settings import ApiKind, ClientOptions, Endpoint, RequestOptions
from inferbench.bench.workload import (
    FileWorkload,
    RandomWorkload,
    RangeMode,
    SharedPrefixWorkload,
    Workload,
)
from inferbench.errors import InputError, Location

M = TypeVar("M", bound=BaseModel)


def parse_slo(text: str | None) -> Slo | None:
    """`ttft=2000,tpot=50,e2el=30000` (milliseconds) -> Slo."""
    if not text:
        return None
    values: dict[str, float] = {}
    for item in text.split(","):
        name, _, value = item.partition("=")
        name = name.strip().lower().removesuffix("_ms")
        if name not in ("ttft", "tpot", "e2el"):
            raise InputError(
                f"unknown SLO {name!r}", location=Location(key="--slo"), hint="ttft, tpot, e2el"
            )
        try:
            values[f"{name}_ms"] = float(value.strip().removesuffix("ms"))
        except ValueError:
            raise InputError(
                f"SLO {name} needs a number of milliseconds", location=Location(key="--slo")
            ) from None
    return _validated(Slo, "--slo", **values)


def _validated(cls: type[M], key: str, **fields: Any) -> M:
    try:
        return cls(**fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise InputError(f"{field}: {err['msg']}", location=Location(key=key)) from None


def _extra_body(text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise InputError(
            f"--extra-body is not valid JSON ({exc})",
            location=Location(key="--extra-body"),
            hint="a JSON object, e.g. '{\"top_k\": 1}'",
        ) from None
    if not isinstance(value, dict):
        raise InputError(
            "--extra-body must be a JSON object",
            location=Location(key="--extra-body"),
            hint="e.g. '{\"top_k\": 1}'",
        )
    return value


def _points(
    concurrency: str | None,
    request_rate: float | None,
    burstiness: float,
    num_prompts: int | None,
    warmups: int | None,
    duration: float | None,
    preset: str | None,
) -> list[LoadPoint]:
    concs: list[int | None] = list(parse_concurrency_list(concurrency)) if concurrency else [None]
    if concs == [None] and request_rate is None:
        raise InputError(
            "give --concurrency, --request-rate, or both", location=Location(key="--concurrency")
        )
    points = []
    for conc in concs:
        base = conc or 1
        prompts = num_prompts or (10 * base if preset == "sa-bench" else None)
        if prompts is None:
            prompts = 1000 if duration else None
        if prompts is None:
            raise InputError(
                "give --num-prompts (or --duration, or --preset sa-bench)",
                location=Location(key="--num-prompts"),
            )
        warm = warmups if warmups is not None else (2 * base if preset == "sa-bench" else 0)
        point = _validated(
            LoadPoint,
            "--concurrency",
            concurrency=conc,
            request_rate=request_rate,
            burstiness=burstiness,
            num_prompts=prompts,
            duration_s=duration,
            warmups=warm,
        )
        points.append(point)
    return points


def _workload(
    isl: int | None,
    osl: int | None,
    dataset: Path | None,
    dataset_format: str,
    tokenizer: Path | None,
    range_ratio: float | None,
    range_mode: str | None,
    preset: str | None,
    prefix_groups: int | None = None,
    prefix_len: int | None = None,
) -> Workload:
    if dataset is not None:
        return _validated(
            FileWorkload,
            "--dataset",
            path=dataset,
            format=dataset_format,
            osl=osl,
            tokenizer=tokenizer,
        )
    else:
        if isl is None or osl is None:
            raise InputError("give --isl and --osl (or --dataset)", location=Location(key="--isl"))
        if range_ratio is not None and range_mode is None and preset != "sa-bench":
            raise InputError(
                "--range-ratio means different things to different tools",
                location=Location(key="--range-mode"),
                hint="name the convention: --range-mode inferencex|vllm|sglang",
            )
        ratio = range_ratio if range_ratio is not None else (0.8 if preset == "sa-bench" else 1.0)
        mode = RangeMode(range_mode) if range_mode else RangeMode.INFERENCEX
    if (prefix_groups is None) != (prefix_len is None):
        raise InputError(
            "a shared prefix needs both --prefix-groups and --prefix-len",
            location=Location(key="--prefix-groups" if prefix_groups is None else "--prefix-len"),
            hint="e.g. --prefix-groups 4 --prefix-len 1024 (then --isl is each request's suffix)",
        )
    if prefix_groups is not None:
        return _validated(
            SharedPrefixWorkload,
            "--prefix-groups",
            groups=prefix_groups,
            prefix_len=prefix_len,
            isl=isl,
            osl=osl,
            range_ratio=ratio,
            range_mode=mode,
            tokenizer=tokenizer,
        )
    return _validated(
        RandomWorkload,
        "--isl",
        isl=isl,
        osl=osl,
        range_ratio=ratio,
        range_mode=mode,
        tokenizer=tokenizer,
    )


def result_path(
    base: Path | None, result_dir: Path | None, point: LoadPoint, many: bool
) -> Path | None:
    """`--result-file out.json` -> out.json, or out_c<C>.json when there are several points."""
    if result_dir is not None:
        return result_dir / f"{point.label}.json"
    if base is None:
        return None
    return base.with_name(f"{base.stem}_{point.label}{base.suffix or '.json'}") if many else base


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
    max_failure_rate: float = typer.Option(0.05, "--max-failure-rate"),
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
    if preset not in (None, "sa-bench"):
        raise InputError(
            f"unknown preset {preset!r}", location=Location(key="--preset"), hint="sa-bench"
        )
    if range_mode is not None and range_mode not in {m.value for m in RangeMode}:
        raise InputError(
            f"unknown range mode {range_mode!r}",
            location=Location(key="--range-mode"),
            hint="inferencex, vllm or sglang",
        )
    ep = _validated(
        Endpoint,
        "--base-url",
        base_url=base_url,
        model=model,
        api=endpoint,
        api_key_env=api_key_env,
    )
    spec = _workload(
        isl,
        osl,
        dataset,
        dataset_format,
        tokenizer,
        range_ratio,
        range_mode,
        preset,
        prefix_groups,
        prefix_len,
    )
    points = _points(concurrency, request_rate, burstiness, num_prompts, warmups, duration, preset)
    request = _validated(
        RequestOptions,
        "--temperature",
        ignore_eos=not no_ignore_eos,
        temperature=temperature,
        extra_body=_extra_body(extra_body),
    )
    client = _validated(
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
