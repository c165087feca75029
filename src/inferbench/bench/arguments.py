"""From command-line values to the typed objects `run_bench` takes.

`inferbench bench` and anything else that accepts the same spellings (a config's
`--concurrency 4x8x16`, `--slo ttft=2000,tpot=50`, `--preset sa-bench`) go through
these functions, so a bad value gets the same message, key and hint everywhere.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

import orjson

from inferbench.bench.metrics import Slo
from inferbench.bench.preset import SA_BENCH, Preset
from inferbench.bench.schedule import LoadPoint, parse_concurrency_list
from inferbench.bench.workload import (
    FileWorkload,
    PromptTemplate,
    RandomWorkload,
    RangeMode,
    SharedPrefixWorkload,
    Workload,
)
from inferbench.core.errors import InputError, Location
from inferbench.core.hints import validated


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
                f"unknown SLO {name!r}",
                location=Location(key="--slo"),
                hint="name ttft, tpot or e2el, e.g. --slo ttft=2000,tpot=50",
            )
        try:
            values[f"{name}_ms"] = float(value.strip().removesuffix("ms"))
        except ValueError:
            raise InputError(
                f"SLO {name} needs a number of milliseconds, got {value.strip()!r}",
                location=Location(key="--slo"),
                hint=f"write {name}=<ms>, e.g. --slo ttft=2000,tpot=50",
            ) from None
    return validated(Slo, "--slo", **values)


# ClientOptions' fields -> the option that sets each (a bad --workers is not blamed on
# --max-failure-rate)
CLIENT_OPTION_NAMES = {
    "": "--max-failure-rate",
    "request_timeout_s": "--request-timeout",
    "workers": "--workers",
    "max_failure_rate": "--max-failure-rate",
    "detail": "--detail",
    "seed": "--seed",
    "http_client": "--http-client",
    "receive_stamps": "--receive-stamps",
}


def parse_extra_body(text: str | None) -> dict[str, Any]:
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


E = TypeVar("E", bound=StrEnum)


def _choice(kind: type[E], text: str | None, key: str, what: str) -> E | None:
    if text is None:
        return None
    names = [member.value for member in kind]
    if text not in names:
        raise InputError(
            f"unknown {what} {text!r}", location=Location(key=key), hint=", ".join(names)
        )
    return kind(text)


def parse_preset(text: str | None) -> Preset | None:
    return _choice(Preset, text, "--preset", "preset")


def parse_range_mode(text: str | None) -> RangeMode | None:
    return _choice(RangeMode, text, "--range-mode", "range mode")


# The option that sets each LoadPoint field ("": the point as a whole).
_LOAD_OPTIONS = {
    "": "--concurrency",
    "concurrency": "--concurrency",
    "request_rate": "--request-rate",
    "burstiness": "--burstiness",
    "num_prompts": "--num-prompts",
    "duration_s": "--duration",
    "warmups": "--warmups",
}


def load_points(
    concurrency: str | None,
    request_rate: float | None,
    burstiness: float,
    num_prompts: int | None,
    warmups: int | None,
    duration: float | None,
    preset: Preset | None,
) -> list[LoadPoint]:
    concs: list[int | None] = list(parse_concurrency_list(concurrency)) if concurrency else [None]
    if concs == [None] and request_rate is None:
        # a wrong value given is the mistake to name first, then the missing load
        validated(
            LoadPoint,
            _LOAD_OPTIONS,
            concurrency=1,
            burstiness=burstiness,
            num_prompts=1 if num_prompts is None else num_prompts,
            duration_s=duration,
            warmups=warmups or 0,
        )
        raise InputError(
            "give --concurrency, --request-rate, or both",
            location=Location(key="--concurrency"),
            hint="e.g. --concurrency 4,8,16 (a closed loop) or --request-rate 10 (req/s)",
        )
    points = []
    for conc in concs:
        base = conc or 1
        prompts = num_prompts
        if prompts is None and preset is Preset.SA_BENCH:
            prompts = SA_BENCH.num_prompts(base)
        if prompts is None:
            prompts = 1000 if duration is not None else None  # a bad one: its own error
        if prompts is None:
            raise InputError(
                "give --num-prompts (or --duration, or --preset sa-bench)",
                location=Location(key="--num-prompts"),
                hint="e.g. --num-prompts 1000 (requests per point)",
            )
        sa_warm = SA_BENCH.num_warmups(base) if preset is Preset.SA_BENCH else 0
        warm = warmups if warmups is not None else sa_warm
        point = validated(
            LoadPoint,
            _LOAD_OPTIONS,
            concurrency=conc,
            request_rate=request_rate,
            burstiness=burstiness,
            num_prompts=prompts,
            duration_s=duration,
            warmups=warm,
        )
        points.append(point)
    return points


def build_workload(
    isl: int | None,
    osl: int | None,
    dataset: Path | None,
    dataset_format: str,
    tokenizer: Path | None,
    range_ratio: float | None,
    range_mode: str | None,
    preset: Preset | None,
    prefix_groups: int | None = None,
    prefix_len: int | None = None,
    chat_template: PromptTemplate | None = None,
) -> Workload:
    """The workload the arguments name; the sa-bench preset sets range ratio 0.8."""
    named_mode = parse_range_mode(range_mode)  # a typo fails even where it has no effect
    if dataset is not None:
        return validated(
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
        if range_ratio is not None and range_mode is None and preset is not Preset.SA_BENCH:
            raise InputError(
                "--range-ratio means different things to different tools",
                location=Location(key="--range-mode"),
                hint="name the convention: --range-mode inferencex|vllm|sglang",
            )
        sa_ratio = SA_BENCH.range_ratio if preset is Preset.SA_BENCH else 1.0
        ratio = range_ratio if range_ratio is not None else sa_ratio
        mode = named_mode or RangeMode.INFERENCEX
    if (prefix_groups is None) != (prefix_len is None):
        raise InputError(
            "a shared prefix needs both --prefix-groups and --prefix-len",
            location=Location(key="--prefix-groups" if prefix_groups is None else "--prefix-len"),
            hint="e.g. --prefix-groups 4 --prefix-len 1024 (then --isl is each request's suffix)",
        )
    if prefix_groups is not None:
        return validated(
            SharedPrefixWorkload,
            "--prefix-groups",
            groups=prefix_groups,
            prefix_len=prefix_len,
            isl=isl,
            osl=osl,
            range_ratio=ratio,
            range_mode=mode,
            tokenizer=tokenizer,
            chat_template=chat_template,
        )
    return validated(
        RandomWorkload,
        "--isl",
        isl=isl,
        osl=osl,
        range_ratio=ratio,
        range_mode=mode,
        tokenizer=tokenizer,
        chat_template=chat_template,
    )
