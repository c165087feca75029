"""Every input of `inferbench bench`, and what it resolves to.

`BenchArgs` holds the values as given, under inferbench's names, whether they came from
flags (inferbench's, sa-bench's or vLLM's spellings), from `--config FILE` or from a
script; `resolve` turns them into the endpoint, workload, load points and options that
`run_bench` takes, plus where each point's result file goes. Values that inferbench cannot
honour are refused here with the flag's name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated

from pydantic import Field

from inferbench.bench.api import BenchOptions
from inferbench.bench.arguments import (
    CLIENT_OPTION_NAMES,
    build_workload,
    load_points,
    parse_extra_body,
    parse_preset,
    parse_slo,
    validated,
)
from inferbench.bench.datasets import template_overhead
from inferbench.bench.dialect import (
    api_of,
    check_tokenizer_mode,
    hf_hub_cache,
    parse_goodput,
    parse_metadata,
    parse_percentile_metrics,
    parse_percentiles,
    prompt_template,
    refuse,
    resolve_tokenizer,
    sa_bench_filename,
)
from inferbench.bench.metrics import Slo
from inferbench.bench.naming import check_point_output, result_path
from inferbench.bench.preset import SA_BENCH
from inferbench.bench.result import SaBenchFields
from inferbench.bench.schedule import LoadPoint
from inferbench.bench.settings import (
    ApiKind,
    ClientOptions,
    Endpoint,
    RequestOptions,
    require_api_key,
)
from inferbench.bench.workload import (
    PromptTemplate,
    RandomWorkload,
    SharedPrefixWorkload,
    Workload,
)
from inferbench.core.errors import InputError, Location
from inferbench.core.flags import Flag
from inferbench.core.limits import MAX_PROMPTS, MAX_SEED, MAX_TOKENS, MAX_WORKERS
from inferbench.core.model import FrozenModel
from inferbench.core.printable import printable

SA_BENCH_RANDOM_LENGTHS = (1024, 128)  # sa-bench's --random-input-len / --random-output-len


class BenchArgs(FrozenModel):
    """The inputs of one `inferbench bench` call, as given (None: not given).

    The one list of `bench`'s options: each field's description is its `--help`, its `Flag`
    the spellings (inferbench's first, then sa-bench's and vLLM's), its bounds the range the
    command line checks (`inferbench.cli.options` makes the options from these fields).
    """

    base_url: str | None = Field(None, description="Server root, e.g. http://127.0.0.1:8000")
    host: str | None = Field(None, description="with --port, instead of --base-url")
    port: int | None = Field(None, description="with --host, instead of --base-url")
    model: str = Field(description="Model name (in results and requests)")
    served_model_name: str | None = Field(
        None, description="Model name the API serves, when not --model"
    )
    isl: Annotated[int | None, Flag("--isl", "--random-input-len", "--input-len")] = Field(
        None, le=MAX_TOKENS, description=f"Input length (tokens, at most {MAX_TOKENS:,})"
    )
    osl: Annotated[int | None, Flag("--osl", "--random-output-len", "--output-len")] = Field(
        None, le=MAX_TOKENS, description=f"Output length (tokens, at most {MAX_TOKENS:,})"
    )
    concurrency: Annotated[str | None, Flag("--concurrency", "--max-concurrency")] = Field(
        None, description="4,8,16 or 4x8x16"
    )
    num_prompts: int | None = Field(
        None,
        le=MAX_PROMPTS,
        description=f"requests per point, at most {MAX_PROMPTS:,} (sa-bench preset: 10 x"
        " concurrency)",
    )
    request_rate: float | None = Field(
        None, description="req/s (open loop); inf = closed loop at --concurrency"
    )
    burstiness: float = Field(1.0, description="gamma shape; 1 = Poisson")
    warmups: Annotated[int | None, Flag("--warmups", "--num-warmups")] = Field(
        None, le=MAX_PROMPTS, description="unmeasured requests before each point"
    )
    duration: float | None = Field(None, description="seconds per point")
    endpoint: str | None = Field(
        None, description="completions | chat (or /v1/completions, /v1/chat/completions)"
    )
    backend: str | None = Field(
        None, description="sa-bench/vLLM backend: vllm, openai, sglang, openai-chat, ..."
    )
    api_key_env: str | None = Field(None, description="env var with the key")
    result_file: Annotated[Path | None, Flag("--output", "-o", writes="file")] = Field(
        None, description="result file; several points: out_conc4.json, ..."
    )
    result_dir: Annotated[Path | None, Flag("--output-dir", "--result-dir", writes="folder")] = (
        Field(
            None,
            description="folder of result files: conc4.json, ... (sa-bench: --result-dir, with"
            " --result-filename)",
        )
    )
    result_filename: str | None = Field(None, description="sa-bench: the file in --result-dir")
    save_result: bool = Field(
        False, description="sa-bench: write the result (sa-bench's name if none given)"
    )
    label: str | None = Field(None, description="vLLM: prefix of the default name")
    detail_file: Annotated[Path | None, Flag("--detail-file", writes="file")] = Field(
        None, description="per-request JSONL"
    )
    detail: Annotated[bool, Flag("--detail", "--save-detailed")] = Field(
        False, description="ttfts/itls/texts in the result file"
    )
    max_failure_rate: float = Field(
        SA_BENCH.max_failure_rate,
        description="a point with a larger share of failed requests fails (exit 1)",
    )
    request_timeout: float = Field(600.0, description="seconds")
    slo: str | None = Field(None, description="ttft=2000,tpot=50,e2el=60000 (ms)")
    goodput: tuple[str, ...] = Field((), description="vLLM: ttft:2000 tpot:50 (ms)")
    percentile_metrics: str | None = Field(None, description="ttft,tpot,itl,e2el")
    metric_percentiles: str | None = Field(
        None, description="extra p-keys, e.g. 50,90,99 (90,99,99.9 always)"
    )
    metadata: tuple[str, ...] = Field((), description="KEY=VALUE result fields")
    preset: str | None = Field(None, description="sa-bench")
    tokenizer: str | None = Field(
        None, description="tokenizer.json, its folder, or a model id in the HF cache"
    )
    tokenizer_mode: str | None = Field(
        None, description="auto | deepseek_v4 (its template is the --dsv4 one)"
    )
    trust_remote_code: bool = Field(False, description="accepted; inferbench never runs model code")
    dataset: Annotated[Path | None, Flag("--dataset", "--dataset-path")] = Field(
        None, description="JSONL or ShareGPT file"
    )
    dataset_name: str | None = Field(None, description="random | sharegpt | custom")
    dataset_format: str | None = Field(None, description="jsonl|sharegpt")
    range_ratio: Annotated[float | None, Flag("--range-ratio", "--random-range-ratio")] = Field(
        None, description="length spread, per --range-mode"
    )
    range_mode: str | None = Field(None, description="inferencex|vllm|sglang")
    prefix_groups: int | None = Field(
        None, le=MAX_PROMPTS, description="shared-prefix groups (requests cycle through them)"
    )
    prefix_len: int | None = Field(
        None, le=MAX_TOKENS, description="tokens of each group's shared prefix (--isl: the suffix)"
    )
    random_prefix_len: int | None = Field(
        None, le=MAX_TOKENS, description="one prefix shared by every prompt"
    )
    seed: int = Field(0, ge=0, le=MAX_SEED, description="seed of the prompts, lengths and arrivals")
    workers: int | None = Field(None, le=MAX_WORKERS, description="client processes (default auto)")
    ignore_eos: bool = Field(False, description="the default; sa-bench's flag")
    no_ignore_eos: bool = Field(False, description="let the server stop at end-of-sequence")
    temperature: float = Field(0.0, description="sampling temperature")
    logprobs: int | None = Field(None, description="log-probabilities per token (vLLM's flag)")
    http_client: str = Field("fast", description="fast|aiohttp")
    receive_stamps: str = Field(
        "kernel", description="kernel (arrival, SO_TIMESTAMPNS) | user (handled)"
    )
    extra_body: str | None = Field(
        None, description='JSON object merged into each request body, e.g. {"top_k": 1}'
    )
    repeats: int = Field(
        1,
        ge=1,
        description="measure each point N times (files conc8.json, conc8_r2.json, ...); "
        "`results compare` pools them",
    )
    random_num_workers: int | None = Field(
        None, description="accepted; prompts are generated per request"
    )
    use_chat_template: bool = Field(
        False,
        description="sa-bench: random text framed by the tokenizer's chat template (counted in"
        " --isl)",
    )
    dsv4: bool = Field(
        False, description="sa-bench: framed by DeepSeek-V4's encoder (implies the above)"
    )
    # vLLM's flags that inferbench refuses with a reason (`_refuse_unsupported`)
    profile: Annotated[bool, Flag(hidden=True)] = Field(False, description="vLLM's; refused")
    best_of: Annotated[int, Flag(hidden=True)] = Field(1, description="vLLM's; above 1 refused")
    use_beam_search: Annotated[bool, Flag(hidden=True)] = Field(
        False, description="vLLM's; refused"
    )
    lora_modules: Annotated[tuple[str, ...], Flag(hidden=True)] = Field(
        (), description="vLLM's; refused"
    )
    sharegpt_output_len: int | None = Field(
        None, le=MAX_TOKENS, description="ShareGPT: output length instead of the reply's"
    )


@dataclass(frozen=True)
class SaBenchName:
    """sa-bench's file name, when `--save-result` names no file (`--result-dir` or `.`)."""

    folder: Path
    label: str
    model: str
    date: str

    def for_point(self, point: LoadPoint) -> Path:
        return self.folder / sa_bench_filename(
            self.label, point.request_rate, point.concurrency, self.model, self.date
        )


@dataclass(frozen=True)
class BenchInvocation:
    """What a `BenchArgs` resolves to: `run_bench`'s inputs and where results go."""

    endpoint: Endpoint
    workload: Workload
    points: list[LoadPoint]
    options: BenchOptions
    result_file: Path | None
    result_dir: Path | None
    detail_file: Path | None
    sa_bench_name: SaBenchName | None  # `--save-result` with no file named
    repeats: int = 1  # measurements of each point

    @property
    def schedule(self) -> list[LoadPoint]:
        """The points in the order they are measured: each `repeats` times in a row."""
        return [point for point in self.points for _ in range(self.repeats)]

    def result_path(self, point: LoadPoint) -> Path | None:
        if self.sa_bench_name is not None:
            return self.sa_bench_name.for_point(point)
        return result_path(self.result_file, self.result_dir, point.label, len(self.points) > 1)

    def detail_path(self, point: LoadPoint) -> Path | None:
        return result_path(self.detail_file, None, point.label, len(self.points) > 1)


def _refuse_unsupported(args: BenchArgs) -> None:
    if args.profile:
        raise refuse(
            "--profile", "inferbench does not drive the server's profiler", "profile separately"
        )
    if args.best_of != 1 or args.use_beam_search:
        flag = "--use-beam-search" if args.use_beam_search else "--best-of"
        raise refuse(flag, "one sampled sequence per request is measured", "drop the flag")
    if args.lora_modules:
        raise refuse("--lora-modules", "one model per run", "run once per adapter with --model")
    if args.ignore_eos and args.no_ignore_eos:
        raise InputError(
            "--ignore-eos and --no-ignore-eos contradict each other",
            location=Location(key="--ignore-eos"),
        )


def _template_flag(args: BenchArgs) -> str:
    return "--dsv4" if args.dsv4 else "--use-chat-template"


def _tokenizer(
    args: BenchArgs, template: PromptTemplate | None, api: ApiKind, dataset: Path | None
) -> Path | None:
    """`--tokenizer`, else, where prompts must be text (a chat template, or random prompts
    for the chat endpoint), sa-bench's default: the tokenizer of `--model`."""
    if args.tokenizer is not None:
        return resolve_tokenizer(args.tokenizer)
    if template is not None:
        why = _template_flag(args)
    elif api is ApiKind.CHAT and dataset is None:
        why = "the chat endpoint"
    else:
        return None
    try:
        return resolve_tokenizer(args.model)
    except InputError:
        files = ["tokenizer.json"]
        if template is PromptTemplate.TOKENIZER:
            files.append("tokenizer_config.json")  # holds the chat template
        raise InputError(
            f"{why} sends text, which needs the model's tokenizer: no --tokenizer given, and "
            f"--model {args.model!r} is neither a local tokenizer folder nor in the Hugging "
            f"Face cache ({hf_hub_cache()})",
            location=Location(key="--tokenizer"),
            hint=f"pass --tokenizer DIR (a folder with {' and '.join(files)}), or download "
            f"first: huggingface-cli download {args.model} {' '.join(files)}",
        ) from None


def _check_template(args: BenchArgs, workload: Workload) -> None:
    """A template that cannot render, or leaves no room for the prompt, fails before the run."""
    if not isinstance(workload, RandomWorkload | SharedPrefixWorkload):
        return
    if workload.chat_template is None or workload.tokenizer is None:
        return
    overhead = template_overhead(workload.chat_template, workload.tokenizer)
    if workload.isl <= overhead:
        raise InputError(
            f"input length {workload.isl} leaves no room for the prompt: the chat template "
            f"alone is {overhead} tokens, and sa-bench counts them in the input length",
            location=Location(key="--isl"),
            hint=f"give --random-input-len above {overhead}",
        )


def _base_url(args: BenchArgs) -> str:
    if args.base_url is not None:
        if args.host is not None or args.port is not None:
            raise InputError(
                "give --base-url or --host/--port, not both", location=Location(key="--base-url")
            )
        return args.base_url
    if args.host is None and args.port is None:
        raise InputError(
            "give the server: --base-url URL (or --host and --port)",
            location=Location(key="--base-url"),
            hint="e.g. --base-url http://127.0.0.1:8000",
        )
    return f"http://{args.host or '127.0.0.1'}:{args.port or 8000}"


def _dataset(args: BenchArgs) -> tuple[Path | None, str, int | None, int | None]:
    """(file, format, isl, osl) from inferbench's or sa-bench's dataset flags."""
    name = args.dataset_name
    isl, osl = args.isl, args.osl
    if name is None or name == "random":
        if name == "random" and args.dataset is None:
            isl = isl if isl is not None else SA_BENCH_RANDOM_LENGTHS[0]
            osl = osl if osl is not None else SA_BENCH_RANDOM_LENGTHS[1]
        if name == "random" and args.dataset is not None:
            raise InputError(
                "--dataset-name random takes no --dataset-path",
                location=Location(key="--dataset-path"),
            )
        return args.dataset, args.dataset_format or "jsonl", isl, osl
    formats = {"sharegpt": "sharegpt", "custom": "jsonl", "jsonl": "jsonl"}
    if name not in formats:
        raise InputError(
            f"unknown dataset {name!r}",
            location=Location(key="--dataset-name"),
            hint="random, sharegpt, custom (JSONL with a prompt per line)",
        )
    if args.dataset is None:
        raise InputError(
            f"--dataset-name {name} needs --dataset-path FILE (a local file; nothing is "
            "downloaded)",
            location=Location(key="--dataset-path"),
        )
    if args.dataset_format is not None and args.dataset_format != formats[name]:
        raise InputError(
            f"--dataset-format {args.dataset_format} contradicts --dataset-name {name}",
            location=Location(key="--dataset-format"),
        )
    return args.dataset, formats[name], isl, args.sharegpt_output_len or osl


def _points(args: BenchArgs) -> list[LoadPoint]:
    rate = args.request_rate
    concurrency = args.concurrency
    if rate is not None and math.isinf(rate):
        # sa-bench's `--request-rate inf`: everything at t0 behind the concurrency cap, which
        # is a closed loop at that cap (or at the number of prompts when there is none).
        rate = None
        if concurrency is None:
            if args.num_prompts is None:
                raise InputError(
                    "--request-rate inf without --max-concurrency needs --num-prompts",
                    location=Location(key="--num-prompts"),
                )
            concurrency = str(args.num_prompts)
    return load_points(
        concurrency,
        rate,
        args.burstiness,
        args.num_prompts,
        args.warmups,
        args.duration,
        parse_preset(args.preset),
    )


def _slo(args: BenchArgs) -> Slo | None:
    slo, goodput = parse_slo(args.slo), parse_goodput(list(args.goodput))
    if slo is not None and goodput is not None:
        raise InputError(
            "give --slo or --goodput, not both (they are one setting)",
            location=Location(key="--goodput"),
        )
    return slo or goodput


def _plain_name(option: str, name: str | None) -> None:
    """A name that becomes a file in --result-dir stays there: no folders, no `..`."""
    if name is None:
        return
    if name in ("", ".", "..") or "/" in name or "\0" in name:
        raise InputError(
            f"{option} {name!r} is not a plain file name",
            hint="give a name without / or .. (the folder is --result-dir)",
        )
    if printable(name) != name:  # a line break, ESC or bidi override in a file name
        raise InputError(
            f"{option} {printable(name)} holds a control, zero-width or bidi character",
            hint="give a name of printable characters",
        )


def _outputs(args: BenchArgs) -> tuple[Path | None, Path | None, SaBenchName | None]:
    """(result file, result dir, sa-bench's own naming) from either spelling."""
    if args.result_file is not None and (args.result_filename or args.result_dir):
        raise InputError(
            "--output names the file; --output-dir/--result-filename is the other way",
            location=Location(key="--output"),
            hint="use one of the two spellings",
        )
    _plain_name("--result-filename", args.result_filename)
    _plain_name("--label", args.label)
    if args.result_filename is not None:
        return (args.result_dir or Path(".")) / args.result_filename, None, None
    if args.save_result and args.result_file is None:
        # sa-bench's own name, in --result-dir or the working directory
        date = datetime.now().strftime("%Y%m%d-%H%M%S")
        label = args.label or args.backend or "openai"
        return None, None, SaBenchName(args.result_dir or Path("."), label, args.model, date)
    return args.result_file, args.result_dir, None


def resolve(args: BenchArgs) -> BenchInvocation:
    """The objects `run_bench` takes, or an InputError naming the flag to fix."""
    _refuse_unsupported(args)
    check_tokenizer_mode(args.tokenizer_mode)
    template = prompt_template(args.use_chat_template, args.dsv4, args.tokenizer_mode)
    require_api_key(args.api_key_env)
    endpoint = validated(
        Endpoint,
        "--base-url",
        base_url=_base_url(args),
        model=args.served_model_name or args.model,
        api=api_of(args.backend, args.endpoint),
        api_key_env=args.api_key_env,
    )
    dataset, dataset_format, isl, osl = _dataset(args)
    if template is not None and dataset is not None:
        raise refuse(
            _template_flag(args),
            "sa-bench frames random prompts only",
            "use --endpoint chat to have the server template a dataset's prompts",
        )
    prefix_groups, prefix_len = args.prefix_groups, args.prefix_len
    if args.random_prefix_len:
        if prefix_groups is not None or prefix_len is not None:
            raise InputError(
                "--random-prefix-len is one shared prefix; --prefix-groups/--prefix-len too",
                location=Location(key="--random-prefix-len"),
                hint="use one of the two spellings",
            )
        prefix_groups, prefix_len = 1, args.random_prefix_len
    range_mode = args.range_mode
    if args.range_ratio is not None and range_mode is None and args.dataset_name is not None:
        range_mode = "inferencex"  # sa-bench's --random-range-ratio: U[floor(L r), L]
    workload = build_workload(
        isl,
        osl,
        dataset,
        dataset_format,
        _tokenizer(args, template, endpoint.api, dataset),
        args.range_ratio,
        range_mode,
        parse_preset(args.preset),
        prefix_groups,
        prefix_len,
        template,
    )
    _check_template(args, workload)
    extra = parse_extra_body(args.extra_body)
    if args.logprobs is not None:
        extra = {"logprobs": args.logprobs, **extra}
    request = validated(
        RequestOptions,
        {"": "--temperature", "extra_body": "--extra-body", "ignore_eos": "--no-ignore-eos"},
        ignore_eos=not args.no_ignore_eos,
        temperature=args.temperature,
        extra_body=extra,
    )
    client = validated(
        ClientOptions,
        CLIENT_OPTION_NAMES,
        request_timeout_s=args.request_timeout,
        workers=args.workers,
        max_failure_rate=args.max_failure_rate,
        detail=args.detail,
        seed=args.seed,
        http_client=args.http_client,
        receive_stamps=args.receive_stamps,
    )
    options = BenchOptions(
        request=request,
        client=client,
        slo=_slo(args),
        backend=args.backend or "openai",
        model_id=args.model,
        percentile_metrics=parse_percentile_metrics(
            args.percentile_metrics or "ttft,tpot,itl,e2el"
        ),
        percentiles=parse_percentiles(args.metric_percentiles or "90,99,99.9"),
        metadata=parse_metadata(list(args.metadata), SaBenchFields.field_keys()),
    )
    result_file, result_dir, sa_bench_name = _outputs(args)
    points = _points(args)
    named = "--result-filename" if args.result_filename is not None else "--output"
    files = len(points) * args.repeats  # each repeat is a file of its own
    check_point_output(result_file, named, files)
    check_point_output(args.detail_file, "--detail-file", files)
    return BenchInvocation(
        endpoint=endpoint,
        workload=workload,
        points=points,
        options=options,
        result_file=result_file,
        result_dir=result_dir,
        detail_file=args.detail_file,
        sa_bench_name=sa_bench_name,
        repeats=args.repeats,
    )
