"""The per-point result file: every sa-bench field at top level, plus an `inferbench` block.

Existing post-processing that reads sa-bench / `vllm bench serve` JSON keeps
working; inferbench's own, versioned fields (failures by category, achieved
lengths, queue times, in-flight concurrency, the exact workload and client
settings) live under `"inferbench"`. Files are written atomically.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from inferbench import __version__
from inferbench.bench.agentic.block import AgenticBlock
from inferbench.bench.metrics import BenchStats, InFlight, Interactivity, Lengths, PointMetrics, Slo
from inferbench.bench.records import RecordColumns, RequestRecord
from inferbench.bench.schedule import LoadPoint
from inferbench.bench.settings import ApiKind, ClientOptions, RequestOptions
from inferbench.bench.workload import Workload
from inferbench.core.errors import InputError, Location
from inferbench.core.fsio import atomic_write_bytes
from inferbench.core.fsread import MAX_RESULT_BYTES, read_file
from inferbench.core.model import FrozenModel

SCHEMA_VERSION = 1


class SaBenchFields(BaseModel):
    """The sa-bench result fields, under their exact names (`p99.9_*` via aliases)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    date: str
    backend: str
    model_id: str
    tokenizer_id: str | None
    best_of: int = 1  # sa-bench writes its --best-of (inferbench sends one sequence)
    num_prompts: int
    request_rate: float | str  # "inf" for a closed loop, as sa-bench writes it
    burstiness: float
    max_concurrency: int | None
    duration: float
    # the measured window in Unix seconds (warm-ups excluded): InferenceX's power step
    # (utils/aggregate_power.py) cuts the GPU power log to it; None in files of older versions
    benchmark_start_time_unix: float | None = None
    benchmark_end_time_unix: float | None = None
    completed: int
    failed: int = 0  # vLLM's top-level count (sa-bench has none)
    total_input_tokens: int
    total_output_tokens: int
    request_throughput: float
    request_goodput: float | None = None  # req/s meeting --goodput / --slo; vLLM's key
    output_throughput: float
    total_token_throughput: float
    mean_ttft_ms: float
    median_ttft_ms: float
    std_ttft_ms: float
    p90_ttft_ms: float
    p99_ttft_ms: float
    p99_9_ttft_ms: float = Field(alias="p99.9_ttft_ms")
    mean_tpot_ms: float
    median_tpot_ms: float
    std_tpot_ms: float
    p90_tpot_ms: float
    p99_tpot_ms: float
    p99_9_tpot_ms: float = Field(alias="p99.9_tpot_ms")
    mean_itl_ms: float
    median_itl_ms: float
    std_itl_ms: float
    p90_itl_ms: float
    p99_itl_ms: float
    p99_9_itl_ms: float = Field(alias="p99.9_itl_ms")
    mean_e2el_ms: float
    median_e2el_ms: float
    std_e2el_ms: float
    p90_e2el_ms: float
    p99_e2el_ms: float
    p99_9_e2el_ms: float = Field(alias="p99.9_e2el_ms")
    input_lens: list[int]
    output_lens: list[int]
    # with detail on (sa-bench writes them with --save-detailed)
    ttfts: list[float] | None = None
    itls: list[list[float]] | None = None
    generated_texts: list[str] | None = None
    errors: list[str] | None = None

    @classmethod
    def field_keys(cls) -> frozenset[str]:
        """Every top-level key, as written (`p99.9_ttft_ms`, not the attribute name)."""
        return frozenset(f.alias or name for name, f in cls.model_fields.items())


_FIXED_KEYS = SaBenchFields.field_keys()


class EndpointInfo(FrozenModel):
    """Where the point was measured (never the API key)."""

    base_url: str
    model: str
    api: ApiKind


MAX_SAMPLES = 4096  # per-request values kept per point: enough for a p99's interval


class RequestSamples(FrozenModel):
    """Per-request values of the measured ok requests, for the noise model of
    `inferbench results compare` (bootstrap intervals need the requests, not summaries).

    Kept small: milliseconds to the microsecond, and above `MAX_SAMPLES` requests an
    evenly spaced subset in send order. `ttft_ms`, `e2el_ms` and `tokens` (input +
    output) describe the same requests; `tpot_ms` those with more than one output token.
    """

    ttft_ms: list[float]
    e2el_ms: list[float]
    tokens: list[int]
    tpot_ms: list[float]

    @classmethod
    def of(cls, cols: RecordColumns) -> RequestSamples:
        timed = cols.ok & ~np.isnan(cols.first_chunk)
        tokens = (cols.input_tokens + cols.output_tokens)[timed]
        return cls(
            ttft_ms=_ms(cols.ttft()),
            e2el_ms=_ms(cols.e2el()),
            tokens=_spaced(tokens).astype(int).tolist(),
            tpot_ms=_ms(cols.tpot()),
        )


def _spaced(values: np.ndarray) -> np.ndarray:
    if values.size <= MAX_SAMPLES:
        return values
    return values[np.linspace(0, values.size - 1, MAX_SAMPLES).round().astype(int)]


