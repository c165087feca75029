"""`profile_export.jsonl`: one aiperf `MetricRecordInfo` line per measured request.

Times are aiperf's: `request_start_ns` / `request_end_ns` in Unix nanoseconds (the send and
the response's last byte, from inferbench's monotonic stamps and the window's wall-clock
start), metrics in ms. `time_to_first_token`: send to first content chunk;
`request_latency`: send to last content chunk (inferbench's E2EL); `inter_token_latency`:
(E2EL - TTFT) / (output - 1), which is aiperf's ITL and inferbench's TPOT (absent for one-token
answers, as in aiperf). Lengths: the server's usage counts (aiperf's
`--use-server-token-count`, as InferenceX runs it), else the intended prompt length.
`conversation_id` is the trace's id, with aiperf's `::sa:<name>` for a subagent's stream, and
`turn_index` the 0-based position in its stream, so InferenceX's trace-metadata lookup finds
a Weka trace's recorded outputs. Warm-up requests are not recorded (inferbench keeps none).
"""

from __future__ import annotations

import re
from typing import Any

from inferbench.bench.agentic.replay import ReplayRun, TurnRecord

_HTTP_STATUS = re.compile(r"^HTTP (\d{3})\b")


def _ns(run: ReplayRun, t: float) -> int:
    return round((run.wall_t0 + (t - run.t0)) * 1e9)


def _value(value: float | int, unit: str) -> dict[str, Any]:
    return {"value": value, "unit": unit}


def _metrics(t: TurnRecord) -> dict[str, Any]:
    r = t.record
    isl = r.input_tokens if r.input_tokens is not None else r.intended_input_tokens
    out: dict[str, Any] = {
        "input_sequence_length": _value(isl, "tokens"),
        "output_sequence_length": _value(r.output_tokens, "tokens"),
    }
    if r.ttft is not None and r.e2el is not None:
        out["time_to_first_token"] = _value(r.ttft * 1e3, "ms")
        out["request_latency"] = _value(r.e2el * 1e3, "ms")
    if (tpot := r.tpot) is not None:
        out["inter_token_latency"] = _value(tpot * 1e3, "ms")
        if tpot > 0:
            out["output_token_throughput_per_user"] = _value(1.0 / tpot, "tokens/sec/user")
    return out


def error_details(t: TurnRecord) -> dict[str, Any]:
    """aiperf's `ErrorDetails`: the HTTP status where there was one, the failure kind."""
    r = t.record
    message = r.error or ""
    status = _HTTP_STATUS.match(message)
    kind = r.failure.value if r.failure is not None else "stream_error"
    return {"code": int(status.group(1)) if status else None, "type": kind, "message": message}


def record_line(run: ReplayRun, t: TurnRecord) -> dict[str, Any]:
    r = t.record
    conversation = t.trace if t.depth == 0 else f"{t.trace}::sa:{t.stream}"
    metadata = {
        "session_num": t.session,
        "x_request_id": None,
        "x_correlation_id": t.conversation,
        "conversation_id": conversation,
        "turn_index": t.turn - 1,
        "request_start_ns": _ns(run, r.sent),
        "request_ack_ns": None,
        "request_end_ns": _ns(run, r.done if r.done is not None else r.sent),
        "worker_id": f"lane_{t.lane}",
        "benchmark_phase": "profiling",
        "was_cancelled": False,
        "cancellation_time_ns": None,
    }
    if r.ok:
        return {"metadata": metadata, "metrics": _metrics(t), "error": None}
    metrics = {"error_isl": _value(r.intended_input_tokens, "tokens")}
    return {"metadata": metadata, "metrics": metrics, "error": error_details(t)}


def record_lines(run: ReplayRun) -> list[dict[str, Any]]:
    """Every measured request, in send order."""
    return [record_line(run, t) for t in sorted(run.turns, key=lambda t: t.record.sent)]
