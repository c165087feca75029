"""One measured request: the unit every producer of timings hands to the metrics.

The load generator (`inferbench bench`) and the offline simulator
(`inferbench sim estimate`) both produce `RequestRecord`s; `inferbench.bench.metrics`
turns a list of them into the summary, so the two agree by construction.
All times are seconds on one monotonic clock.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np


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
    # stopped before its response ended: Ctrl-C / SIGTERM, or still running past --duration
    INTERRUPTED = "interrupted"


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


@dataclass(frozen=True)
class RecordColumns:
    """One point's requests as arrays, one row per request in record order: what
    `inferbench.bench.metrics.summarize_columns` reads.

    `summarize` builds these from `RequestRecord`s. The simulator builds them directly,
    so a 20,000-request estimate never holds its ~20M chunk stamps as Python floats: it
    gives the pooled inter-chunk gaps as distinct values with counts (`itl_counts`).
    """

    scheduled: np.ndarray  # float s
    sent: np.ndarray
    done: np.ndarray  # nan: never ended
    ok: np.ndarray  # bool
    input_tokens: np.ndarray  # int: the server's count, else the intended one
    has_input: np.ndarray  # bool: the server gave input_tokens
    intended_input: np.ndarray
    intended_output: np.ndarray
    output_tokens: np.ndarray
    first_chunk: np.ndarray  # float s; nan: no content chunk
    last_chunk: np.ndarray
    itl: np.ndarray  # pooled gaps between content chunks of the ok requests (s)
    itl_counts: np.ndarray | None  # how often each gap occurs (None: once each)
    itl_per_token: np.ndarray  # per-token gaps from per-chunk usage (s)
    failures: dict[str, int]  # failed requests by kind
    failure_examples: tuple[str, ...] = ()

    @property
    def size(self) -> int:
        return int(self.sent.size)

    def _timed(self) -> np.ndarray:
        return self.ok & ~np.isnan(self.first_chunk)

    def ttft(self) -> np.ndarray:
        """Sent -> first content chunk, ok requests that had one (s)."""
        mask = self._timed()
        return self.first_chunk[mask] - self.sent[mask]

    def e2el(self) -> np.ndarray:
        """Sent -> last content chunk (s)."""
        mask = self._timed()
        return self.last_chunk[mask] - self.sent[mask]

    def tpot(self) -> np.ndarray:
        """(E2EL - TTFT) / (output_tokens - 1), ok requests with more than one token (s)."""
        mask = self._timed() & (self.output_tokens > 1)
        return (self.last_chunk[mask] - self.first_chunk[mask]) / (self.output_tokens[mask] - 1)

    def queue_time(self) -> np.ndarray:
        return np.maximum(0.0, self.sent - self.scheduled)

    @classmethod
    def from_records(cls, records: Sequence[RequestRecord]) -> RecordColumns:
        ok = [r for r in records if r.ok]
        failed = [r for r in records if not r.ok]
        itl, per_token = _itls(ok)
        nan = float("nan")
        return cls(
            scheduled=np.array([r.scheduled for r in records], dtype=float),
            sent=np.array([r.sent for r in records], dtype=float),
            done=np.array([nan if r.done is None else r.done for r in records], dtype=float),
            ok=np.array([r.ok for r in records], dtype=bool),
            input_tokens=np.array(
                [
                    r.intended_input_tokens if r.input_tokens is None else r.input_tokens
                    for r in records
                ],
                dtype=np.int64,
            ),
            has_input=np.array([r.input_tokens is not None for r in records], dtype=bool),
            intended_input=np.array([r.intended_input_tokens for r in records], dtype=np.int64),
            intended_output=np.array([r.intended_output_tokens for r in records], dtype=np.int64),
            output_tokens=np.array([r.output_tokens for r in records], dtype=np.int64),
            first_chunk=np.array([r.chunk_times[0] if r.chunk_times else nan for r in records]),
            last_chunk=np.array([r.chunk_times[-1] if r.chunk_times else nan for r in records]),
            itl=itl,
            itl_counts=None,
            itl_per_token=per_token,
            failures=dict(Counter((r.failure or FailureKind.STREAM_ERROR).value for r in failed)),
            failure_examples=tuple(dict.fromkeys(f"{r.failure}: {r.error}" for r in failed))[:5],
        )


def _itls(ok: list[RequestRecord]) -> tuple[np.ndarray, np.ndarray]:
    """Pooled chunk gaps, and per-token gaps from requests with per-chunk usage.

    All requests' chunk times go into one array and are differenced at once (the gap
    that would span two requests is dropped).
    """
    timed = [rec for rec in ok if len(rec.chunk_times) >= 2]
    if not timed:
        return np.empty(0), np.empty(0)
    lengths = np.array([len(rec.chunk_times) for rec in timed], dtype=np.int64)
    flat = np.concatenate([np.asarray(rec.chunk_times, dtype=float) for rec in timed])
    gaps = flat[1:] - flat[:-1]
    keep = np.ones(gaps.size, dtype=bool)
    keep[np.cumsum(lengths)[:-1] - 1] = False  # the last chunk of one request to the next
    per_chunk = gaps[keep]
    per_token: list[np.ndarray] = []
    for rec in timed:
        if rec.per_chunk_usage and len(rec.chunk_tokens) == len(rec.chunk_times):
            own = np.diff(np.asarray(rec.chunk_times, dtype=float))
            tokens = np.asarray(rec.chunk_tokens[1:])
            mask = tokens > 0
            per_token.append(np.repeat(own[mask] / tokens[mask], tokens[mask]))
    return per_chunk, (np.concatenate(per_token) if per_token else np.empty(0))
