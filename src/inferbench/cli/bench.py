"""`inferbench bench`: measure an OpenAI-compatible server (parse, call the library, render)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from inferbench.bench.api import BenchRun, PointMeasurement, run_bench
from inferbench.bench.config_file import load_bench_config
from inferbench.bench.dialect import assign_extra_pairs
from inferbench.bench.invocation import BenchArgs, resolve
from inferbench.bench.naming import check_point_output, repeat_path
from inferbench.bench.points_json import PointDocument, points_document
from inferbench.bench.preset import SA_BENCH
from inferbench.bench.result import write_detail_jsonl, write_point_result
from inferbench.bench.schedule import LoadPoint
from inferbench.cli.fit import Col, print_table
from inferbench.cli.outputs import output_file, output_folder
from inferbench.cli.progress import counted
from inferbench.cli.vocabulary import vocabulary
from inferbench.core.errors import InputError, Location
from inferbench.core.limits import MAX_PROMPTS, MAX_TOKENS, MAX_WORKERS

# At 80 columns: the point, its counts, throughput and latency medians; the in-flight
# counts, the ITL tail and the request rate go first. No number is broken across lines.
_SUMMARY_COLUMNS = (
    Col("point"),
    Col("ok", justify="right"),
    Col("failed", wrap=True),
    Col("req/s", 3, justify="right"),
    Col("out tok/s", justify="right"),
    Col("TTFT p50/p99 ms", justify="right"),
    Col("TPOT p50 ms", justify="right"),
    Col("ITL p99 ms", 2, justify="right"),
    Col("in flight max/mean", 1, justify="right"),
)


def _summary(console: Console, run: BenchRun) -> None:
    rows = []
    for p in run.points:
        sa, ib = p.result.sa, p.result.inferbench
        failed = ", ".join(f"{k} {v}" for k, v in ib.failures.items() if v) or "0"
        rows.append(
            [
                ib.load.label + ("" if ib.complete else " (incomplete)"),
                str(sa.completed),
                failed,
                f"{sa.request_throughput:.2f}",
                f"{sa.output_throughput:.1f}",
                f"{sa.median_ttft_ms:.1f}/{sa.p99_ttft_ms:.1f}",
                f"{sa.median_tpot_ms:.2f}",
                f"{sa.p99_itl_ms:.2f}",
                f"{ib.in_flight.max}/{ib.in_flight.time_weighted_mean:.1f}",
            ]
        )
    print_table(console, _SUMMARY_COLUMNS, rows, title="inferbench bench", wider="--output-dir")
    for p in run.points:
        for example in p.result.inferbench.failure_examples:
            console.print(f"  [yellow]{p.result.inferbench.load.label}[/] {escape(str(example))}")


# Options that take several values after one flag in sa-bench / vLLM (argparse nargs),
# with the separator of each pair.
_MULTI = {"goodput": ":", "metadata": "="}


def register(app: typer.Typer) -> None:
    app.command(
        "bench",
        context_settings={"allow_extra_args": True, "allow_interspersed_args": True},
    )(bench)


def _spellings(ctx: typer.Context) -> dict[str, str]:
    """Every option name of the command, without dashes, -> its parameter."""
    out: dict[str, str] = {}
    for param in ctx.command.params:
        # typer may bring its own copy of click: tell options by their kind, not their class
        if param.param_type_name != "option" or param.name in (None, "config"):
            continue
        for opt in (*param.opts, *param.secondary_opts):
            out[opt.lstrip("-")] = param.name
        out[param.name] = param.name
    # a config file written before a rename keeps working (result-file: is output:)
    for old in vocabulary().deprecated_in("bench").values():
        new = out.get(old.becomes[0].lstrip("-"))
        if new is not None and len(old.becomes) == 1:
            out.setdefault(old.spelling.lstrip("-"), new)
    return out


def _load_config(
    ctx: typer.Context, _param: typer.CallbackParam, value: Path | None
) -> Path | None:
    # Eager, so the file's values become the defaults before any other option is read.
    if value is not None:
        ctx.default_map = {
            **(ctx.default_map or {}),
            **load_bench_config(value, _spellings(ctx), _MULTI),
        }
    return value


def bench(
    ctx: typer.Context,
    config: Path | None = typer.Option(
        None,
        "--config",
        callback=_load_config,
        is_eager=True,
        help="YAML file of options (flags on the command line win)",
    ),
    base_url: str | None = typer.Option(
        None, "--base-url", help="Server root, e.g. http://127.0.0.1:8000"
    ),
    host: str | None = typer.Option(None, "--host", help="with --port, instead of --base-url"),
    port: int | None = typer.Option(None, "--port", help="with --host, instead of --base-url"),
    model: str = typer.Option(..., "--model", help="Model name (in results and requests)"),
    served_model_name: str | None = typer.Option(
        None, "--served-model-name", help="Model name the API serves, when not --model"
    ),
    isl: int | None = typer.Option(
        None,
        "--isl",
        "--random-input-len",
        "--input-len",
        max=MAX_TOKENS,
        help=f"Input length (tokens, at most {MAX_TOKENS:,})",
    ),
    osl: int | None = typer.Option(
        None,
        "--osl",
        "--random-output-len",
        "--output-len",
        max=MAX_TOKENS,
        help=f"Output length (tokens, at most {MAX_TOKENS:,})",
    ),
    concurrency: str | None = typer.Option(
        None, "--concurrency", "--max-concurrency", help="4,8,16 or 4x8x16"
    ),
    num_prompts: int | None = typer.Option(
        None,
        "--num-prompts",
        max=MAX_PROMPTS,
        help=f"requests per point, at most {MAX_PROMPTS:,} (sa-bench preset: 10 x concurrency)",
    ),
    request_rate: float | None = typer.Option(
        None, "--request-rate", help="req/s (open loop); inf = closed loop at --concurrency"
    ),
    burstiness: float = typer.Option(1.0, "--burstiness", help="gamma shape; 1 = Poisson"),
    warmups: int | None = typer.Option(
        None,
        "--warmups",
        "--num-warmups",
        max=MAX_PROMPTS,
        help="unmeasured requests before each point",
    ),
    duration: float | None = typer.Option(None, "--duration", help="seconds per point"),
    endpoint: str | None = typer.Option(
        None, "--endpoint", help="completions | chat (or /v1/completions, /v1/chat/completions)"
    ),
    backend: str | None = typer.Option(
        None, "--backend", help="sa-bench/vLLM backend: vllm, openai, sglang, openai-chat, ..."
    ),
    api_key_env: str | None = typer.Option(None, "--api-key-env", help="env var with the key"),
    result_file: Path | None = typer.Option(
        None,
        "--output",
        "-o",
        parser=output_file("--output"),
        help="result file; several points: out_conc4.json, ...",
    ),
    result_dir: Path | None = typer.Option(
        None,
        "--output-dir",
        "--result-dir",
        parser=output_folder("--output-dir"),
        help="folder of result files: conc4.json, ... (sa-bench: --result-dir, with"
        " --result-filename)",
    ),
    result_filename: str | None = typer.Option(
        None, "--result-filename", help="sa-bench: the file in --result-dir"
    ),
    save_result: bool = typer.Option(
        False, "--save-result", help="sa-bench: write the result (sa-bench's name if none given)"
    ),
    label: str | None = typer.Option(None, "--label", help="vLLM: prefix of the default name"),
    detail_file: Path | None = typer.Option(
        None, "--detail-file", parser=output_file("--detail-file"), help="per-request JSONL"
    ),
    detail: bool = typer.Option(
        False, "--detail", "--save-detailed", help="ttfts/itls/texts in the result file"
    ),
    max_failure_rate: float = typer.Option(
        SA_BENCH.max_failure_rate,
        "--max-failure-rate",
        help="a point with a larger share of failed requests fails (exit 1)",
    ),
    request_timeout: float = typer.Option(600.0, "--request-timeout", help="seconds"),
    slo: str | None = typer.Option(None, "--slo", help="ttft=2000,tpot=50,e2el=60000 (ms)"),
    goodput: list[str] = typer.Option([], "--goodput", help="vLLM: ttft:2000 tpot:50 (ms)"),
    percentile_metrics: str | None = typer.Option(
        None, "--percentile-metrics", help="ttft,tpot,itl,e2el"
    ),
    metric_percentiles: str | None = typer.Option(
        None, "--metric-percentiles", help="extra p-keys, e.g. 50,90,99 (90,99,99.9 always)"
    ),
    metadata: list[str] = typer.Option([], "--metadata", help="KEY=VALUE result fields"),
    preset: str | None = typer.Option(None, "--preset", help="sa-bench"),
    tokenizer: str | None = typer.Option(
        None, "--tokenizer", help="tokenizer.json, its folder, or a model id in the HF cache"
    ),
    tokenizer_mode: str | None = typer.Option(
        None, "--tokenizer-mode", help="auto | deepseek_v4 (its template is the --dsv4 one)"
    ),
    trust_remote_code: bool = typer.Option(
        False, "--trust-remote-code", help="accepted; inferbench never runs model code"
    ),
    dataset: Path | None = typer.Option(
        None, "--dataset", "--dataset-path", help="JSONL or ShareGPT file"
    ),
    dataset_name: str | None = typer.Option(
        None, "--dataset-name", help="random | sharegpt | custom"
    ),
    dataset_format: str | None = typer.Option(None, "--dataset-format", help="jsonl|sharegpt"),
    range_ratio: float | None = typer.Option(
        None, "--range-ratio", "--random-range-ratio", help="length spread, per --range-mode"
    ),
    range_mode: str | None = typer.Option(None, "--range-mode", help="inferencex|vllm|sglang"),
    prefix_groups: int | None = typer.Option(
        None,
        "--prefix-groups",
        max=MAX_PROMPTS,
        help="shared-prefix groups (requests cycle through them)",
    ),
    prefix_len: int | None = typer.Option(
        None,
        "--prefix-len",
        max=MAX_TOKENS,
        help="tokens of each group's shared prefix (--isl: the suffix)",
    ),
    random_prefix_len: int | None = typer.Option(
        None, "--random-prefix-len", max=MAX_TOKENS, help="one prefix shared by every prompt"
    ),
    seed: int = typer.Option(0, "--seed", help="seed of the prompts, lengths and arrivals"),
    workers: int | None = typer.Option(
        None, "--workers", max=MAX_WORKERS, help="client processes (default auto)"
    ),
    ignore_eos: bool = typer.Option(False, "--ignore-eos", help="the default; sa-bench's flag"),
    no_ignore_eos: bool = typer.Option(
        False, "--no-ignore-eos", help="let the server stop at end-of-sequence"
    ),
    temperature: float = typer.Option(0.0, "--temperature", help="sampling temperature"),
    logprobs: int | None = typer.Option(
        None, "--logprobs", help="log-probabilities per token (vLLM's flag)"
    ),
    http_client: str = typer.Option("fast", "--http-client", help="fast|aiohttp"),
    receive_stamps: str = typer.Option(
        "kernel", "--receive-stamps", help="kernel (arrival, SO_TIMESTAMPNS) | user (handled)"
    ),
    extra_body: str | None = typer.Option(
        None, "--extra-body", help='JSON object merged into each request body, e.g. {"top_k": 1}'
    ),
    disable_tqdm: bool = typer.Option(
        False, "--disable-tqdm", help="no progress bar (a log still gets timestamped lines)"
    ),
    fmt: str = typer.Option(
        "table",
        "--format",
        help="table (on stderr), or json: one document on stdout with each point's result"
        " (docs/cli.md)",
    ),
    repeats: int = typer.Option(
        1,
        "--repeats",
        min=1,
        help="measure each point N times (files conc8.json, conc8_r2.json, ...); "
        "`results compare` pools them",
    ),
    random_num_workers: int | None = typer.Option(
        None, "--random-num-workers", help="accepted; prompts are generated per request"
    ),
    use_chat_template: bool = typer.Option(
        False,
        "--use-chat-template",
        help="sa-bench: random text framed by the tokenizer's chat template (counted in --isl)",
    ),
    dsv4: bool = typer.Option(
        False, "--dsv4", help="sa-bench: framed by DeepSeek-V4's encoder (implies the above)"
    ),
    profile: bool = typer.Option(False, "--profile", hidden=True, help="vLLM's; refused"),
    best_of: int = typer.Option(1, "--best-of", hidden=True, help="vLLM's; above 1 refused"),
    use_beam_search: bool = typer.Option(
        False, "--use-beam-search", hidden=True, help="vLLM's; refused"
    ),
    lora_modules: list[str] = typer.Option(
        [], "--lora-modules", hidden=True, help="vLLM's; refused"
    ),
    sharegpt_output_len: int | None = typer.Option(
        None,
        "--sharegpt-output-len",
        max=MAX_TOKENS,
        help="ShareGPT: output length instead of the reply's",
    ),
) -> None:
    """Stream requests at an OpenAI-compatible server and write one result file per point.

    Takes inferbench's flags and, unchanged, the command lines of InferenceX's sa-bench and
    `vllm bench serve` (docs/bench.md lists how each maps, and what is refused).
    """
    goodput_items, metadata_items = assign_extra_pairs(list(ctx.args), goodput, metadata)
    args = BenchArgs(
        base_url=base_url,
        host=host,
        port=port,
        model=model,
        served_model_name=served_model_name,
        isl=isl,
        osl=osl,
        concurrency=concurrency,
        num_prompts=num_prompts,
        request_rate=request_rate,
        burstiness=burstiness,
        warmups=warmups,
        duration=duration,
        endpoint=endpoint,
        backend=backend,
        api_key_env=api_key_env,
        result_file=result_file,
        result_dir=result_dir,
        result_filename=result_filename,
        save_result=save_result,
        label=label,
        detail_file=detail_file,
        detail=detail,
        max_failure_rate=max_failure_rate,
        request_timeout=request_timeout,
        slo=slo,
        goodput=goodput_items,
        percentile_metrics=percentile_metrics,
        metric_percentiles=metric_percentiles,
        metadata=metadata_items,
        preset=preset,
        tokenizer=tokenizer,
        tokenizer_mode=tokenizer_mode,
        trust_remote_code=trust_remote_code,
        dataset=dataset,
        dataset_name=dataset_name,
        dataset_format=dataset_format,
        range_ratio=range_ratio,
        range_mode=range_mode,
        prefix_groups=prefix_groups,
        prefix_len=prefix_len,
        random_prefix_len=random_prefix_len,
        seed=seed,
        workers=workers,
        ignore_eos=ignore_eos,
        no_ignore_eos=no_ignore_eos,
        temperature=temperature,
        logprobs=logprobs,
        http_client=http_client,
        receive_stamps=receive_stamps,
        extra_body=extra_body,
        use_chat_template=use_chat_template,
        dsv4=dsv4,
        profile=profile,
        best_of=best_of,
        use_beam_search=use_beam_search,
        lora_modules=tuple(lora_modules),
        sharegpt_output_len=sharegpt_output_len,
    )
    if fmt not in ("table", "json"):
        raise InputError(f"unknown --format {fmt!r}", hint="use table or json")
    as_json = fmt == "json"
    if as_json and result_file is not None and str(result_file) in ("-", "/dev/stdout"):
        raise InputError(
            "--format json and --output - both write to stdout",
            location=Location(key="--output"),
            hint="name a file for --output, or leave it out (the JSON holds each result)",
        )
    inv = resolve(args)
    if repeats > 1:  # each repeat is a file of its own: a stream cannot take them
        check_point_output(inv.result_file, "--output", len(inv.points) * repeats)
        check_point_output(inv.detail_file, "--detail-file", len(inv.points) * repeats)
    console = Console(stderr=True)

    done: dict[str, int] = {}  # repeats measured per point
    documents: list[PointDocument] = []

    def save(outcome: PointMeasurement) -> None:
        point = outcome.result.inferbench.load
        repeat = done[point.label] = done.get(point.label, 0) + 1
        path = inv.result_path(point)
        if path is not None:
            path = repeat_path(path, repeat)
            write_point_result(path, outcome.result)
            console.print(f"wrote {path}", markup=False)
        detail_path = inv.detail_path(point)
        if detail_path is not None:
            write_detail_jsonl(repeat_path(detail_path, repeat), outcome.run.records)
        if as_json:
            payload = outcome.result.to_json_bytes()
            documents.append(PointDocument(point.label, payload, file=path, repeat=repeat))

    with counted(console, disable=disable_tqdm) as update:

        def on_progress(point: LoadPoint, done: int, total: int) -> None:
            update(point.label, done, total)

        run = run_bench(
            inv.endpoint,
            inv.workload,
            [point for point in inv.points for _ in range(repeats)],
            inv.options,
            on_progress=on_progress,
            on_point=save,
        )
    _summary(console, run)
    if as_json:  # before the exit code: a failed point's figures are the evidence
        sys.stdout.buffer.write(points_document("bench", documents))
        sys.stdout.flush()
    if run.interrupted:
        console.print(
            "[red]interrupted[/]: finished requests were kept, the point is marked incomplete"
        )
        raise typer.Exit(130)
    if run.failures:
        for line in run.failures:
            console.print(f"[red]failed[/] {escape(str(line))}")
        raise typer.Exit(1)
