"""The library call: `run_replay(endpoint, traces, options) -> ReplayOutcome`.

The result file keeps the sa-bench fields where they mean the same thing (over every
measured request of the window: TTFT, TPOT, ITL, E2EL, throughput, lengths) and adds the
agentic figures under `inferbench.agentic`. The server's `/metrics` is read when the
window starts and when it ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from inferbench.bench.agentic.options import ReplayOptions
from inferbench.bench.agentic.replay import ReplayRun, RequestProgress, replay
from inferbench.bench.agentic.server_metrics import (
    Samples,
    ServerCacheMetrics,
    cache_metrics,
    scrape,
)
from inferbench.bench.agentic.summary import agentic_block
from inferbench.bench.metrics import summarize
from inferbench.bench.result import EndpointInfo, PointResult, build_point_result
from inferbench.bench.runner import _event_loop_runner
from inferbench.bench.schedule import LoadPoint
from inferbench.bench.settings import ApiKind, ClientOptions, Endpoint, RequestOptions
from inferbench.bench.traces.model import TraceSet
from inferbench.bench.workload import TraceWorkload
from inferbench.errors import InputError, Location


@dataclass(frozen=True)
class ReplayOutcome:
    result: PointResult
    run: ReplayRun

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


async def replay_with_metrics(
    endpoint: Endpoint,
    traces: TraceSet,
    options: ReplayOptions,
    request: RequestOptions,
    client: ClientOptions,
    on_request: RequestProgress | None = None,
) -> tuple[ReplayRun, ServerCacheMetrics | None]:
    before: list[Samples | str] = []

    async def window_start() -> None:
        if options.scrape_metrics:
            before.append(await scrape(endpoint.base_url))

    run = await replay(
        endpoint,
        traces.traces,
        options,
        request=request,
        client=client,
        on_window_start=window_start,
        on_request=on_request,
    )
    if not options.scrape_metrics or not before:
        return run, None
    after = await scrape(endpoint.base_url)
    start = before[0]
    if isinstance(start, str) or isinstance(after, str):
        return run, ServerCacheMetrics(error=start if isinstance(start, str) else str(after))
    return run, cache_metrics(start, after)


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
    )
    block = agentic_block(run, traces, options, server)
    return result.model_copy(
        update={"inferbench": result.inferbench.model_copy(update={"agentic": block})}
    )


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
    on_request: RequestProgress | None = None,
) -> ReplayOutcome:
    """Replay `traces` against `endpoint` and build the point's result (in this process);
    `on_request(sent, failed)` is called after every request (warm-up ones included)."""
    if endpoint.api is not ApiKind.COMPLETIONS:
        raise InputError(
            "the replay sends exact token ids, which only the completions API takes",
            location=Location(key="--endpoint"),
            hint="use --endpoint completions",
        )
    if options.duration_s is None and options.sessions is None:
        raise InputError("a replay needs an end", hint="pass --duration SECONDS or --sessions N")
    request = request or RequestOptions()
    client = client or ClientOptions()
    started = datetime.now(UTC)
    run, server = _event_loop_runner()(
        replay_with_metrics(endpoint, traces, options, request, client, on_request)
    )
    result = build_replay_result(
        run,
        server,
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
    )
    return ReplayOutcome(result=result, run=run)