def _ms(seconds: np.ndarray) -> list[float]:
    return [float(v) for v in np.round(_spaced(seconds) * 1e3, 3)]


class InferbenchBlock(FrozenModel):
    schema_version: int = SCHEMA_VERSION
    client_version: str = __version__
    complete: bool
    incomplete_reason: str | None = None
    gate_failure: str | None = None
    failed: int
    failures: dict[str, int]
    failure_examples: list[str] = Field(default_factory=list)
    lengths: Lengths
    queue_ms: BenchStats
    itl_per_token_ms: BenchStats
    interactivity: Interactivity
    slo: Slo | None = None
    # top-level keys beyond the fixed p90/p99/p99.9 (`--metric-percentiles`) and the
    # `--metadata KEY=VALUE` pairs, listed here so a reader can tell them apart
    extra_percentiles: dict[str, float] = Field(default_factory=dict)
    metadata: dict[str, str] = Field(default_factory=dict)
    good_requests: int | None = None
    goodput: float | None = None
    concurrency_requested: int | None
    in_flight: InFlight
    achieved_request_rate: float | None = None  # sends/s over the send window
    warmups: int
    endpoint: EndpointInfo
    workload: Workload
    load: LoadPoint
    request: RequestOptions
    client: ClientOptions
    started_at: str
    finished_at: str
    # what the producer could not honour (the simulator's unmodelled features); never silent
    warnings: list[str] = Field(default_factory=list)
    agentic: AgenticBlock | None = None  # multi-turn replay figures (trace workloads)
    samples: RequestSamples | None = None  # None in files of older versions


class PointResult(FrozenModel):
    """One result file: sa-bench fields + the inferbench block."""

    sa: SaBenchFields
    inferbench: InferbenchBlock

    @property
    def complete(self) -> bool:
        return self.inferbench.complete

    def to_json_bytes(self) -> bytes:
        top = self.sa.model_dump(mode="json", by_alias=True, exclude_none=False)
        for key in ("ttfts", "itls", "generated_texts", "errors"):
            if top.get(key) is None:
                top.pop(key, None)
        top.update(self.inferbench.extra_percentiles)
        top.update(self.inferbench.metadata)
        top["inferbench"] = self.inferbench.model_dump(mode="json", by_alias=True)
        return orjson.dumps(top, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY)


def write_point_result(path: Path, result: PointResult) -> None:
    atomic_write_bytes(Path(path), result.to_json_bytes())


