"""Where a replay's traces come from: a path, a cached Hugging Face dataset, or `synth`."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
from pydantic import ValidationError

from inferbench.bench.traces.context import ContextRule, apply_context_rule
from inferbench.bench.traces.jsonl import read_turn_lines
from inferbench.bench.traces.load import load_traces, resolve_hub_dataset
from inferbench.bench.traces.model import TraceSet
from inferbench.bench.traces.synth import SynthSpec, synth_rows
from inferbench.core.errors import InputError, Location


def hub_cache() -> Path:
    """The hub cache `hf download` fills: $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/..."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]) / "hub"
    return Path.home() / ".cache" / "huggingface" / "hub"


def parse_synth(text: str) -> SynthSpec:
    """`sessions=16,seed=3,turns=8` -> SynthSpec (an empty string: the defaults)."""
    fields: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep:
            raise InputError(
                f"--synth item {item!r} is not key=value",
                location=Location(key="--synth"),
                hint="e.g. --synth sessions=16,seed=1,turns=8",
            )
        fields[key.strip().replace("-", "_")] = value.strip()
    try:
        return SynthSpec.model_validate(fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        message = str(err["msg"]).removeprefix("Value error, ")
        limit = (err.get("ctx") or {}).get("le")
        hint = f"use {key}={limit} or less" if limit is not None else "e.g. sessions=16,turns=8"
        raise InputError(
            f"{key}: {message}" if key else message, location=Location(key="--synth"), hint=hint
        ) from None


def synth_traces(spec: SynthSpec) -> TraceSet:
    rows = [(i + 1, orjson.dumps(r)) for i, r in enumerate(synth_rows(spec))]
    source = f"synth:{spec.model_dump_json()}"
    traces = read_turn_lines(Path("<synth>"), rows)
    return TraceSet(tuple(traces), "synth", source)


def open_traces(
    *,
    trace: Path | None = None,
    dataset: str | None = None,
    cache: Path | None = None,
    synth: str | None = None,
    max_model_len: int | None = None,
    rule: ContextRule = ContextRule.TRIM,
    limit: int | None = None,
) -> TraceSet:
    """Exactly one of `trace`, `dataset` (ORG/NAME in the local hub cache) or `synth`."""
    given = [x is not None for x in (trace, dataset, synth)]
    if sum(given) != 1:
        raise InputError(
            "name one trace source",
            location=Location(key="--trace"),
            hint="pass --trace PATH, --dataset ORG/NAME (a local HF cache) or --synth k=v,...",
        )
    if synth is not None:
        return apply_context_rule(synth_traces(parse_synth(synth)), max_model_len, rule)
    path = trace if trace is not None else resolve_hub_dataset(cache or hub_cache(), str(dataset))
    return load_traces(path, max_model_len=max_model_len, rule=rule, limit=limit)
