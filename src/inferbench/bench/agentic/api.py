"""The library call: `run_replay(endpoint, traces, options) -> ReplayOutcome`.

The result file keeps the sa-bench fields where they mean the same thing (over every
measured request of the window: TTFT, TPOT, ITL, E2EL, throughput, lengths) and adds the
agentic figures under `inferbench.agentic`. The server's `/metrics` is read when the
window starts and when it ends. `inferbench.bench.agentic.aiperf` writes the same run as
aiperf's artifact files (what InferenceX's agentic post-processing reads).

Two request modes: exact token ids to `/v1/completions` (default), or chat text to
`/v1/chat/completions` (`Endpoint.api` chat, with a tokenizer; see `chat.py`), the mode of
InferenceX's aiperf scenario.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from inferbench.bench.agentic.chat import TextOfIds
from inferbench.bench.agentic.options import ReplayOptions
from inferbench.bench.agentic.replay import ReplayRun, RequestProgress, replay
from inferbench.bench.agentic.server_metrics import (
    ServerCacheMetrics,
    cache_metrics,
    parse_metrics,
    scrape_text,
)
from inferbench.bench.agentic.summary import agentic_block
from inferbench.bench.metrics import summarize
from inferbench.bench.result import EndpointInfo, PointResult, build_point_result
from inferbench.bench.runner import _event_loop_runner
from inferbench.bench.schedule import LoadPoint
from inferbench.bench.settings import ApiKind, ClientOptions, Endpoint, RequestOptions
from inferbench.bench.traces.model import TraceSet
from inferbench.bench.workload import TraceWorkload
from inferbench.core.errors import InputError, Location


@dataclass(frozen=True)
class ReplayOutcome:
    result: PointResult
    run: ReplayRun
    # the server's `/metrics` text at the window's start and end (None: not read)
    metrics_text: tuple[str, str] | None = None

    @property
    def passed(self) -> bool:
        return self.result.inferbench.gate_failure is None and self.result.complete


def _gate(run: ReplayRun, client: ClientOptions) -> str | None:
    total = len(run.turns)
    if total == 0:
        return "no request finished"
    failed = sum(1 for t in run.turns if not t.record.ok)
    if failed / total > client.max_failure_rate:
        return (
            f"{failed}/{total} requests failed ({failed / total:.1%}),"
            f" above --max-failure-rate {client.max_failure_rate:.1%}"
        )
    return None


@dataclass(frozen=True)
class Measured:
    """A replay's run, the server's cache figures and both `/metrics` texts."""

    run: ReplayRun
    server: ServerCacheMetrics | None
    metrics_text: tuple[str, str] | None


async def replay_with_metrics(
    endpoint: Endpoint,
    traces: TraceSet,
    options: ReplayOptions,
    request: RequestOptions,
    client: ClientOptions,
    on_request: RequestProgress | None = None,
) -> tuple[ReplayRun, ServerCacheMetrics | None]:
    measured = await replay_measured(
        endpoint, traces, options, request, client, on_request=on_request
    )
    return measured.run, measured.server


async def replay_measured(
    endpoint: Endpoint,
    traces: TraceSet,
    options: ReplayOptions,
    request: RequestOptions,
    client: ClientOptions,
    text: TextOfIds | None = None,
    on_request: RequestProgress | None = None,
) -> Measured:
    before: list[tuple[str | None, str | None]] = []

    async def window_start() -> None:
        if options.scrape_metrics:
            before.append(await scrape_text(endpoint.base_url))

    run = await replay(
        endpoint,
        traces.traces,
        options,
        request=request,
        client=client,
        on_window_start=window_start,
        text=text,
        on_request=on_request,
    )
    if not options.scrape_metrics or not before:
        return Measured(run, None, None)
    start, start_error = before[0]
    if start is None:  # nothing to difference: no second wait on a server that did not answer
        return Measured(run, ServerCacheMetrics(error=start_error or "GET /metrics: no text"), None)
    end, end_error = await scrape_text(endpoint.base_url)
    if start is None or end is None:
        error = start_error or end_error or "GET /metrics: no text"
        return Measured(run, ServerCacheMetrics(error=error), None)
    try:
        server = cache_metrics(parse_metrics(start), parse_metrics(end))
    except ValueError as exc:
        error = f"GET /metrics: {type(exc).__name__}: {exc}"[:200]
        return Measured(run, ServerCacheMetrics(error=error), None)
    return Measured(run, server, (start, end))


def build_replay_result(
    run: ReplayRun,
    server: ServerCacheMetrics | None,
    traces: TraceSet,
    options: ReplayOptions,
    *,
    endpoint: EndpointInfo,
    request: RequestOptions,
    client: ClientOptions,
    started: datetime,
    finished: datetime,
    max_model_len: int | None = None,
    context_rule: str = "trim",
    backend: str = "openai",
    tokenizer_id: str | None = None,
) -> PointResult:
    """The result file of one replay (the simulator's agentic estimate builds it too)."""
    records = [t.record for t in run.turns]
    metrics = summarize(records, run.duration_s)
    summary = traces.summary()
    workload = TraceWorkload(
        source=traces.source,
        format=traces.format,
        traces=len(traces.traces),
        max_model_len=max_model_len,
        context_rule=context_rule,
        mean_input=max(1, round(float(summary["input_tokens_mean"]))),
        mean_output=max(1, round(float(summary["output_tokens_mean"]))),
    )
    load = LoadPoint(
        concurrency=options.lanes,
        num_prompts=max(len(records), 1),
        duration_s=options.duration_s,
        warmups=run.warmup_requests,
    )
    result = build_point_result(
        records=records,
        metrics=metrics,
        endpoint=endpoint,
        workload=workload,
        load=load,
        request=request,
        client=client,
        started_at=started,
        finished_at=finished,
        complete=not run.interrupted and run.stopped_reason is None,
        incomplete_reason="interrupted" if run.interrupted else run.stopped_reason,
        gate_failure=_gate(run, client),
        backend=backend,
        tokenizer_id=tokenizer_id,
        window=_wall_window(run),
    )
    block = agentic_block(run, traces, options, server)
    return result.model_copy(
        update={"inferbench": result.inferbench.model_copy(update={"agentic": block})}
    )


def _wall_window(run: ReplayRun) -> tuple[float, float] | None:
    """The measured window in Unix seconds (None on the simulator's virtual clock)."""
    if not run.wall_t0:
        return None
    return run.wall_t0, run.wall_t0 + run.duration_s


def run_replay(
    endpoint: Endpoint,
    traces: TraceSet,
    options: ReplayOptions,
    *,
    request: RequestOptions | None = None,
    client: ClientOptions | None = None,
    max_model_len: int | None = None,
    context_rule: str = "trim",
    backend: str = "openai",
    tokenizer: Path | None = None,
    on_request: RequestProgress | None = None,
) -> ReplayOutcome:
    """Replay `traces` against `endpoint` and build the point's result (in this process).
    `endpoint.api` completions sends exact token ids; chat sends each conversation as chat
    messages, its ids made text with `tokenizer` (a local tokenizer.json or its folder).
    `on_request(sent, failed)` is called after every request (warm-up ones included)."""
    text = None
    if endpoint.api is ApiKind.CHAT:
        if tokenizer is None:
            raise InputError(
                "chat-text mode turns the traces' token ids into text, and needs a tokenizer",
                location=Location(key="--tokenizer"),
                hint="pass --tokenizer PATH (the model's tokenizer.json or its folder),"
                " or use --endpoint completions to send exact ids",
            )
        text = TextOfIds(tokenizer)
    if options.duration_s is None and options.sessions is None:
        raise InputError("a replay needs an end", hint="pass --duration SECONDS or --sessions N")
    request = request or RequestOptions()
    client = client or ClientOptions()
    started = datetime.now(UTC)
    measured = _event_loop_runner()(
        replay_measured(endpoint, traces, options, request, client, text, on_request)
    )
    run = measured.run
    result = build_replay_result(
        run,
        measured.server,
        traces,
        options,
        endpoint=EndpointInfo(base_url=endpoint.base_url, model=endpoint.model, api=endpoint.api),
        request=request,
        client=client,
        started=started,
        finished=datetime.now(UTC),
        max_model_len=max_model_len,
        context_rule=context_rule,
        backend=backend,
        tokenizer_id=None if tokenizer is None else str(tokenizer),
    )
    return ReplayOutcome(result=result, run=run, metrics_text=measured.metrics_text)
