"""--runner-node-filter, --max-ep and --concurrency on the expansion (InferenceX's generator
rules)."""

from dataclasses import replace
from pathlib import Path

import pytest

from inferbench.core.errors import InputError
from inferbench.core.job import Job
from inferbench.matrix.expand import expand_masters
from inferbench.matrix.filters import EvalMode, SweepFilters

from .masters import CONTEXT, write_masters

NODES = replace(
    CONTEXT,
    runner_nodes={
        "h200": ("h200-cw_00", "h200-nb_0", "h200-nb_1"),
        "b200": ("b200-nb_0",),
        "b200-multinode": ("b200-dgxc_00", "b200-dgxc_01"),
        "cluster:gb300-nv": ("gb300-nv_0", "gb300-nv_1"),
    },
)


def _sweep(tmp_path: Path, **filters: object) -> list[Job]:
    return expand_masters(write_masters(tmp_path), SweepFilters(**filters), NODES)  # type: ignore[arg-type]


def test_node_filter_repeats_single_node_jobs_per_machine_within_each_conc(
    tmp_path: Path,
) -> None:
    jobs = _sweep(
        tmp_path, config_keys=("dsr1-fp8-h200-vllm",), runner_node_filter="h200-nb",
        seq_lens=((1024, 1024),),
    )  # fmt: skip
    assert [(j.conc, j.runner) for j in jobs[:4]] == [
        (4, "h200-nb_0"), (4, "h200-nb_1"), (8, "h200-nb_0"), (8, "h200-nb_1"),
    ]  # fmt: skip
    assert len(jobs) == 2 * 6
    assert len({j.fingerprint for j in jobs}) == 2  # one curve per machine


def test_node_filter_multinode_agentic_machine_outer(tmp_path: Path) -> None:
    jobs = _sweep(tmp_path, config_keys=("kimik3-*",), runner_node_filter="gb300-nv_")
    assert [(j.runner, j.concurrencies) for j in jobs] == [
        ("gb300-nv_0", (16,)), ("gb300-nv_0", (64,)), ("gb300-nv_1", (16,)), ("gb300-nv_1", (64,)),
    ]  # fmt: skip


def test_full_sweep_drops_entries_without_a_matching_machine(tmp_path: Path) -> None:
    jobs = _sweep(tmp_path, runner_node_filter="b200-dgxc")
    assert {j.runner for j in jobs} == {"b200-dgxc_00", "b200-dgxc_01"}


def test_config_keys_keep_a_matching_label_first(tmp_path: Path) -> None:
    jobs = _sweep(tmp_path, config_keys=("dsr1-fp4-b200-sglang",), runner_node_filter="b200")
    assert [j.runner for j in jobs[:2]] == ["b200", "b200-nb_0"]
    full = _sweep(tmp_path, model_prefixes=("dsr1",), runner_node_filter="b200")
    assert "b200" not in {j.runner for j in full}  # full-sweep: machines only


def test_evals_are_marked_per_machine(tmp_path: Path) -> None:
    jobs = _sweep(
        tmp_path, config_keys=("dsr1-fp8-h200-vllm",), runner_node_filter="h200-nb",
        evals=EvalMode.ONLY,
    )  # fmt: skip
    assert {j.runner for j in jobs} == {"h200-nb_0", "h200-nb_1"}
    assert len(jobs) % 2 == 0


def test_node_filter_matching_nothing_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="matches no runner label or machine"):
        _sweep(tmp_path, runner_node_filter="mi355x")
    with pytest.raises(InputError, match="empty"):
        SweepFilters(runner_node_filter="")


def test_max_ep_caps_single_node_fixed_seq_len_entries(tmp_path: Path) -> None:
    jobs = _sweep(tmp_path, config_keys=("dsr1-fp8-h200-vllm",), seq_lens=((8192, 1024),))
    capped = _sweep(
        tmp_path, config_keys=("dsr1-fp8-h200-vllm",), seq_lens=((8192, 1024),), max_ep=2
    )
    assert len(capped) == len(jobs)  # capped, not dropped
    assert [j.ep for j in jobs] == [1, 1, 1, 1, 1, 4, 4]
    assert [j.ep for j in capped] == [1, 1, 1, 1, 1, 2, 2]
    agentic = _sweep(tmp_path, config_keys=("gptoss-*",), max_ep=1)
    assert agentic == _sweep(tmp_path, config_keys=("gptoss-*",))
    with pytest.raises(InputError, match="--max-ep"):
        SweepFilters(max_ep=0)


def test_conc_keeps_only_the_given_concurrencies(tmp_path: Path) -> None:
    jobs = _sweep(tmp_path, config_keys=("dsr1-fp8-h200-vllm", "minimaxm3-*"), conc=(8, 64))
    by_key = {(j.config_key, j.concurrencies) for j in jobs}
    assert ("minimaxm3-fp4-b200-dynamo-vllm", (8, 64)) in by_key  # a multinode list narrowed
    assert all(set(j.concurrencies) <= {8, 64} for j in jobs)
    assert not any(j.concurrencies == (2048,) for j in jobs)  # an entry with neither: dropped


def test_conc_that_no_entry_has_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="3: no selected entry runs this concurrency") as info:
        _sweep(tmp_path, config_keys=("dsr1-fp4-b200-sglang",), conc=(3, 8))
    assert info.value.hint is not None and "(8, 32)" in info.value.hint
    with pytest.raises(InputError, match="positive"):
        SweepFilters(conc=(0,))
