from __future__ import annotations

import pytest
from results_fixtures import disagg_job

from inferbench.results.derived import (
    PowerSample,
    energy_per_token,
    interactivity_from_tpot_stats,
    interactivity_from_tpots,
    per_gpu_throughput,
    request_tpots_ms,
)
from inferbench.results.identity import identity_from_job
from inferbench.results.record import RecordStats


def single(**kw: object) -> dict[str, object]:
    job = {
        "model-prefix": "dsr1",
        "precision": "fp8",
        "framework": "vllm",
        "runner": "h200",
        "isl": 1024,
        "osl": 1024,
        "conc": 8,
        "tp": 8,
    }
    job.update(kw)
    return job


def test_single_node_throughput_divides_by_tp_pp_pcp() -> None:
    ident = identity_from_job(single(tp=4, pp=2, **{"pcp-size": 1}))
    t = per_gpu_throughput(ident, total_tps=800.0, output_tps=400.0, input_tps=400.0)
    assert ident.total_gpus == 8
    assert t.total_per_gpu == 100.0
    assert t.output_per_decode_gpu is None


def test_both_dep_spellings_count_the_same_gpus() -> None:
    a = identity_from_job(single(tp=8, ep=8, **{"dp-attn": True}))
    b = identity_from_job(single(tp=1, ep=8, **{"dp-attn": True}))
    assert a.total_gpus == b.total_gpus == 8
    assert (a.pools[0].dp, a.pools[0].ep) == (b.pools[0].dp, b.pools[0].ep) == (8, 8)
    assert a.pools[0].layout_note != b.pools[0].layout_note  # says which it assumed
    # the stored notes (part of the identity) keep their text
    assert a.pools[0].layout_note == "DEP written as tp=N ep=N"
    assert b.pools[0].layout_note == "DEP written as tp=1 ep=N"
    tep = identity_from_job(single(tp=8, ep=8))
    assert (tep.pools[0].tp, tep.pools[0].dp, tep.pools[0].layout_note) == (8, 1, None)


def test_one_rank_dep_follows_the_config_layer() -> None:
    # config.layout reads tp=1 ep=1 dp-attn as the tp-is-GPUs spelling: one GPU, DP1
    pool = identity_from_job(single(tp=1, ep=1, **{"dp-attn": True})).pools[0]
    assert (pool.gpus, pool.tp, pool.dp, pool.ep, pool.dp_attn) == (1, 1, 1, 1, True)
    assert pool.layout_note == "DEP written as tp=N ep=N"


@pytest.mark.parametrize(
    "image, stored",
    [
        ("lmsysorg/sglang:v0.5.0", "docker.io/lmsysorg/sglang:v0.5.0"),
        ("docker.io/LMSysOrg/sglang:v0.5.0", "docker.io/lmsysorg/sglang:v0.5.0"),
        ("nvcr.io#nvidia/sglang:25.01", "nvcr.io/nvidia/sglang:25.01"),
        ("ubuntu", "docker.io/library/ubuntu"),
        ("ubuntu:latest", "docker.io/library/ubuntu:latest"),
        (" /shared/images/SGLang.sqsh ", "/shared/images/SGLang.sqsh"),  # a path, as written
    ],
)
def test_images_are_stored_in_the_config_layers_form(image: str, stored: str) -> None:
    assert identity_from_job(single(image=image)).image == stored


def test_disaggregated_throughput_per_pool() -> None:
    ident = identity_from_job(disagg_job(), concurrency=64)
    # 1 prefill worker x 4 GPUs, 2 decode workers x 8 GPUs
    assert ident.pool("prefill").gpus == 4 and ident.pool("decode").gpus == 16
    t = per_gpu_throughput(ident, total_tps=2000.0, output_tps=800.0, input_tps=1200.0)
    assert t.total_per_gpu == pytest.approx(2000.0 / 20)
    assert t.output_per_decode_gpu == pytest.approx(800.0 / 16)
    assert t.input_per_prefill_gpu == pytest.approx(1200.0 / 4)


