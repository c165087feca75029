from pathlib import Path

import pytest

from inferbench.config.master import load_masters
from inferbench.core.errors import InputError
from inferbench.core.job import Job
from inferbench.matrix.expand import expand_masters
from inferbench.matrix.filters import EvalMode, SweepFilters, select_keys

from .masters import CONTEXT, write_masters


def _sweep(tmp_path: Path, **filters: object) -> list[Job]:
    return expand_masters(write_masters(tmp_path), SweepFilters(**filters), CONTEXT)  # type: ignore[arg-type]


def test_full_sweep_counts_and_kinds(tmp_path: Path) -> None:
    jobs = _sweep(tmp_path)
    by_key: dict[str, list[Job]] = {}
    for job in jobs:
        by_key.setdefault(job.config_key, []).append(job)
    # 1k1k 4..100 -> 6; 8k1k 4..64 -> 5; list [16, 128] -> 2
    assert len(by_key["dsr1-fp8-h200-vllm"]) == 13
    assert len(by_key["dsr1-fp4-b200-sglang"]) == 2
    assert [j.concurrencies for j in by_key["minimaxm3-fp4-b200-dynamo-vllm"]] == [
        (2048,),
        (8, 64, 512),
    ]
    assert len(by_key["gptoss-fp4-gb300-agentic"]) == 3


def test_agentic_multinode_one_job_per_concurrency(tmp_path: Path) -> None:
    jobs = _sweep(tmp_path, config_keys=("kimik3-*",))
    assert [j.concurrencies for j in jobs] == [(16,), (64,)]
    assert [j.exp_name for j in jobs] == [
        "kimik3_p1x2ep2dpa_d1x8ep8dpa_conc16_kvdram-lmcache",
        "kimik3_p1x2ep2dpa_d1x8ep8dpa_conc64_kvdram-lmcache",
    ]
    assert jobs[0].fingerprint == jobs[1].fingerprint
    # the prefill replica (2 of 4 GPUs) sizes the DRAM budget
    assert jobs[0].total_cpu_dram_gb == int(1_000_000 * 1024 * 1024 * 2 / 4 / 1e9)
    only = _sweep(tmp_path, config_keys=("kimik3-*",), evals=EvalMode.ONLY)
    assert [(j.concurrencies, j.eval_conc) for j in only] == [((64,), 64)]


def test_single_node_fields(tmp_path: Path) -> None:
    job = _sweep(tmp_path, config_keys=("dsr1-fp8-h200-vllm",), seq_lens=((1024, 1024),))[0]
    assert (job.tp, job.pp, job.ep, job.dp_attn, job.dcp_size, job.pcp_size) == (
        8,
        1,
        1,
        False,
        1,
        1,
    )
    assert job.max_model_len == 1024 + 1024 + 256
    assert job.exp_name == "dsr1_1k1k"
    assert job.conc == 4 and job.scenario == "fixed-seq-len"


def test_exp_name_for_1k8k_and_router(tmp_path: Path) -> None:
    jobs = _sweep(tmp_path, config_keys=("dsr1-fp4-b200-sglang",))
    # InferenceX's generator names only 1k1k and 8k1k since it dropped 1k8k (2026-03-27)
    assert {j.exp_name for j in jobs} == {"dsr1_1024_8192"}
    assert jobs[0].router is not None and jobs[0].router.name == "sglang-router"
    assert jobs[0].spec_decoding == "mtp"


def test_multinode_job_carries_blocks_and_resolved_settings(tmp_path: Path) -> None:
    job = _sweep(tmp_path, node_type="multi-node")[0]
    assert job.is_multinode and job.disagg and job.kv_p2p_transfer == "nixl"
    assert job.prefill is not None and job.prefill.num_worker == 2 and job.prefill.gpus == 4
    assert job.decode is not None and job.decode.additional_settings == ("DECODE_NODES=1",)
    settings = job.resolved_settings
    assert settings is not None
    assert settings.config_file == (
        "benchmarks/multi_node/srt-slurm-recipes/vllm/minimax-m3/b200-fp4/8k1k/2p1d-dep2-dep8-8k1k.yaml"
    )
    assert settings.env["DECODE_NODES"] == "1"
    second = _sweep(tmp_path, node_type="multi-node")[1]
    assert second.resolved_settings is not None
    assert second.resolved_settings.config_selector == "override_a"


def test_agentic_jobs(tmp_path: Path) -> None:
    jobs = _sweep(tmp_path, config_keys=("gptoss-*",))
    assert [j.exp_name for j in jobs] == [
        "gptoss_tp2_conc4_kvdram-lmcache",
        "gptoss_tp2_conc32_kvdram-lmcache",
        "gptoss_tp1_conc8_kvnone_spec-mtp",
    ]
    dram = jobs[0]
    assert dram.is_agentic and dram.duration == 3600 and dram.isl is None
    # 1,000,000 MiB * 1 MiB * utilization 0.5 * 2/4 GPUs / 1e9
    assert dram.total_cpu_dram_gb == int(1_000_000 * 1024 * 1024 * 0.5 * 2 / 4 / 1e9)
    assert jobs[2].total_cpu_dram_gb == 0
    assert dram.kv_offload_backend is not None and dram.kv_offload_backend.name == "lmcache"


