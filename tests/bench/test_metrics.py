"""sa-bench field names and values, and inferbench's own fields, against their definitions."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from inferbench.bench.metrics import Slo, achieved_request_rate, summarize
from inferbench.bench.records import FailureKind, RequestRecord
from inferbench.bench.result import EndpointInfo, build_point_result
from inferbench.bench.schedule import LoadPoint, arrival_offsets
from inferbench.bench.settings import ApiKind, ClientOptions, RequestOptions
from inferbench.bench.workload import RandomWorkload

SA_FIELDS = [
    "date",
    "backend",
    "model_id",
    "tokenizer_id",
    "num_prompts",
    "request_rate",
    "burstiness",
    "max_concurrency",
    "duration",
    "completed",
    "total_input_tokens",
    "total_output_tokens",
    "request_throughput",
    "output_throughput",
    "total_token_throughput",
    "input_lens",
    "output_lens",
] + [
    f"{s}_{m}_ms"
    for m in ("ttft", "tpot", "itl", "e2el")
    for s in ("mean", "median", "std", "p90", "p99", "p99.9")
]


def _records() -> list[RequestRecord]:
    rng = np.random.default_rng(3)
    records = []
    for i in range(40):
        sent = i * 0.1
        n_chunks = int(rng.integers(1, 12))
        gaps = rng.uniform(0.005, 0.05, size=n_chunks - 1)
        first = sent + rng.uniform(0.05, 0.3)
        times = [first, *(first + np.cumsum(gaps)).tolist()]
        tokens = [1] + rng.integers(1, 3, size=n_chunks - 1).tolist()
        records.append(
            RequestRecord(
                index=i,
                scheduled=sent - 0.001 * (i % 3),
                sent=sent,
                intended_input_tokens=100,
                intended_output_tokens=sum(tokens),
                ok=True,
                chunk_times=times,
                chunk_tokens=tokens,
                input_tokens=100 + i % 2,
                output_tokens=sum(tokens),
                done=times[-1] + 0.001,
                per_chunk_usage=True,
            )
        )
    # failures: counted by category, never in the latency statistics
    for i, kind in enumerate([FailureKind.TIMEOUT, FailureKind.HTTP_STATUS]):
        records.append(RequestRecord(40 + i, 4.0, 4.0, 100, 8, failure=kind, error="x", done=4.5))
    return records


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values) * 1000.0, q))


def test_sa_bench_fields_match_their_definitions() -> None:
    records = _records()
    ok = [r for r in records if r.ok]
    duration = 5.0
    metrics = summarize(records, duration, slo=Slo(ttft_ms=200.0))
    point = LoadPoint(concurrency=8, num_prompts=42)
    result = build_point_result(
        records=records,
        metrics=metrics,
        endpoint=EndpointInfo(base_url="http://127.0.0.1:1", model="m", api=ApiKind.COMPLETIONS),
        workload=RandomWorkload(isl=100, osl=8),
        load=point,
        request=RequestOptions(),
        client=ClientOptions(),
        started_at=datetime(2026, 12, 2, 12, 0, 0, tzinfo=UTC),
        finished_at=datetime(2026, 12, 2, 12, 0, 5, tzinfo=UTC),
    )
    top = result.sa.model_dump(by_alias=True)
    assert set(SA_FIELDS) <= set(top)
    sa = result.sa
    ttft = [r.chunk_times[0] - r.sent for r in ok]
    e2el = [r.chunk_times[-1] - r.sent for r in ok]
    tpot = [
        (r.chunk_times[-1] - r.chunk_times[0]) / (r.output_tokens - 1)
        for r in ok
        if r.output_tokens > 1
    ]
    itl = [b - a for r in ok for a, b in zip(r.chunk_times, r.chunk_times[1:], strict=False)]
    n_in, n_out = sum(r.input_tokens or 0 for r in ok), sum(r.output_tokens for r in ok)
    assert sa.completed == 40 and sa.num_prompts == 42 and sa.max_concurrency == 8
    assert sa.request_rate == "inf" and sa.burstiness == 1.0 and sa.date == "20261202-120000"
    assert sa.duration == duration
    assert sa.total_input_tokens == n_in and sa.total_output_tokens == n_out
    assert sa.request_throughput == pytest.approx(40 / duration)
    assert sa.output_throughput == pytest.approx(n_out / duration)
    assert sa.total_token_throughput == pytest.approx((n_in + n_out) / duration)
    for name, values in (("ttft", ttft), ("tpot", tpot), ("itl", itl), ("e2el", e2el)):
        assert top[f"mean_{name}_ms"] == pytest.approx(np.mean(values) * 1000)
        assert top[f"median_{name}_ms"] == pytest.approx(np.median(values) * 1000)
        assert top[f"std_{name}_ms"] == pytest.approx(np.std(values) * 1000)
        for q in (90, 99, 99.9):
            assert top[f"p{q:g}_{name}_ms"] == pytest.approx(_pct(values, q))
    assert sa.input_lens == [r.input_tokens for r in ok]
    assert sa.output_lens == [r.output_tokens for r in ok]

    block = result.inferbench
    assert block.failed == 2 and block.failures["timeout"] == 1
    assert block.failures["http_status"] == 1 and block.failures["connect"] == 0
    assert block.lengths.nominal_mean_input == 100
    assert block.lengths.achieved_mean_input == pytest.approx(n_in / 40)
    assert block.lengths.achieved_mean_output == pytest.approx(n_out / 40)
    inter = [1.0 / t for t in tpot]
    assert block.interactivity.median == pytest.approx(np.median(inter))
    assert block.interactivity.p10 == pytest.approx(np.percentile(inter, 10))
    assert block.good_requests == sum(1 for t in ttft if t * 1000 <= 200.0)
    assert block.goodput == pytest.approx(block.good_requests / duration)
    queue = [r.sent - r.scheduled for r in records]
    assert block.queue_ms.mean == pytest.approx(np.mean(queue) * 1000)
    # per-token ITL: each chunk gap spread over the tokens that chunk carried
    per_token = [
        (b - a) / k
        for r in ok
        for a, b, k in zip(r.chunk_times, r.chunk_times[1:], r.chunk_tokens[1:], strict=False)
        for _ in range(k)
    ]
    assert block.itl_per_token_ms.mean == pytest.approx(np.mean(per_token) * 1000)
    assert block.achieved_request_rate == pytest.approx(41 / 4.0)


def test_single_token_outputs_have_no_tpot() -> None:
    rec = RequestRecord(0, 0.0, 0.0, 4, 1, ok=True, chunk_times=[0.2], chunk_tokens=[1])
    rec.output_tokens = 1
    metrics = summarize([rec], 1.0)
    assert metrics.tpot_ms.count == 0 and metrics.ttft_ms.mean == pytest.approx(200.0)
    assert metrics.interactivity.median == 0.0


def test_arrivals_hit_the_rate_exactly_and_keep_their_shape() -> None:
    for rate in (50.0, 500.0):
        offsets = arrival_offsets(1000, rate, 1.0, seed=1)
        assert offsets[0] == 0.0 and np.all(np.diff(offsets) >= 0)
        assert (len(offsets) - 1) / offsets[-1] == pytest.approx(rate)
        gaps = np.diff(offsets)
        assert np.std(gaps) / np.mean(gaps) == pytest.approx(1.0, abs=0.1)  # exponential
    bursty = np.diff(arrival_offsets(2000, 100.0, 0.25, seed=1))
    assert np.std(bursty) / np.mean(bursty) == pytest.approx(2.0, abs=0.25)  # gamma k=1/4
    assert np.array_equal(arrival_offsets(10, 5.0, 1.0, 3), arrival_offsets(10, 5.0, 1.0, 3))


def test_achieved_rate_needs_two_sends() -> None:
    assert achieved_request_rate([]) is None
    assert achieved_request_rate([RequestRecord(0, 0.0, 1.0, 1, 1)]) is None


def test_stats_of_counts_is_stats_of_the_repeated_values() -> None:
    from inferbench.bench.metrics import stats_of, stats_of_counts

    rng = np.random.default_rng(5)
    for n in [*range(1, 40), 448, 5000]:
        values = np.round(rng.random(n) * 50, 1)  # ties, as pooled step gaps have
        counts = rng.integers(0, 5, n)
        counts[0] = max(counts[0], 1)
        want = stats_of(np.repeat(values, counts), 1e3)
        got = stats_of_counts(values, counts, 1e3)
        assert (got.count, got.median, got.p90, got.p99, got.p99_9) == (
            want.count,
            want.median,
            want.p90,
            want.p99,
            want.p99_9,
        )
        assert got.mean == pytest.approx(want.mean, rel=1e-12)
        assert got.std == pytest.approx(want.std, rel=1e-9, abs=1e-9)
    assert stats_of_counts(np.array([1.0]), np.array([0])) == stats_of([])