def test_aggregated_multinode_counts_only_prefill_pool() -> None:
    job = disagg_job()
    job["disagg"] = False
    job["decode"] = {"num-worker": 0, "tp": 8, "ep": 8, "dp-attn": True}
    ident = identity_from_job(job, concurrency=64)
    assert ident.total_gpus == 4 and not ident.disagg


def test_interactivity_percentiles_come_from_per_request_distribution() -> None:
    tpots = [10.0] * 90 + [100.0] * 10  # 90 fast requests, 10 slow
    inter = interactivity_from_tpots(tpots)
    assert inter is not None and inter.source == "per_request"
    assert inter.median == pytest.approx(100.0)
    assert inter.p99 == pytest.approx(100.0)
    assert inter.p1 == pytest.approx(10.0)
    # The InferenceX shortcut 1000 / p99 TPOT is the *1st* percentile, not the 99th.
    assert inter.p1 == pytest.approx(1000.0 / 100.0)
    assert inter.mean == pytest.approx(0.9 * 100 + 0.1 * 10)


def test_fallback_maps_tpot_percentiles_to_complementary_interactivity() -> None:
    inter = interactivity_from_tpot_stats(RecordStats(median=20.0, p90=25.0, p99=50.0))
    assert inter is not None and inter.source == "tpot_percentiles"
    assert inter.median == 50.0 and inter.p10 == 40.0 and inter.p1 == 20.0
    assert inter.p99 is None and inter.mean is None


def test_request_tpots_from_itls_ignore_chunking() -> None:
    # 5 tokens in 2 chunks (gaps 30 ms, 10 ms) or 4 gaps of 10 ms: same E2EL - TTFT.
    assert request_tpots_ms([[30.0, 10.0], [10.0] * 4], [5, 5]) == [10.0, 10.0]
    assert request_tpots_ms([[], [5.0]], [1, 1]) == []


def power(gpus: int, t0: float, t1: float, step: float, watts: float) -> list[PowerSample]:
    out = []
    t = t0
    while t <= t1 + 1e-9:
        out += [PowerSample(t=t, gpu=str(g), watts=watts) for g in range(gpus)]
        t += step
    return out


def test_energy_trapezoid_over_window() -> None:
    e = energy_per_token(
        power(2, 999.0, 1011.0, 1.0, 500.0),
        window=(1000.0, 1010.0),
        output_tokens=2000,
        total_tokens=6000,
    )
    assert e.valid and e.reasons == ()
    assert e.joules == pytest.approx(2 * 500.0 * 10.0)
    assert e.joules_per_output_token == pytest.approx(5.0)
    assert e.joules_per_total_token == pytest.approx(10000.0 / 6000)


def test_energy_trapezoid_integrates_a_ramp_exactly() -> None:
    samples = [PowerSample(t=1000.0 + k, gpu="0", watts=100.0 + 10 * k) for k in range(11)]
    e = energy_per_token(samples, window=(1000.0, 1010.0), output_tokens=1, total_tokens=1)
    assert e.joules == pytest.approx((100 + 200) / 2 * 10)


def test_energy_invalid_with_reasons() -> None:
    gap = [s for s in power(1, 1000.0, 1010.0, 1.0, 300.0) if not 1003 <= s.t <= 1008]
    e = energy_per_token(gap, window=(1000.0, 1010.0), output_tokens=10, total_tokens=20)
    assert not e.valid and any("gap" in r for r in e.reasons)
    short = power(1, 1000.0, 1004.0, 1.0, 300.0)
    e = energy_per_token(short, window=(1000.0, 1010.0), output_tokens=10, total_tokens=20)
    assert not e.valid and any("cover" in r for r in e.reasons)
    few = power(1, 1000.0, 1010.0, 10.0, 300.0)
    e = energy_per_token(few, window=(1000.0, 1010.0), output_tokens=10, total_tokens=20)
    assert any("too few" in r for r in e.reasons)
    none = energy_per_token([], window=(1000.0, 1010.0), output_tokens=10, total_tokens=20)
    assert not none.valid and none.joules is None
