"""The physics the step model must show."""

from __future__ import annotations

from inferbench.catalog import Precision, load_catalog
from inferbench.sim.perf import EfficiencyParams, Parallelism, RankBatch, StepModel


def _model(name: str = "llama-3.1-70b", gpu: str = "h100", tp: int = 8, **kw: object) -> StepModel:
    catalog = load_catalog()
    return StepModel(
        catalog.model(name),
        catalog.gpu(gpu),
        Parallelism(tp=tp, **kw),  # type: ignore[arg-type]
        precision=Precision.BF16,
        kv_precision=Precision.BF16,
        eff=EfficiencyParams(),
    )


def decode(n: int, ctx: int) -> RankBatch:
    return RankBatch(decode_seqs=n, decode_ctx_tokens=n * ctx)


def test_small_decode_batch_is_memory_bound() -> None:
    m = _model()
    batch = decode(1, 1024)
    eff = m.eff
    flops = 2 * m.model.active_params_b * 1e9 / m.par.tp
    compute_s = flops / (m.gpu.flops(Precision.BF16) * eff.gemm_efficiency)
    memory_s = m.weight_bytes_per_gpu / (m.gpu.hbm_tbps * 1e12 * eff.memory_efficiency)
    assert memory_s > 20 * compute_s
    step = m.step_time([batch])
    assert step >= memory_s  # at least the weight read


def test_decode_step_grows_with_batch_and_context() -> None:
    m = _model()
    times = [m.step_time([decode(n, 2048)]) for n in (1, 8, 64, 256)]
    assert times == sorted(times) and times[-1] > 1.5 * times[0]
    by_ctx = [m.step_time([decode(32, c)]) for c in (512, 4096, 32768)]
    assert by_ctx == sorted(by_ctx) and by_ctx[-1] > 1.5 * by_ctx[0]


def test_prefill_grows_with_tokens() -> None:
    m = _model()
    times = [
        m.step_time([RankBatch(prefill_tokens=t, prefill_attention_ctx=t * t / 2)])
        for t in (512, 2048, 8192)
    ]
    assert times[0] < times[1] < times[2]
    assert times[2] > 3 * times[1] * 0.9  # compute bound: close to linear or worse


def test_more_tp_lowers_step_time_but_adds_communication() -> None:
    batch = RankBatch(prefill_tokens=4096, prefill_attention_ctx=4096 * 2048.0)
    t2, t8 = _model(tp=2), _model(tp=8)
    assert t8.step_time([batch]) < t2.step_time([batch])
    assert t8.comm_time(4096) > t2.comm_time(4096) > 0
    assert _model(tp=1, gpu="h200").comm_time(4096) == 0


def test_expert_parallel_adds_all_to_all_and_splits_experts() -> None:
    ep = _model("qwen3-235b-a22b", "b200", tp=1, dp=8, expert_parallel=True)
    assert ep.comm_time(256) > 0
    assert ep.expert_weight_bytes * 8 == ep.model.expert_params * 2.0


def test_kv_capacity_shrinks_with_weights_and_utilisation() -> None:
    m = _model()
    assert m.kv_capacity_tokens(0.9) > m.kv_capacity_tokens(0.6) > 0
    assert _model(tp=4).kv_capacity_tokens(0.9) < m.kv_capacity_tokens(0.9)
