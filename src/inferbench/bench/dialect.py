"""sa-bench's and `vllm bench serve`'s spellings, mapped onto inferbench's own.

InferenceX's launchers call sa-bench (`utils/bench_serving/benchmark_serving.py`) with
`--backend vllm --base-url ... --dataset-name random --random-input-len ... --max-concurrency
... --request-rate inf --ignore-eos --save-result --num-warmups ... --percentile-metrics ...
--result-dir ... --result-filename ...`, and vLLM users type the same family of names. Each
function here reads one of those values and gives the inferbench object it means, or an
`InputError` when inferbench cannot honour it: nothing is silently ignored.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from inferbench.bench.metrics import PERCENTILE_METRICS, Slo
from inferbench.bench.settings import ApiKind
from inferbench.bench.workload import PromptTemplate
from inferbench.core.errors import InputError, Location

# sa-bench's and vLLM's backends that speak the OpenAI-compatible streaming API.
COMPLETIONS_BACKENDS = frozenset({"vllm", "openai", "sglang", "lmdeploy", "scalellm"})
CHAT_BACKENDS = frozenset({"openai-chat"})
# Backends with their own wire formats (TGI's generate_stream, Triton's generate_stream,
# DeepSpeed-MII): inferbench measures OpenAI-compatible servers only.
FOREIGN_BACKENDS = frozenset({"tgi", "tensorrt-llm", "deepspeed-mii"})

_ENDPOINTS = {
    "completions": ApiKind.COMPLETIONS,
    "/v1/completions": ApiKind.COMPLETIONS,
    "chat": ApiKind.CHAT,
    "/v1/chat/completions": ApiKind.CHAT,
}
_GOODPUT = re.compile(r"^(?P<name>[a-z0-9_]+):(?P<value>.+)$")


def api_of(backend: str | None, endpoint: str | None) -> ApiKind:
    """The API a `--backend` / `--endpoint` pair names; a conflict or an unknown value fails."""
    by_endpoint: ApiKind | None = None
    if endpoint is not None:
        if endpoint not in _ENDPOINTS:
            raise InputError(
                f"unknown endpoint {endpoint!r}",
                location=Location(key="--endpoint"),
                hint="completions | chat (or sa-bench's /v1/completions | /v1/chat/completions)",
            )
        by_endpoint = _ENDPOINTS[endpoint]
    by_backend: ApiKind | None = None
    if backend is not None:
        if backend in CHAT_BACKENDS:
            by_backend = ApiKind.CHAT
        elif backend in COMPLETIONS_BACKENDS:
            by_backend = None if by_endpoint else ApiKind.COMPLETIONS
        elif backend in FOREIGN_BACKENDS:
            raise InputError(
                f"--backend {backend} uses its own wire format, not the OpenAI-compatible API",
                location=Location(key="--backend"),
                hint="serve the model with an OpenAI-compatible server (trtllm-serve, vLLM, "
                "SGLang) and use --backend openai",
            )
        else:
            names = sorted(COMPLETIONS_BACKENDS | CHAT_BACKENDS)
            raise InputError(
                f"unknown backend {backend!r}",
                location=Location(key="--backend"),
                hint=", ".join(names),
            )
    if by_backend is ApiKind.CHAT and by_endpoint is ApiKind.COMPLETIONS:
        raise InputError(
            "--backend openai-chat needs the chat endpoint",
            location=Location(key="--endpoint"),
            hint="use --endpoint /v1/chat/completions, or --backend openai",
        )
    return by_endpoint or by_backend or ApiKind.COMPLETIONS


def parse_goodput(items: list[str]) -> Slo | None:
    """vLLM's `--goodput ttft:2000 tpot:50` (milliseconds) -> Slo."""
    if not items:
        return None
    values: dict[str, float] = {}
    for item in items:
        match = _GOODPUT.match(item.strip())
        name = match["name"] if match else item
        if match is None or name not in ("ttft", "tpot", "e2el"):
            raise InputError(
                f"invalid goodput objective {item!r}",
                location=Location(key="--goodput"),
                hint="KEY:VALUE pairs in milliseconds with KEY ttft, tpot or e2el, "
                "e.g. --goodput ttft:2000 tpot:50",
            )
        try:
            value = float(match["value"])
        except ValueError:
            raise InputError(
                f"goodput {name} needs a number of milliseconds, not {match['value']!r}",
                location=Location(key="--goodput"),
            ) from None
        if value < 0:
            raise InputError(
                f"goodput {name} must not be negative", location=Location(key="--goodput")
            )
        values[f"{name}_ms"] = value
    return Slo(**values)


