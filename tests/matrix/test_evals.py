from inferbench.core.job import Job
from inferbench.matrix.evals import apply_eval_mode, mark_all, mark_default
from inferbench.matrix.filters import EvalMode

from .jobs import agentic_single, multi, single, worker


def _evals(jobs: list[Job]) -> list[int]:
    return [j.concurrencies[0] for j in jobs if j.run_eval]


def test_single_node_highest_and_upper_median_of_eligible() -> None:
    jobs = [single(c) for c in (4, 8, 16, 32, 64, 128)]
    # eligible: 16, 32, 64, 128 -> median index 2 -> 64, highest 128
    assert _evals(mark_default(jobs)) == [64, 128]


def test_single_node_odd_count_median() -> None:
    jobs = [single(c) for c in (16, 32, 64)]
    assert _evals(mark_default(jobs)) == [32, 64]


def test_single_node_marks_all_tps_at_target_concs() -> None:
    jobs = [single(c, tp=tp) for tp in (4, 8) for c in (16, 32, 64)]
    marked = mark_default(jobs)
    picked = [(j.tp, j.concurrencies[0]) for j in marked if j.run_eval]
    assert picked == [(4, 32), (4, 64), (8, 32), (8, 64)]


def test_two_concurrencies_upper_median_is_the_highest() -> None:
    assert _evals(mark_default([single(16), single(64)])) == [64]


def test_groups_split_by_spec_decoding_and_dp_attn() -> None:
    jobs = [single(c) for c in (16, 32)] + [single(c, spec_decoding="mtp") for c in (16, 32)]
    jobs += [single(c, dp_attn=True, ep=8) for c in (16, 32)]
    marked = mark_default(jobs)
    assert [j.concurrencies[0] for j in marked if j.run_eval] == [32, 32, 32]


def test_only_8k1k_and_conc_at_least_16() -> None:
    jobs = [
        single(c, isl=1024, osl=1024, max_model_len=2304, exp_name="dsr1_1k1k") for c in (16, 64)
    ]
    jobs += [single(c) for c in (4, 8)]
    assert not any(j.run_eval for j in mark_default(jobs))


def test_multinode_highest_eligible_conc_per_topology() -> None:
    a = multi((8, 64, 512))
    b = multi((2048,), decode=worker(2, 8))
    low = multi((4, 8), prefill=worker(1, 4))
    marked = mark_default([a, b, low])
    assert [j.run_eval for j in marked] == [True, True, False]
    assert marked[0].eval_conc == 512 and marked[1].eval_conc == 2048


def test_multinode_same_topology_split_in_two_entries_marks_one() -> None:
    marked = mark_default([multi((16, 32)), multi((64,))])
    assert [j.run_eval for j in marked] == [False, True]


def test_agentic_not_marked_by_default() -> None:
    assert not any(j.run_eval for j in mark_default([agentic_single(c) for c in (16, 64)]))


def test_evals_only_keeps_eval_rows_and_includes_agentic() -> None:
    jobs = [single(c) for c in (4, 16, 32, 64)] + [agentic_single(c) for c in (8, 32)]
    out = apply_eval_mode(jobs, EvalMode.ONLY)
    assert all(j.eval_only and j.run_eval for j in out)
    picked = [(j.is_agentic, j.concurrencies[0]) for j in out]
    assert picked == [(False, 32), (False, 64), (True, 32)]


def test_no_evals_marks_nothing() -> None:
    jobs = [single(c) for c in (16, 64)]
    assert not any(j.run_eval for j in apply_eval_mode(jobs, EvalMode.NONE))


def test_all_evals_merges_multinode_topology() -> None:
    jobs = [single(c) for c in (4, 16)] + [multi((8, 16)), multi((64,))]
    jobs.append(single(4, isl=1024, osl=1024, max_model_len=2304, exp_name="dsr1_1k1k"))
    out = apply_eval_mode(jobs, EvalMode.ALL)
    assert [j.concurrencies for j in out] == [(4,), (16,), (8, 16, 64)]
    assert out[2].eval_all_concs is True and out[2].eval_conc is None
    assert all(j.eval_only for j in out)


def test_mark_all_agentic_multinode_sets_eval_conc() -> None:
    a = multi((8,), scenario="agentic-coding", isl=None, osl=None, max_model_len=None,
              kv_offloading="none", duration=3600, total_cpu_dram_gb=0)  # fmt: skip
    b = a.evolve(conc=(32,))
    out = mark_all([a, b])
    assert len(out) == 1 and out[0].concurrencies == (8, 32) and out[0].eval_conc == 32
