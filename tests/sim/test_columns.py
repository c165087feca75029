"""The estimate's columns (no per-token floats) against the records they stand for."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from inferbench.bench.metrics import summarize, summarize_columns
from inferbench.bench.records import RecordColumns
from inferbench.sim.deployment import SimDeployment
from inferbench.sim.estimate import EstimateRun, estimate
from inferbench.sim.inputs import Overrides, from_flags

from .conftest import small_deployment


def _tight_kv() -> SimDeployment:
    """Llama-3.1-8B on one H100 with a few GB of KV: requests get preempted."""
    return from_flags(
        model="meta-llama/Llama-3.1-8B-Instruct",
        gpu="h100",
        precision="bf16",
        tp=1,
        dp=1,
        pp=1,
        expert_parallel=False,
        workers=1,
        engine={
            "max-num-seqs": 64,
            "max-num-batched-tokens": 2048,
            "max-model-len": 2048,
            "gpu-memory-utilization": 0.25,
        },
        isl=1024,
        osl=256,
        concurrency=(64,),
        overrides=Overrides(),
    )


def _assert_columns_match_records(run: EstimateRun) -> None:
    cols = run.columns
    ref = RecordColumns.from_records(run.records)
    for f in dataclasses.fields(RecordColumns):
        if f.name.startswith("itl"):
            continue
        np.testing.assert_array_equal(getattr(cols, f.name), getattr(ref, f.name), f.name)
    assert ref.itl_counts is None and cols.itl_counts is not None
    pooled = np.sort(np.repeat(cols.itl, cols.itl_counts))
    np.testing.assert_array_equal(pooled, np.sort(ref.itl))  # the very same float gaps
    got = summarize_columns(cols, run.duration_s).model_dump()
    want = summarize(run.records, run.duration_s).model_dump()
    got_itl, want_itl = got.pop("itl_ms"), want.pop("itl_ms")
    assert got == want
    for key in ("mean", "std"):  # weighted sums: equal up to rounding
        assert got_itl.pop(key) == pytest.approx(want_itl.pop(key), rel=1e-12)
    assert got_itl == want_itl  # count, median and percentiles exactly


@pytest.mark.parametrize("interval", [1, 3, 4])
def test_aggregated_columns_match_records(interval: int) -> None:
    dep = small_deployment(stream_interval=interval, osl=37)
    _assert_columns_match_records(estimate(dep, 8, num_prompts=40))


def test_preempted_requests_columns_match_records() -> None:
    run = estimate(_tight_kv(), 64, num_prompts=160)
    assert run.preemptions > 0  # their tokens come in several pieces
    _assert_columns_match_records(run)


def test_disaggregated_columns_match_records(seed: SimDeployment) -> None:
    _assert_columns_match_records(estimate(seed, 64, num_prompts=96))
