"""`inferbench replay`: multi-turn agentic sessions against a server (parse, call, render)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from inferbench.bench.agentic.aiperf import write_aiperf_artifacts
from inferbench.bench.agentic.api import ReplayOutcome, run_replay
from inferbench.bench.agentic.options import ReplayOptions
from inferbench.bench.arguments import CLIENT_OPTION_NAMES, validated
from inferbench.bench.dialect import api_of, resolve_tokenizer
from inferbench.bench.preset import SA_BENCH
from inferbench.bench.result import write_point_result
from inferbench.bench.settings import ClientOptions, Endpoint, require_api_key
from inferbench.bench.traces.context import ContextRule
from inferbench.bench.traces.source import open_traces
from inferbench.cli.outputs import output_file
from inferbench.cli.progress import working
from inferbench.core.errors import InputError, Location
from inferbench.core.limits import MAX_CONCURRENCY, MAX_SESSIONS, MAX_TOKENS


def register(app: typer.Typer) -> None:
    app.command("replay")(replay)


def _render(console: Console, outcome: ReplayOutcome) -> None:
    sa, ib = outcome.result.sa, outcome.result.inferbench
    block = ib.agentic
    assert block is not None
    table = Table(title="inferbench replay", show_header=False)
    s = block.sessions
    server = block.server
    rows = [
        ("lanes / window", f"{block.replay.lanes} / {block.window_s:.1f} s"),
        ("sessions", f"{s.started} started, {s.completed} done, {s.failed} failed, {s.cut} cut"),
        ("requests", f"{block.requests} ({block.subagent_requests} subagent), {ib.failed} failed"),
        ("throughput", f"{sa.request_throughput:.2f} req/s, {sa.output_throughput:.1f} out tok/s"),
        ("TTFT p50/p99 ms", f"{sa.median_ttft_ms:.1f} / {sa.p99_ttft_ms:.1f}"),
        ("TPOT p50 ms", f"{sa.median_tpot_ms:.2f}"),
        ("client prefix reuse", f"{block.client_reuse_share:.1%} of prompt tokens"),
    ]
    if server is not None:
        hit = "n/a" if server.overall_hit_rate is None else f"{server.overall_hit_rate:.1%}"
        rows.append(("server cache hit", server.error or f"{hit} ({server.engine})"))
    for key, value in rows:
        table.add_row(key, value)
    console.print(table)
    turns = Table(title="per turn (root conversation)")
    for col in ("turn", "requests", "prompt tokens", "TTFT p50 ms", "TPOT p50 ms"):
        turns.add_column(col, justify="right")
    for t in block.per_turn[:16]:
        tpot = "-" if t.median_tpot_ms is None else f"{t.median_tpot_ms:.2f}"
        turns.add_row(
            str(t.turn),
            str(t.requests),
            f"{t.mean_prompt_tokens:.0f}",
            f"{t.median_ttft_ms:.1f}",
            tpot,
        )
    console.print(turns)
    for f in s.failures:
        console.print(
            f"  [yellow]session {f.session} ({f.trace}) {f.stream} turn {f.turn}[/] {f.error}"
        )


def replay(
    base_url: str = typer.Option(..., "--base-url", help="Server root, e.g. http://127.0.0.1:8000"),
    model: str = typer.Option(..., "--model", help="Model name the server serves"),
    endpoint: str = typer.Option(
        "completions",
        "--endpoint",
        help="completions: exact token ids | chat: the conversation as chat messages"
        " (text made with --tokenizer), as InferenceX's aiperf scenario sends it",
    ),
    tokenizer: str | None = typer.Option(
        None, "--tokenizer", help="chat: tokenizer.json, its folder, or a model id in the HF cache"
    ),
    trace: Path | None = typer.Option(None, "--trace", help="trace file or folder"),
    dataset: str | None = typer.Option(None, "--dataset", help="ORG/NAME in the local HF cache"),
    hf_cache: Path | None = typer.Option(None, "--hf-cache", help="hub cache root"),
    synth: str | None = typer.Option(None, "--synth", help="k=v,... (see traces synth)"),
    lanes: int = typer.Option(
        ..., "--concurrency", max=MAX_CONCURRENCY, help="concurrent trajectory lanes"
    ),
    duration: float | None = typer.Option(None, "--duration", help="window length, seconds"),
    sessions: int | None = typer.Option(
        None, "--sessions", max=MAX_SESSIONS, help="measured sessions in all"
    ),
    warmup_sessions: int = typer.Option(0, "--warmup-sessions", max=MAX_SESSIONS, help="per lane"),
    max_idle: float = typer.Option(300.0, "--max-idle", help="cap on each idle gap, seconds"),
    delay_scale: float = typer.Option(1.0, "--delay-scale", help="multiplies recorded gaps"),
    no_cache_bust: bool = typer.Option(False, "--no-cache-bust", help="same tokens every run"),
    max_model_len: int | None = typer.Option(
        None,
        "--max-model-len",
        max=MAX_TOKENS,
        help="context length: a request over it follows --context-rule",
    ),
    context_rule: ContextRule = typer.Option(
        ContextRule.TRIM,
        "--context-rule",
        help="over --max-model-len: trim (end that conversation) or reject (exit 2)",
    ),
    max_failure_rate: float = typer.Option(
        SA_BENCH.max_failure_rate,
        "--max-failure-rate",
        help="a larger share of failed requests fails the replay (and stops it early)",
    ),
    request_timeout: float = typer.Option(600.0, "--request-timeout", help="seconds"),
    api_key_env: str | None = typer.Option(None, "--api-key-env", help="env var with the key"),
    seed: int = typer.Option(0, "--seed", help="seed of the token ids and trace order"),
    result_file: Path | None = typer.Option(
        None, "--output", "-o", parser=output_file("--output"), help="the result file"
    ),
    aiperf_artifacts: Path | None = typer.Option(
        None,
        "--aiperf-artifacts",
        help="also write aiperf's artifact files into this folder, for InferenceX's agentic"
        " post-processing (its layout: RESULT_DIR/aiperf_artifacts)",
    ),
) -> None:
    """Replay agentic sessions turn by turn and write one result file."""
    api = api_of(None, endpoint)
    require_api_key(api_key_env)
    ep = validated(
        Endpoint, "--base-url", base_url=base_url, model=model, api=api, api_key_env=api_key_env
    )
    tokenizer_path = resolve_tokenizer(tokenizer)
    if aiperf_artifacts is not None and aiperf_artifacts.exists() and not aiperf_artifacts.is_dir():
        raise InputError(
            "not a folder",
            location=Location(file=aiperf_artifacts, key="--aiperf-artifacts"),
            hint="name a folder to write the artifact files into (created if missing)",
        )
    traces = open_traces(
        trace=trace,
        dataset=dataset,
        cache=hf_cache,
        synth=synth,
        max_model_len=max_model_len,
        rule=context_rule,
    )
    options = validated(
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
        lanes=lanes,
        duration_s=duration,
        sessions=sessions,
        warmup_sessions=warmup_sessions,
        max_idle_s=max_idle,
        delay_scale=delay_scale,
        cache_bust=not no_cache_bust,
        seed=seed,
    )
    client = validated(
        ClientOptions,
        CLIENT_OPTION_NAMES,
        request_timeout_s=request_timeout,
        max_failure_rate=max_failure_rate,
        seed=seed,
    )
    console = Console(stderr=True)
    end = f"{duration:g} s" if duration is not None else f"{sessions} sessions"
    with working(console, f"replay: {lanes} lanes, {end}") as status:

        def on_request(sent: int, failed: int) -> None:
            status(f"replay: {lanes} lanes, {end}: {sent} requests, {failed} failed")

        outcome = run_replay(
            ep,
            traces,
            options,
            client=client,
            max_model_len=max_model_len,
            context_rule=context_rule.value,
            tokenizer=tokenizer_path,
            on_request=on_request,
        )
    if result_file is not None:
        write_point_result(result_file, outcome.result)
        console.print(f"wrote {result_file}", markup=False)
    if aiperf_artifacts is not None:
        write_aiperf_artifacts(aiperf_artifacts, outcome, ep.base_url)
        console.print(f"wrote aiperf artifacts into {aiperf_artifacts}", markup=False)
    _render(console, outcome)
    if not outcome.passed:
        ib = outcome.result.inferbench
        console.print(f"[red]failed[/] {escape(str(ib.gate_failure or ib.incomplete_reason))}")
        raise typer.Exit(1)