def test_filters(tmp_path: Path) -> None:
    assert {j.precision for j in _sweep(tmp_path, precisions=("fp4",))} == {"fp4"}
    assert {j.framework for j in _sweep(tmp_path, frameworks=("sglang",))} == {"sglang"}
    assert {j.runner for j in _sweep(tmp_path, runner_types=("h200",))} == {"h200"}
    assert {j.model_prefix for j in _sweep(tmp_path, model_prefixes=("dsr1",))} == {"dsr1"}
    assert all(not j.is_multinode for j in _sweep(tmp_path, node_type="single-node"))
    assert all(j.is_multinode for j in _sweep(tmp_path, node_type="multi-node"))
    seq = _sweep(tmp_path, seq_lens=((8192, 1024),))
    assert seq and all((j.isl, j.osl) == (8192, 1024) for j in seq if not j.is_agentic)
    assert any(j.is_agentic for j in seq)  # agentic jobs have no lengths: kept, as InferenceX
    assert all(j.tp is None or j.tp <= 4 for j in _sweep(tmp_path, max_tp=4))
    agentic = _sweep(tmp_path, scenario_types=("agentic-coding",))
    assert agentic and all(j.is_agentic for j in agentic)


def test_conc_filters_apply_to_every_kind(tmp_path: Path) -> None:
    jobs = _sweep(tmp_path, min_conc=16, max_conc=100)
    assert all(16 <= c <= 100 for j in jobs for c in j.concurrencies)
    capped = _sweep(tmp_path, config_keys=("minimaxm3-*",), max_conc=4)
    assert [j.concurrencies for j in capped] == [(4,), (4,)]


def test_config_key_globs(tmp_path: Path) -> None:
    keys = {j.config_key for j in _sweep(tmp_path, config_keys=("dsr1-fp?-*",))}
    assert keys == {"dsr1-fp8-h200-vllm", "dsr1-fp4-b200-sglang"}
    with pytest.raises(InputError, match="matches no master entry"):
        _sweep(tmp_path, config_keys=("nothing-*",))
    with pytest.raises(InputError, match="not in any master file"):
        _sweep(tmp_path, config_keys=("dsr1-fp8-h200",))


def test_unknown_runner_type_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown runner type"):
        _sweep(tmp_path, runner_types=("h300",))


def test_default_evals_on_8k1k(tmp_path: Path) -> None:
    jobs = _sweep(tmp_path)
    marked = [(j.config_key, j.concurrencies, j.eval_conc) for j in jobs if j.run_eval]
    # 8k1k single-node: eligible {16, 32, 64} (range) and, dp-attn being its own group, {16, 128}
    assert ("dsr1-fp8-h200-vllm", (32,), None) in marked
    assert ("dsr1-fp8-h200-vllm", (64,), None) in marked
    assert ("dsr1-fp8-h200-vllm", (128,), None) in marked
    assert ("minimaxm3-fp4-b200-dynamo-vllm", (2048,), 2048) in marked
    assert ("minimaxm3-fp4-b200-dynamo-vllm", (8, 64, 512), 512) in marked
    assert not any(j.run_eval for j in jobs if j.isl == 1024)


def test_eval_modes(tmp_path: Path) -> None:
    assert not any(j.run_eval for j in _sweep(tmp_path, evals=EvalMode.NONE))
    only = _sweep(tmp_path, evals=EvalMode.ONLY)
    assert only and all(j.eval_only for j in only)
    assert any(j.is_agentic for j in only)
    every = _sweep(tmp_path, evals=EvalMode.ALL)
    assert len([j for j in every if not j.is_agentic and not j.is_multinode]) == 7


def test_runs_are_identical(tmp_path: Path) -> None:
    first = [j.to_wire() for j in _sweep(tmp_path)]
    second = [j.to_wire() for j in _sweep(tmp_path)]
    assert first == second


def test_expand_project_on_the_example_tree() -> None:
    from inferbench.config.project import load_project
    from inferbench.matrix.expand import expand_project

    root = Path(__file__).resolve().parents[2] / "examples"
    project = load_project(root)
    jobs = expand_project(project, SweepFilters())
    assert {j.config_key for j in jobs} == set(project.masters)
    seed = next(j for j in jobs if j.config_key == "minimaxm3-fp4-b200-dynamo-vllm")
    assert seed.resolved_settings is not None and seed.resolved_settings.config_file is not None
    assert (root / seed.resolved_settings.config_file).is_file()
    assert seed.run_eval and seed.eval_conc == 2048


