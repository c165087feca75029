"""One measured request: the unit every producer of timings hands to the metrics.

The load generator (`inferbench bench`) and the offline simulator
(`inferbench sim estimate`) both produce `RequestRecord`s; `inferbench.bench.metrics`
turns a list of them into the summary, so the two agree by construction.
All times are seconds on one monotonic clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class FailureKind(StrEnum):
    """Why a request failed; published per category, never dropped."""

    CONNECT = "connect"  # refused, reset before response, DNS, TLS
    TIMEOUT = "timeout"  # exceeded --request-timeout
    HTTP_STATUS = "http_status"  # 4xx / 5xx
    STREAM_ERROR = (
        "stream_error"  # malformed SSE / JSON, error event, connection dropped mid-stream
    )
    TRUNCATED = "truncated"  # fewer (or more) output tokens than asked with ignore_eos
    PROMPT_MISMATCH = "prompt_mismatch"  # usage.prompt_tokens far from the intended length


@dataclass(slots=True)
class RequestRecord:
    """Timings and token counts of one request (warm-ups are never recorded here)."""

    index: int  # position in the workload
    scheduled: float  # when the load shape wanted it sent
    sent: float  # when it was actually sent (sent - scheduled = client queue time)
    intended_input_tokens: int
    intended_output_tokens: int
    ok: bool = False
    # arrival stamp of every chunk that carried generated content, in order
    chunk_times: list[float] = field(default_factory=list)
    # tokens carried by each content chunk when the server said (per-chunk usage), else 1s
    chunk_tokens: list[int] = field(default_factory=list)
    input_tokens: int | None = None  # usage.prompt_tokens from the server
    output_tokens: int = 0  # usage.completion_tokens from the server (or counted chunks)
    done: float | None = None  # when the response ended (last byte)
    failure: FailureKind | None = None
    error: str | None = None  # short, secret-free description
    # added by the load generator (never renamed: other stages read these)
    per_chunk_usage: bool = False  # chunk_tokens came from per-chunk usage, not 1s
    generated_text: str | None = None  # only kept when detail output is on
    worker: int = 0  # which client worker process sent it

    @property
    def queue_time(self) -> float:
        return max(0.0, self.sent - self.scheduled)

    @property
    def ttft(self) -> float | None:
        return self.chunk_times[0] - self.sent if self.chunk_times else None

    @property
    def e2el(self) -> float | None:
        return self.chunk_times[-1] - self.sent if self.chunk_times else None

    @property
    def tpot(self) -> float | None:
        """(E2EL - TTFT) / (output_tokens - 1); None for single-token outputs."""
        if self.output_tokens <= 1 or len(self.chunk_times) < 1:
            return None
        return (self.chunk_times[-1] - self.chunk_times[0]) / (self.output_tokens - 1)