def assign_extra_pairs(
    extra: list[str], goodput: list[str], metadata: list[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """argparse's `--goodput ttft:1 tpot:2` leaves `tpot:2` to the command as an extra
    argument; give each to the option its separator names (`=` metadata, `:` goodput)."""
    goodput, metadata = list(goodput), list(metadata)
    for arg in extra:
        if "=" in arg and metadata:
            metadata.append(arg)
        elif ":" in arg and goodput:
            goodput.append(arg)
        else:
            raise InputError(
                f"unexpected argument {arg!r}",
                location=Location(key=arg),
                hint="options start with --; see `inferbench bench --help`",
            )
    return tuple(goodput), tuple(metadata)


def parse_metadata(items: list[str], reserved: frozenset[str]) -> dict[str, str]:
    """`--metadata version=0.3.3 tp=1` -> top-level result keys; result fields are refused."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError(
                f"invalid metadata {item!r}",
                location=Location(key="--metadata"),
                hint="KEY=VALUE pairs, e.g. --metadata version=0.3.3 tp=1",
            )
        if key in reserved or key == "inferbench":
            raise InputError(
                f"metadata key {key!r} is a result field",
                location=Location(key="--metadata"),
                hint="choose another name; result fields are never overwritten",
            )
        out[key] = value.strip()
    return out


def parse_percentile_metrics(text: str) -> tuple[str, ...]:
    """`ttft,tpot,itl,e2el` (sa-bench's names) -> the metrics to report percentiles of."""
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in PERCENTILE_METRICS]
    if unknown or not names:
        raise InputError(
            f"unknown percentile metric {', '.join(unknown) or text!r}",
            location=Location(key="--percentile-metrics"),
            hint="a comma-separated subset of " + ",".join(PERCENTILE_METRICS),
        )
    return names


def parse_percentiles(text: str) -> tuple[float, ...]:
    """`90,99,99.9` -> percentiles in (0, 100]."""
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        values = ()
    if not values or any(not 0 < v <= 100 for v in values):
        raise InputError(
            f"invalid percentiles {text!r}",
            location=Location(key="--metric-percentiles"),
            hint="comma-separated numbers in (0, 100], e.g. 50,90,99,99.9",
        )
    return values


def hf_hub_cache() -> Path:
    """Hugging Face's local cache, as `huggingface_hub` resolves it (never downloaded to)."""
    if cache := os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE"):
        return Path(cache)
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface"
    )
    return Path(home) / "hub"


def resolve_tokenizer(name: str | None) -> Path | None:
    """`--tokenizer`: a tokenizer.json, a folder holding one, or a Hugging Face model id
    found in the local cache; inferbench never downloads one."""
    if name is None:
        return None
    path = Path(name).expanduser()
    if path.is_file():
        return path
    if path.is_dir():
        if (path / "tokenizer.json").is_file():
            return path / "tokenizer.json"
        raise InputError(
            f"no tokenizer.json in {path}",
            location=Location(key="--tokenizer"),
            hint="inferbench reads fast tokenizers (tokenizer.json); convert a slow one with "
            "transformers' AutoTokenizer(...).save_pretrained(DIR)",
        )
    repo = hf_hub_cache() / f"models--{name.replace('/', '--')}"
    ref = repo / "refs" / "main"
    snapshots = [repo / "snapshots" / ref.read_text().strip()] if ref.is_file() else []
    snapshots += sorted((repo / "snapshots").glob("*")) if (repo / "snapshots").is_dir() else []
    for snapshot in snapshots:
        if (snapshot / "tokenizer.json").is_file():
            return snapshot / "tokenizer.json"
    raise InputError(
        f"tokenizer {name!r} is neither a local path nor in the Hugging Face cache "
        f"({hf_hub_cache()})",
        location=Location(key="--tokenizer"),
        hint=f"download it first (huggingface-cli download {name} tokenizer.json) or pass "
        "a local tokenizer.json; without --tokenizer prompts are exact token ids",
    )


def check_tokenizer_mode(mode: str | None) -> None:
    """sa-bench's `--tokenizer-mode`: only the fast (tokenizer.json) path exists here;
    `deepseek_v4` reads DeepSeek-V4's tokenizer.json like any other (see `prompt_template`)."""
    if mode in (None, "auto", "hf", "deepseek_v4"):
        return
    raise InputError(
        f"--tokenizer-mode {mode} is not available",
        location=Location(key="--tokenizer-mode"),
        hint="inferbench uses the fast tokenizer (tokenizer.json): --tokenizer-mode auto "
        "(or deepseek_v4)",
    )


def prompt_template(
    use_chat_template: bool, dsv4: bool, tokenizer_mode: str | None
) -> PromptTemplate | None:
    """How sa-bench frames random prompts. `--dsv4` implies `--use-chat-template` (InferenceX's
    `run_benchmark_serving` always passes both). With `--tokenizer-mode deepseek_v4` sa-bench
    loads vLLM's DeepSeek-V4 tokenizer, whose chat template is the same DeepSeek-V4 encoder,
    in thinking mode unless asked otherwise, so `--use-chat-template` then frames as --dsv4."""
    if dsv4 or (use_chat_template and tokenizer_mode == "deepseek_v4"):
        return PromptTemplate.DEEPSEEK_V4
    return PromptTemplate.TOKENIZER if use_chat_template else None


def sa_bench_filename(
    label: str, request_rate: float | None, concurrency: int | None, model: str, date: str
) -> str:
    """sa-bench's and vLLM's default name when `--save-result` names no file:
    `<label>-<rate>qps[-concurrency<C>]-<model>-<date>.json` (label: `--label` or backend)."""
    rate = "inf" if request_rate is None else f"{request_rate}"
    conc = f"-concurrency{concurrency}" if concurrency is not None else ""
    return f"{label}-{rate}qps{conc}-{model.split('/')[-1]}-{date}.json"


def refuse(flag: str, why: str, hint: str) -> InputError:
    """An sa-bench / vLLM flag that inferbench cannot honour."""
    return InputError(f"{flag} is not supported: {why}", location=Location(key=flag), hint=hint)
