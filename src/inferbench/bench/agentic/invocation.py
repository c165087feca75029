"""Every input of `inferbench replay`, and what it resolves to.

`ReplayArgs` holds the values as given (the one list of `replay`'s options: each field's
description is its `--help`, its `Flag` the spelling where that is not `--field-name`);
`resolve` turns them into the endpoint, traces and options `run_replay` takes, refusing a bad
value with the option's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import Field

from inferbench.bench.agentic.options import ReplayOptions
from inferbench.bench.arguments import CLIENT_OPTION_NAMES
from inferbench.bench.dialect import api_of, resolve_tokenizer
from inferbench.bench.preset import SA_BENCH
from inferbench.bench.settings import ClientOptions, Endpoint, require_api_key
from inferbench.bench.traces.context import ContextRule
from inferbench.bench.traces.model import TraceSet
from inferbench.bench.traces.source import open_traces
from inferbench.core.errors import InputError, Location
from inferbench.core.flags import Flag
from inferbench.core.hints import validated
from inferbench.core.limits import MAX_CONCURRENCY, MAX_SESSIONS, MAX_TOKENS
from inferbench.core.model import FrozenModel


class ReplayArgs(FrozenModel):
    """The inputs of one `inferbench replay` call, as given (None: not given)."""

    base_url: str = Field(description="Server root, e.g. http://127.0.0.1:8000")
    model: str = Field(description="Model name the server serves")
    endpoint: str = Field(
        "completions",
        description="completions: exact token ids | chat: the conversation as chat messages"
        " (text made with --tokenizer), as InferenceX's aiperf scenario sends it",
    )
    tokenizer: str | None = Field(
        None, description="chat: tokenizer.json, its folder, or a model id in the HF cache"
    )
    trace: Path | None = Field(None, description="trace file or folder")
    dataset: str | None = Field(None, description="ORG/NAME in the local HF cache")
    hf_cache: Path | None = Field(None, description="hub cache root")
    synth: str | None = Field(None, description="k=v,... (see traces synth)")
    lanes: Annotated[int, Flag("--concurrency")] = Field(
        le=MAX_CONCURRENCY, description="concurrent trajectory lanes"
    )
    duration: float | None = Field(None, description="window length, seconds")
    sessions: int | None = Field(None, le=MAX_SESSIONS, description="measured sessions in all")
    warmup_sessions: int = Field(0, le=MAX_SESSIONS, description="per lane")
    max_idle: float = Field(300.0, description="cap on each idle gap, seconds")
    delay_scale: float = Field(1.0, description="multiplies recorded gaps")
    no_cache_bust: bool = Field(False, description="same tokens every run")
    max_model_len: int | None = Field(
        None, le=MAX_TOKENS, description="context length: a request over it follows --context-rule"
    )
    context_rule: ContextRule = Field(
        ContextRule.TRIM,
        description="over --max-model-len: trim (end that conversation) or reject (exit 2)",
    )
    max_failure_rate: float = Field(
        SA_BENCH.max_failure_rate,
        description="a larger share of failed requests fails the replay (and stops it early)",
    )
    request_timeout: float = Field(600.0, description="seconds")
    api_key_env: str | None = Field(None, description="env var with the key")
    seed: int = Field(0, description="seed of the token ids and trace order")
    result_file: Annotated[Path | None, Flag("--output", "-o", writes="file")] = Field(
        None, description="the result file"
    )
    aiperf_artifacts: Path | None = Field(
        None,
        description="also write aiperf's artifact files into this folder, for InferenceX's"
        " agentic post-processing (its layout: RESULT_DIR/aiperf_artifacts)",
    )

    @property
    def window(self) -> str:
        """How the measured window ends, for progress lines: `60 s` or `20 sessions`."""
        return f"{self.duration:g} s" if self.duration is not None else f"{self.sessions} sessions"


@dataclass(frozen=True)
class ReplayInvocation:
    """What a `ReplayArgs` resolves to: `run_replay`'s inputs."""

    endpoint: Endpoint
    traces: TraceSet
    options: ReplayOptions
    client: ClientOptions
    tokenizer: Path | None


def resolve(args: ReplayArgs) -> ReplayInvocation:
    """The objects `run_replay` takes, or an InputError naming the option to fix."""
    api = api_of(None, args.endpoint)
    require_api_key(args.api_key_env)
    endpoint = validated(
        Endpoint,
        "--base-url",
        base_url=args.base_url,
        model=args.model,
        api=api,
        api_key_env=args.api_key_env,
    )
    tokenizer = resolve_tokenizer(args.tokenizer)
    folder = args.aiperf_artifacts
    if folder is not None and folder.exists() and not folder.is_dir():
        raise InputError(
            "not a folder",
            location=Location(file=folder, key="--aiperf-artifacts"),
            hint="name a folder to write the artifact files into (created if missing)",
        )
    traces = open_traces(
        trace=args.trace,
        dataset=args.dataset,
        cache=args.hf_cache,
        synth=args.synth,
        max_model_len=args.max_model_len,
        rule=args.context_rule,
    )
    return ReplayInvocation(endpoint, traces, _options(args), _client(args), tokenizer)


def _options(args: ReplayArgs) -> ReplayOptions:
    return validated(
        ReplayOptions,
        {
            "": "--duration",  # the one whole-options error: neither end given
            "lanes": "--concurrency",
            "duration_s": "--duration",
            "sessions": "--sessions",
            "warmup_sessions": "--warmup-sessions",
            "max_idle_s": "--max-idle",
            "delay_scale": "--delay-scale",
            "seed": "--seed",
        },
        lanes=args.lanes,
        duration_s=args.duration,
        sessions=args.sessions,
        warmup_sessions=args.warmup_sessions,
        max_idle_s=args.max_idle,
        delay_scale=args.delay_scale,
        cache_bust=not args.no_cache_bust,
        seed=args.seed,
    )


def _client(args: ReplayArgs) -> ClientOptions:
    return validated(
        ClientOptions,
        CLIENT_OPTION_NAMES,
        request_timeout_s=args.request_timeout,
        max_failure_rate=args.max_failure_rate,
        seed=args.seed,
    )
