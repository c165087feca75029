"""Continuous batching, KV accounting, preemption and disaggregation on the virtual clock."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from inferbench.catalog import Precision, load_catalog
from inferbench.sim.admission import KvAdmission
from inferbench.sim.deployment import SimDeployment
from inferbench.sim.engine import EngineLimits, SimCluster, Worker
from inferbench.sim.estimate import estimate
from inferbench.sim.inputs import Overrides, from_recipe
from inferbench.sim.perf import EfficiencyParams, Parallelism, StepModel
from inferbench.sim.scheduler import Seq

from .conftest import SEED_RECIPE, small_deployment


def _worker(blocks: int, *, max_num_seqs: int = 64, budget: int = 2048, **policy: object) -> Worker:
    catalog = load_catalog()
    model = StepModel(
        catalog.model("llama-3.1-8b"),
        catalog.gpu("h100"),
        Parallelism(),
        precision=Precision.BF16,
        kv_precision=Precision.BF16,
        eff=EfficiencyParams(),
    )
    limits = EngineLimits(max_num_seqs=max_num_seqs, max_num_batched_tokens=budget, **policy)  # type: ignore[arg-type]
    return Worker("w0", model, limits, blocks)


def _run(cluster: SimCluster, seqs: list[Seq]) -> float:
    for seq in seqs:
        cluster.submit(seq, 0.0)
    now = 0.0
    while (due := cluster.next_time()) is not None:
        now = due
        cluster.advance(now)
    return now


def test_every_request_gets_exactly_its_tokens(small: SimDeployment) -> None:
    run = estimate(small, 8, num_prompts=24)
    assert len(run.records) == 24
    for record in run.records:
        assert record.ok and record.output_tokens == record.intended_output_tokens
        assert record.chunk_times == sorted(record.chunk_times)
        assert record.ttft is not None and record.ttft > 0


def test_chunked_prefill_splits_long_prompts() -> None:
    worker = _worker(10_000, budget=512)
    cluster = SimCluster([worker])
    seq = Seq(rid=0, prompt=2000, output=4, arrival=0.0)
    _run(cluster, [seq])
    # 2000 prompt tokens at 512 per step = 4 prefill steps, then 3 decode steps
    assert len(worker.step_times) == 4 + 3
    assert seq.first_token == worker.step_times[3]
    assert len(seq.token_times()) == 4


def test_without_chunked_prefill_a_prompt_waits_for_a_budget_that_holds_it() -> None:
    # TRT-LLM's default: a context is scheduled whole. A 900-token prompt does not fit the
    # 1024-token budget beside another 900-token one, so it waits a step (chunked: it would
    # take the 124 tokens left at once)
    worker = _worker(10_000, budget=1024, chunked_prefill=False)
    cluster = SimCluster([worker])
    first, second = (Seq(rid=i, prompt=900, output=3, arrival=0.0) for i in range(2))
    _run(cluster, [first, second])
    assert first.first_token == worker.step_times[0]
    assert second.first_token == worker.step_times[1]
    chunked = _worker(10_000, budget=1024)
    cluster = SimCluster([chunked])
    a, b = (Seq(rid=i, prompt=900, output=3, arrival=0.0) for i in range(2))
    _run(cluster, [a, b])
    assert b.first_token == chunked.step_times[1] and b.computed == 900


def _decoding_worker(**policy: object) -> tuple[Worker, SimCluster, float]:
    """A worker whose one sequence has prefilled and decodes (its step 1 is running)."""
    worker = _worker(10_000, budget=2048, **policy)
    cluster = SimCluster([worker])
    cluster.submit(Seq(rid=0, prompt=100, output=50, arrival=0.0), 0.0)
    t = worker.busy_until or 0.0
    cluster.advance(t)
    assert len(worker.step_times) == 1 and worker.busy_until is not None
    return worker, cluster, t


def test_batch_waiting_holds_new_prompts_while_others_decode() -> None:
    # TRT-LLM batch_wait_timeout_iters=5 with a token threshold of 1024: a lone 100-token
    # prompt arriving while a sequence decodes is held 5 steps (2-6), then runs in step 7
    worker, cluster, t = _decoding_worker(batch_wait_iters=5, batch_wait_tokens=1024)
    late = Seq(rid=1, prompt=100, output=3, arrival=t)
    cluster.submit(late, t)
    _run(cluster, [])
    assert late.first_token == worker.step_times[7]
    # without batch waiting it runs in the next step
    worker, cluster, t = _decoding_worker()
    late = Seq(rid=1, prompt=100, output=3, arrival=t)
    cluster.submit(late, t)
    _run(cluster, [])
    assert late.first_token == worker.step_times[2]
    # prompts that reach the token threshold together are not held
    worker, cluster, t = _decoding_worker(batch_wait_iters=5, batch_wait_tokens=1024)
    big = [Seq(rid=i, prompt=600, output=3, arrival=t) for i in (1, 2)]
    for seq in big:
        cluster.submit(seq, t)
    _run(cluster, [])
    assert big[0].first_token == big[1].first_token == worker.step_times[2]


def test_sglang_admission_holds_kv_for_the_running_outputs() -> None:
    # 100 blocks of 16 = 1,600 tokens. A decodes 1,000 tokens; B (200 + 1,000) fits the
    # blocks its prompt needs (vLLM's rule admits it at once, and preempts later), but not
    # SGLang's: its whole output plus 0.7 of A's remaining output do not fit, so B waits
    def run(**policy: object) -> tuple[Seq, Seq, Worker]:
        worker = _worker(100, **policy)
        cluster = SimCluster([worker])
        a = Seq(rid=0, prompt=200, output=1000, arrival=0.0)
        cluster.submit(a, 0.0)
        t = worker.busy_until or 0.0
        cluster.advance(t)
        b = Seq(rid=1, prompt=200, output=1000, arrival=t)
        cluster.submit(b, t)
        _run(cluster, [])
        return a, b, worker

    a, b, worker = run()
    assert b.first_token == worker.step_times[2] and b.preemptions + a.preemptions > 0
    a, b, _ = run(kv_admission=KvAdmission())
    assert a.done is not None and b.first_token is not None and b.first_token > a.done
    assert a.preemptions == b.preemptions == 0


def test_kv_exhaustion_queues_and_preempts() -> None:
    # 40 blocks of 16 tokens = 640 tokens of KV; 8 sequences of 100 + 100 cannot all fit
    worker = _worker(40)
    cluster = SimCluster([worker])
    seqs = [Seq(rid=i, prompt=100, output=100, arrival=0.0) for i in range(8)]
    _run(cluster, seqs)
    rank = worker.ranks[0]
    assert all(s.done is not None for s in seqs)
    assert rank.preemptions > 0
    assert all(len(s.token_times()) == 100 for s in seqs)
    assert rank.pool.free == rank.pool.total  # every block came back
    first = sorted(s.first_token or 0 for s in seqs)
    assert first[-1] > first[0] * 5  # later sequences waited in the queue


def test_ample_kv_never_preempts() -> None:
    worker = _worker(100_000)
    cluster = SimCluster([worker])
    seqs = [Seq(rid=i, prompt=100, output=100, arrival=0.0) for i in range(8)]
    _run(cluster, seqs)
    assert worker.ranks[0].preemptions == 0


def test_max_num_seqs_caps_the_running_batch() -> None:
    worker = _worker(100_000, max_num_seqs=2)
    cluster = SimCluster([worker])
    seqs = [Seq(rid=i, prompt=10, output=20, arrival=0.0) for i in range(6)]
    _run(cluster, seqs)
    finishes = sorted(s.done or 0 for s in seqs)
    assert finishes[2] > finishes[1] and finishes[4] > finishes[3]  # three waves


def test_more_load_raises_tpot_and_throughput() -> None:
    dep = small_deployment(isl=512, osl=128, max_num_seqs=256)
    light, heavy = estimate(dep, 1, num_prompts=4), estimate(dep, 64, num_prompts=128)
    tpot = [[r.tpot or 0 for r in run.records] for run in (light, heavy)]
    assert sum(tpot[1]) / len(tpot[1]) > sum(tpot[0]) / len(tpot[0])
    rate = [run.output_tokens / run.duration_s for run in (light, heavy)]
    assert rate[1] > 5 * rate[0]


def test_disaggregated_seed_runs_and_transfers_kv(seed: SimDeployment) -> None:
    run = estimate(seed, 64, num_prompts=96)
    assert len(run.records) == 96 and run.gpus == 12
    for record in run.records:
        assert record.output_tokens == record.intended_output_tokens
    # first token comes after prefill plus the KV transfer
    assert min(r.ttft or 0 for r in run.records) > 0.05


def test_stream_interval_groups_tokens() -> None:
    dep = small_deployment(stream_interval=4, osl=10)
    run = estimate(dep, 2, num_prompts=2)
    record = run.records[0]
    assert record.chunk_tokens[0] == 1 and sum(record.chunk_tokens) == record.output_tokens
    assert len(record.chunk_times) == len(record.chunk_tokens)


def test_pareto_keeps_only_undominated_points() -> None:
    from inferbench.sim.topologies import TopologyPoint, pareto

    def p(name: str, gpu: float, user: float) -> TopologyPoint:
        return TopologyPoint(
            topology=name,
            gpus=8,
            concurrency=1,
            total_tok_s_gpu=gpu,
            output_tok_s_gpu=gpu / 2,
            tok_s_user=user,
            ttft_p50_ms=0.0,
        )

    points = [p("a", 100, 10), p("b", 80, 30), p("c", 70, 20), p("d", 50, 40)]
    assert [x.topology for x in pareto(points)] == ["a", "b", "d"]


def test_decode_steps_run_in_one_go_give_the_same_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Decode-only steps run without the event loop: the very same token times and steps."""
    seed = from_recipe(str(SEED_RECIPE), Overrides())
    for dep, conc in ((small_deployment(), 16), (seed, 64)):
        skipped = [0]

        def counted(
            worker: Worker,
            horizon: float,
            skipped: list[int] = skipped,
            run_steps: Callable[[Worker, float], None] = Worker.run_decode_steps,
        ) -> None:
            before = len(worker.step_times)
            run_steps(worker, horizon)
            skipped[0] += len(worker.step_times) - before

        with monkeypatch.context() as patch:
            patch.setattr(Worker, "run_decode_steps", counted)
            fast = estimate(dep, conc, num_prompts=3 * conc)
        with monkeypatch.context() as patch:
            patch.setattr(SimCluster, "run_decode_steps", lambda self, quiet_until: None)
            exact = estimate(dep, conc, num_prompts=3 * conc)
        assert skipped[0] > fast.steps / 4  # most steps of these runs only decode
        assert (fast.steps, fast.duration_s) == (exact.steps, exact.duration_s)
        assert [s.token_times() for s in fast.seqs] == [s.token_times() for s in exact.seqs]
