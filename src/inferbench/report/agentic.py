"""The agentic view's data: each agentic point's per-turn, per-session and cache figures.

An agentic point (`inferbench replay`, or an agentic job of `run`) keeps its replay's
own summary in the record (`Record.agentic`); the curves show it like any point, and
this view shows what a fixed-length benchmark has no notion of: how TTFT grows turn
after turn as the context grows, what a session costs, and how much of the prompt the
server's prefix cache served against what a perfect cache could have.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inferbench.report.payload import SeriesTable, sig
from inferbench.results.agentic import agentic_kind
from inferbench.results.pareto import series_key
from inferbench.results.record import Record


def agentic_payload(records: Sequence[Record], series: SeriesTable) -> list[dict[str, Any]]:
    """One entry per agentic point, in series, topology and concurrency order."""
    out = []
    points = [r for r in records if r.agentic is not None and series_key(r) in series.index]
    points.sort(
        key=lambda r: (series.index[series_key(r)], r.identity.topology(), r.identity.concurrency)
    )
    for r in points:
        a = r.agentic
        assert a is not None
        s = a.sessions
        server = a.server
        out.append(
            {
                "s": series.index[series_key(r)],
                "t": r.identity.topology(),
                "c": r.identity.concurrency,
                "kind": agentic_kind(r.identity.dataset),
                "run": r.provenance.run_id,
                "turns": {
                    "turn": [t.turn for t in a.per_turn],
                    "requests": [t.requests for t in a.per_turn],
                    "prompt": [sig(t.mean_prompt_tokens) for t in a.per_turn],
                    "ttft_p50": [sig(t.median_ttft_ms) for t in a.per_turn],
                    "ttft_p90": [sig(t.p90_ttft_ms) for t in a.per_turn],
                    "tpot_p50": [sig(t.median_tpot_ms) for t in a.per_turn],
                    "hit": [sig(t.server_hit_rate) for t in a.per_turn],
                },
                "sessions": {
                    "per_min": sig(a.sessions_per_minute),
                    "started": s.started,
                    "completed": s.completed,
                    "failed": s.failed,
                    "cut": s.cut,
                    "duration_p50": sig(s.duration_s.median),
                    "duration_p90": sig(s.duration_s.p90),
                    "requests_p50": sig(s.requests.median),
                    "input_p50": sig(s.input_tokens.median),
                    "output_p50": sig(s.output_tokens.median),
                },
                "cache": {
                    "client_reuse": sig(a.client_reuse_share),
                    "server_overall": sig(server.overall_hit_rate) if server else None,
                    "server_gpu": sig(server.gpu_hit_rate) if server else None,
                    "server_external": sig(server.external_hit_rate) if server else None,
                    "engine": server.engine if server else None,
                },
                "requests": a.requests,
                "window_s": sig(a.window_s),
                "tput": sig(a.total_token_throughput),
            }
        )
    return out
