"""`inferbench replay`: multi-turn agentic sessions against a server (parse, call, render)."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from inferbench.bench.agentic.aiperf import write_aiperf_artifacts
from inferbench.bench.agentic.api import ReplayOutcome, run_replay
from inferbench.bench.agentic.invocation import ReplayArgs, resolve
from inferbench.bench.result import write_point_result
from inferbench.cli.options import with_options
from inferbench.cli.progress import working


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


@with_options
def replay(args: ReplayArgs) -> None:
    """Replay agentic sessions turn by turn and write one result file."""
    inv = resolve(args)
    console = Console(stderr=True)
    what = f"replay: {args.lanes} lanes, {args.window}"
    with working(console, what) as status:

        def on_request(sent: int, failed: int) -> None:
            status(f"{what}: {sent} requests, {failed} failed")

        outcome = run_replay(
            inv.endpoint,
            inv.traces,
            inv.options,
            client=inv.client,
            max_model_len=args.max_model_len,
            context_rule=args.context_rule.value,
            tokenizer=inv.tokenizer,
            on_request=on_request,
        )
    if args.result_file is not None:
        write_point_result(args.result_file, outcome.result)
        console.print(f"wrote {args.result_file}", markup=False)
    if args.aiperf_artifacts is not None:
        write_aiperf_artifacts(args.aiperf_artifacts, outcome, inv.endpoint.base_url)
        console.print(f"wrote aiperf artifacts into {args.aiperf_artifacts}", markup=False)
    _render(console, outcome)
    if not outcome.passed:
        ib = outcome.result.inferbench
        console.print(f"[red]failed[/] {escape(str(ib.gate_failure or ib.incomplete_reason))}")
        raise typer.Exit(1)