def test_recipe_paths_match_the_project_resolver() -> None:
    from inferbench.config.project import load_project
    from inferbench.matrix.expand import project_context

    root = Path(__file__).resolve().parents[2] / "examples"
    project = load_project(root)
    resolve = project_context(project).resolve_recipe
    for ref in (
        "recipes/vllm/minimax-m3/b200-fp4/8k1k/2p1d-dep2-dep8-8k1k.yaml",
        "recipes/a/./b.yaml",
    ):
        expected = project.resolve_recipe(ref).path.relative_to(root.resolve()).as_posix()
        assert resolve(ref) == expected


@pytest.mark.parametrize("reference", ["recipes/../../../etc/passwd", "/etc/passwd"])
def test_recipe_reference_escaping_the_tree_is_swept_without_its_file(
    tmp_path: Path, reference: str
) -> None:
    """InferenceX's generator passes such a CONFIG_FILE on: the job is swept as written, no
    file resolved for it, and `check` reports it (IB202 config-file-outside-tree)."""
    from inferbench.config.project import load_project
    from inferbench.matrix.expand import expand_project

    write_masters(tmp_path)
    master = tmp_path / "configs" / "nvidia-master.yaml"
    master.write_text(master.read_text().replace("recipes/x.yaml", reference))
    filters = SweepFilters(node_type="multi-node", scenario_types=("fixed-seq-len",))
    jobs = expand_project(load_project(tmp_path), filters)
    written = [j.resolved_settings for j in jobs if j.resolved_settings]
    mine = [s for s in written if s.env.get("CONFIG_FILE") == f"{reference}:override_a"]
    assert mine and all(s.config_file is None for s in mine)


def test_multinode_dram_offload_without_hardware_facts_is_zero(tmp_path: Path) -> None:
    """InferenceX's generator sized no multinode offload before upstream #2170 and wrote 0;
    `check` reports the missing facts (IB154) instead of `sweep` refusing the tree."""
    from inferbench.config.project import load_project
    from inferbench.matrix.expand import expand_project

    write_masters(tmp_path)
    filters = SweepFilters(config_keys=("kimik3-fp4-gb300-dynamo-agentic",))
    jobs = expand_project(load_project(tmp_path), filters)
    assert jobs and all(j.kv_offloading == "dram" and j.total_cpu_dram_gb == 0 for j in jobs)


def test_a_mistyped_config_key_is_offered_the_most_similar_keys() -> None:
    keys = [
        "dsr1-fp4-b200-sglang",
        "dsr1-fp4-b200-trt",
        "dsr1-fp8-b200-sglang",
        "dsr1-fp8-h200-trt",
        "dsr1-fp8-h200-sglang",
        "gptoss-fp4-h100-vllm",
    ]
    with pytest.raises(InputError) as typo:
        select_keys(["dsr1-fp8-h200-sglnag"], keys)
    assert typo.value.hint is not None
    # ranked by similarity, not the first three sharing the first word in file order
    assert typo.value.hint.startswith("did you mean 'dsr1-fp8-h200-sglang', ")
    assert "dsr1-fp4-b200-trt" not in typo.value.hint
    with pytest.raises(InputError) as first_word:
        select_keys(["gtposs-fp4-h100-vllm"], keys)
    assert first_word.value.hint == "did you mean 'gptoss-fp4-h100-vllm'?"
    with pytest.raises(InputError) as nothing:
        select_keys(["llama"], keys)
    assert nothing.value.hint == "`inferbench sweep --format table` lists the keys"


OLDER_AGENTIC = """\
gptoss-fp4-b200-vllm-agentic:
  image: vllm/vllm-openai:v0.19.1
  model: openai/gpt-oss-120b
  model-prefix: gptoss
  runner: b200
  precision: fp4
  framework: vllm
  multinode: false
  scenarios:
    agentic-coding:
    - duration: 1800
      search-space:
      - { tp: 4, offloading: none, conc-list: [1, 2] }
      - { tp: 8, offloading: cpu,  conc-list: [64] }
    - search-space:
      - { tp: 8, conc-list: [4] }
"""


def test_the_older_agentic_format_sweeps_as_its_generator_wrote(tmp_path: Path) -> None:
    """InferenceX's agentic format of 2026-05-01 .. 07-02 (an entry of nvidia-master.yaml at
    upstream eb3dfa6b5): `offloading` passed on, named `_offload<x>`, the scenario's duration;
    a scenario without one gets today's default."""
    path = tmp_path / "nvidia-master.yaml"
    path.write_text(OLDER_AGENTIC)
    masters = load_masters([path])
    jobs = expand_masters(masters, SweepFilters(), CONTEXT)
    assert [(j.exp_name, j.offloading, j.kv_offloading, j.duration) for j in jobs] == [
        ("gptoss_tp4_conc1_offloadnone", "none", None, 1800),
        ("gptoss_tp4_conc2_offloadnone", "none", None, 1800),
        ("gptoss_tp8_conc64_offloadcpu", "cpu", None, 1800),
        ("gptoss_tp8_conc4_kvnone", None, "none", 3600),
    ]
    assert jobs[2].total_cpu_dram_gb == 0 and jobs[0].to_wire()["offloading"] == "none"