def read_point_result(path: Path) -> PointResult:
    """Read a result file; a corrupt or foreign file is an InputError naming what is wrong."""
    path = Path(path)
    raw = read_file(path, MAX_RESULT_BYTES, what="result file")
    try:
        top = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(
            f"result file is not valid JSON ({exc})",
            location=Location(file=path),
            hint="the file is truncated or corrupt; rerun the point",
        ) from None
    if not isinstance(top, dict) or "inferbench" not in top:
        raise InputError(
            "not an inferbench result file (no `inferbench` block)",
            location=Location(file=path),
            hint="give a result file `inferbench bench` wrote",
        )
    block = top.pop("inferbench")
    if isinstance(block, dict):
        for key in (*block.get("extra_percentiles", {}), *block.get("metadata", {})):
            top.pop(key, None)
    try:
        return PointResult(
            sa=SaBenchFields.model_validate(top), inferbench=InferbenchBlock.model_validate(block)
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        raise InputError(
            f"invalid result file: {err['msg']}",
            location=Location(file=path, key=key),
            hint="the file was changed or truncated; rerun the point",
        ) from None


def _sa_stats(metrics: PointMetrics) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, stats in (
        ("ttft", metrics.ttft_ms),
        ("tpot", metrics.tpot_ms),
        ("itl", metrics.itl_ms),
        ("e2el", metrics.e2el_ms),
    ):
        out[f"mean_{name}_ms"] = stats.mean
        out[f"median_{name}_ms"] = stats.median
        out[f"std_{name}_ms"] = stats.std
        out[f"p90_{name}_ms"] = stats.p90
        out[f"p99_{name}_ms"] = stats.p99
        out[f"p99.9_{name}_ms"] = stats.p99_9
    return out


def build_point_result(
    *,
    records: Sequence[RequestRecord] | RecordColumns,
    metrics: PointMetrics,
    endpoint: EndpointInfo,
    workload: Workload,
    load: LoadPoint,
    request: RequestOptions,
    client: ClientOptions,
    started_at: datetime,
    finished_at: datetime,
    complete: bool = True,
    incomplete_reason: str | None = None,
    gate_failure: str | None = None,
    backend: str = "openai",
    tokenizer_id: str | None = None,
    model_id: str | None = None,
    extra_percentiles: dict[str, float] | None = None,
    metadata: dict[str, str] | None = None,
    window: tuple[float, float] | None = None,
) -> PointResult:
    """Assemble the result of one point (the simulator's offline estimate calls this too,
    with its records in columns; those carry no per-chunk detail). `window`: the measured
    requests' first send and last finish in Unix seconds (default: started_at, finished_at)."""
    start_unix, end_unix = window or (started_at.timestamp(), finished_at.timestamp())
    samples = RequestSamples.of(
        records if isinstance(records, RecordColumns) else RecordColumns.from_records(records)
    )
    if isinstance(records, RecordColumns):
        if client.detail:
            raise ValueError("detail output needs the requests' records, not their columns")
        input_lens = records.input_tokens[records.ok].tolist()
        output_lens = records.output_tokens[records.ok].tolist()
        examples = list(records.failure_examples)
        records = []
    else:
        ok = [r for r in records if r.ok]
        input_lens = [
            r.input_tokens if r.input_tokens is not None else r.intended_input_tokens for r in ok
        ]
        output_lens = [r.output_tokens for r in ok]
        examples = list(dict.fromkeys(f"{r.failure}: {r.error}" for r in records if not r.ok))[:5]
    sa: dict[str, Any] = {
        "date": started_at.strftime("%Y%m%d-%H%M%S"),
        "backend": backend,
        "model_id": model_id or endpoint.model,
        # sa-bench's default: the model's own tokenizer when none is given
        "tokenizer_id": tokenizer_id or model_id or endpoint.model,
        "best_of": 1,
        "num_prompts": load.num_prompts,
        "request_rate": load.request_rate if load.request_rate is not None else "inf",
        "burstiness": load.burstiness,
        "max_concurrency": load.concurrency,
        "duration": metrics.duration_s,
        "benchmark_start_time_unix": start_unix,
        "benchmark_end_time_unix": end_unix,
        "completed": metrics.completed,
        "failed": metrics.failed,
        "total_input_tokens": metrics.total_input_tokens,
        "total_output_tokens": metrics.total_output_tokens,
        "request_throughput": metrics.request_throughput,
        "request_goodput": metrics.goodput,
        "output_throughput": metrics.output_throughput,
        "total_token_throughput": metrics.total_token_throughput,
        **_sa_stats(metrics),
        "input_lens": input_lens,
        "output_lens": output_lens,
    }
    if client.detail:
        ok = [r for r in records if r.ok]
        sa["ttfts"] = [r.ttft for r in ok]
        sa["itls"] = [
            [b - a for a, b in zip(r.chunk_times, r.chunk_times[1:], strict=False)] for r in ok
        ]
        sa["generated_texts"] = [r.generated_text or "" for r in ok]
        sa["errors"] = [r.error or "" for r in records if not r.ok]
    block = InferbenchBlock(
        complete=complete,
        incomplete_reason=incomplete_reason,
        gate_failure=gate_failure,
        failed=metrics.failed,
        failures=metrics.failures,
        failure_examples=examples,
        lengths=metrics.lengths,
        queue_ms=metrics.queue_ms,
        itl_per_token_ms=metrics.itl_per_token_ms,
        interactivity=metrics.interactivity,
        slo=metrics.slo,
        extra_percentiles={
            k: v
            for k, v in (extra_percentiles or {}).items()
            if k not in SaBenchFields.field_keys()
        },
        metadata=metadata or {},
        good_requests=metrics.good_requests,
        goodput=metrics.goodput,
        concurrency_requested=load.concurrency,
        in_flight=metrics.in_flight,
        achieved_request_rate=metrics.achieved_request_rate,
        warmups=load.warmups,
        endpoint=endpoint,
        workload=workload,
        load=load,
        request=request,
        client=client,
        started_at=started_at.isoformat(),
        finished_at=finished_at.isoformat(),
        samples=samples,
    )
    return PointResult(sa=SaBenchFields.model_validate(sa), inferbench=block)


def write_detail_jsonl(path: Path, records: list[RequestRecord]) -> None:
    """One JSON line per request (failures included), times relative to the request's send."""
    lines = []
    for r in sorted(records, key=lambda rec: rec.sent):
        lines.append(
            orjson.dumps(
                {
                    "index": r.index,
                    "worker": r.worker,
                    "ok": r.ok,
                    "failure": r.failure.value if r.failure else None,
                    "error": r.error,
                    "queue_ms": r.queue_time * 1e3,
                    "ttft_ms": r.ttft * 1e3 if r.ttft is not None else None,
                    "e2el_ms": r.e2el * 1e3 if r.e2el is not None else None,
                    "tpot_ms": r.tpot * 1e3 if r.tpot is not None else None,
                    "input_tokens": r.input_tokens,
                    "intended_input_tokens": r.intended_input_tokens,
                    "output_tokens": r.output_tokens,
                    "intended_output_tokens": r.intended_output_tokens,
                    "chunk_ms": [(t - r.sent) * 1e3 for t in r.chunk_times],
                    "chunk_tokens": r.chunk_tokens,
                }
            )
        )
    atomic_write_bytes(Path(path), b"\n".join(lines) + (b"\n" if lines else b""))
