"""srt-slurm recipes: schema, derived resources, variants, selectors, engine flags."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from inferbench.config.recipe import deep_merge, load_recipe, load_recipe_file, locate
from inferbench.core.errors import ConfigError
from inferbench.engines.flags import EngineFlags

WriteFile = Callable[[str, str], Path]

PLAIN = """\
name: r
model: {path: alias-a, container: "vllm/vllm-openai:v1", precision: fp4}
resources:
  gpu_type: b200
  gpus_per_node: 8
  prefill_nodes: 1
  decode_nodes: 1
  prefill_workers: 2
  decode_workers: 1
backend:
  type: vllm
  vllm_config:
    prefill: {tensor-parallel-size: 1, data-parallel-size: 2, enable-expert-parallel: true}
    decode:
      tensor-parallel-size: 1
      data-parallel-size: 8
      enable-expert-parallel: true
      max_model_len: 9472
      speculative-algo: EAGLE
benchmark: {type: sa-bench, isl: 8192, osl: 1024, concurrencies: "4x8x16"}
"""

OVERRIDES = """\
base:
  name: job
  model: {path: m, container: "lmsysorg/sglang:v0.5.3", precision: fp8}
  resources: {gpu_type: h100, gpus_per_node: 8, agg_nodes: 1, agg_workers: 2, gpus_per_agg: 4}
  backend:
    type: sglang
    sglang_config:
      aggregated: {tp-size: 4, mem-fraction-static: 0.8}
  benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [4, 8]}
override_lowmem:
  backend:
    sglang_config:
      aggregated: {mem-fraction-static: 0.7}
override_nomem:
  backend:
    sglang_config:
      aggregated: {mem-fraction-static: null}
zip_override_tp:
  resources: {agg_workers: [2, 1], gpus_per_agg: [4, 8]}
  backend:
    sglang_config:
      aggregated: {tp-size: [4, 8], trust-remote-code: true}
  benchmark: {concurrencies: [[4, 8], [16]]}
"""


def test_plain_recipe_and_derived_resources(write: WriteFile) -> None:
    recipe = load_recipe(write("r.yaml", PLAIN))
    res = recipe.resources
    assert res.disaggregated and res.total_nodes == 2
    assert res.gpus_per_prefill_worker == 4  # 1 node * 8 GPUs // 2 workers
    assert res.gpus_per_decode_worker == 8
    assert recipe.benchmark is not None and recipe.benchmark.concurrencies == (4, 8, 16)
    assert recipe.benchmark.req_rate == "inf" and recipe.benchmark.random_range_ratio == 0.8
    assert recipe.modes == ("prefill", "decode")
    decode = recipe.layout("decode")
    assert (decode.gpus, decode.tp, decode.dp, decode.ep) == (8, 1, 8, 8)


def test_engine_flag_spellings_and_prefixes(write: WriteFile) -> None:
    recipe = load_recipe(write("r.yaml", PLAIN))
    flags = recipe.flags("decode")
    assert flags.get("max-model-len") == 9472  # written max_model_len
    assert flags.get("speculative-algorithm") == "EAGLE"  # written speculative-algo
    assert recipe.flag_path("decode", "max-model-len") == (
        "backend",
        "vllm_config",
        "decode",
        "max_model_len",
    )
    assert locate(recipe, ("backend", "vllm_config", "decode", "max_model_len")).line == 18


def test_ambiguous_and_exact_flag_names() -> None:
    flags = EngineFlags("vllm", {"max-num": 4, "data-parallel-size": 8})
    assert flags.get("max-num-seqs") is None  # prefix of two known flags: ambiguous
    assert flags.get("data-parallel-size-local") is None  # a full flag is not an abbreviation
    assert flags.get("--Data_Parallel_Size") == 8
    sglang = EngineFlags("sglang", {"tp": 8, "enable-dp-attention": True, "dp": 8})
    assert sglang.get("tp-size") == 8 and "dp-size" in sglang


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.replace("type: vllm", "type: sglang"), "backend.vllm_config: Unknown field."),
        (lambda t: t.replace('"4x8x16"', '"4,8"'), "AxBxC"),
        (lambda t: t.replace("name: r\n", "name: r\nextra_key: 1\n"), "extra_key: Unknown field."),
        (lambda t: t.replace("gpu_type: b200", "gpu_typ: b200"), "did you mean 'gpu_type'"),
        (lambda t: t.replace("gpus_per_node: 8", "gpus_per_node: eight"), "Not a valid integer."),
        (lambda t: t.replace("name: r\n", "name: r\nenvironment: {A: 1}\n"), "Not a valid string"),
    ],
)
def test_recipe_schema_errors(write: WriteFile, change: Callable[[str], str], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_recipe(write("r.yaml", change(PLAIN)))
    assert message in err.value.render()
    assert err.value.location.line is not None


@pytest.mark.parametrize(
    "change",
    [
        # srtctl accepts these: its ResourceConfig has no cross-field checks, any benchmark
        # type loads, and a missing worker count counts as 0
        lambda t: t.replace("  gpus_per_node: 8\n", "  gpus_per_node: 8\n  agg_nodes: 1\n"),
        lambda t: t.replace("  prefill_workers: 2\n", ""),
        lambda t: t.replace("type: sa-bench", "type: bench"),
    ],
)
def test_what_srtctl_accepts_loads(write: WriteFile, change: Callable[[str], str]) -> None:
    assert load_recipe(write("r.yaml", change(PLAIN))).problems == ()


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "gpus_per_node: 8",
            "gpus_per_node: 1.5",
            "gpus_per_node is 1.5 (srtctl truncates it to 1)",
        ),
        ("prefill_workers: 2", "prefill_workers: -2", "prefill_workers is -2: a node or worker"),
        ("gpus_per_node: 8", "gpus_per_node: 0", "gpus_per_node is 0: a GPU count is 1 or more"),
        ("name: r", "name: 'r [bold]x[/]'", "recipe name 'r [bold]x[/]' holds characters"),
    ],
)
def test_values_srtctl_takes_but_no_benchmark_runs(
    write: WriteFile, old: str, new: str, message: str
) -> None:
    path = write("r.yaml", PLAIN.replace(old, new))
    recipe = load_recipe(path, strict=False)
    assert recipe.problems == ()  # srtctl's schema accepts it
    (unusable,) = recipe.unusable
    assert unusable.message.startswith(message) and unusable.hint
    line = next(n for n, text in enumerate(PLAIN.splitlines(), 1) if old in text)
    assert unusable.location.line == line
    with pytest.raises(ConfigError, match="srtctl|count|name"):
        load_recipe(path)  # strict: a plan never starts from it


def test_a_fractional_count_is_typed_as_srtctl_loads_it(write: WriteFile) -> None:
    text = PLAIN.replace("gpus_per_node: 8", "gpus_per_node: 8.0\n  gpus_per_prefill: 2.5")
    recipe = load_recipe(write("r.yaml", text), strict=False)
    assert recipe.resources.gpus_per_node == 8 and recipe.resources.gpus_per_prefill == 2
    assert [p.location.key for p in recipe.unusable] == ["resources.gpus_per_prefill"]


def test_a_rejected_recipe_still_loads_with_its_reasons(write: WriteFile) -> None:
    text = PLAIN.replace("name: r\n", "name: r\nextra_key: 1\n").replace(
        "gpus_per_node: 8", "gpus_per_node: 8\n  het_jobs: maybe"
    )
    recipe = load_recipe(write("r.yaml", text), strict=False)
    assert [p.message for p in recipe.problems] == [
        "srtctl rejects it: extra_key: Unknown field.",
        "srtctl rejects it: resources.het_jobs: Not a valid boolean.",
    ]
    assert recipe.resources.gpus_per_node == 8  # the rest is typed and checkable
    assert recipe.problems[0].location.line == 2


def test_override_variants(write: WriteFile) -> None:
    file = load_recipe_file(write("o.yaml", OVERRIDES))
    assert file.selectors() == [
        "override_lowmem",
        "override_nomem",
        "zip_override_tp[0]",
        "zip_override_tp[1]",
    ]
    low = file.recipe("override_lowmem")
    assert low.name == "job_lowmem"
    assert low.flags("aggregated").get("mem-fraction-static") == 0.7
    assert low.flags("aggregated").get("tp-size") == 4  # kept from base
    assert "mem-fraction-static" not in file.recipe("override_nomem").flags("aggregated")
    base = file.recipe("base")
    assert base.name == "job" and base.resources.agg_workers == 2


def test_zip_override_variants(write: WriteFile) -> None:
    file = load_recipe_file(write("o.yaml", OVERRIDES))
    first, second = file.variants("zip_override_tp")
    assert first.name == "job_tp_0" and second.name == "job_tp_1"
    assert second.resources.gpus_per_agg_worker == 8
    assert second.flags("aggregated").get("tp-size") == 8
    assert second.flags("aggregated").get("trust-remote-code") is True
    assert first.benchmark is not None and first.benchmark.concurrencies == (4, 8)
    assert second.benchmark is not None and second.benchmark.concurrencies == (16,)
    assert len(file.variants()) == 4


def test_selector_in_path_and_errors(write: WriteFile) -> None:
    path = write("o.yaml", OVERRIDES)
    assert load_recipe(f"{path}:zip_override_tp[1]").resources.gpus_per_agg == 8
    with pytest.raises(ConfigError, match="4 variants"):
        load_recipe(path)
    with pytest.raises(ConfigError, match="no section"):
        load_recipe(path, "override_missing")
    with pytest.raises(ConfigError, match="pick one"):
        load_recipe(path, "zip_override_tp[5]")
    with pytest.raises(ConfigError, match="no `base:` variants"):
        load_recipe(write("r.yaml", PLAIN), "override_x")


def test_variant_errors_point_at_the_override(write: WriteFile) -> None:
    text = OVERRIDES.replace("aggregated: {mem-fraction-static: 0.7}", "aggregated: 3")
    path = write("o.yaml", text)
    with pytest.raises(ConfigError) as err:
        load_recipe(path, "override_lowmem")
    assert err.value.location.line == 13  # inside override_lowmem, not base


def test_zip_lengths_must_agree(write: WriteFile) -> None:
    text = OVERRIDES.replace("tp-size: [4, 8]", "tp-size: [4, 8, 16]")
    with pytest.raises(ConfigError, match="incompatible"):
        load_recipe_file(write("o.yaml", text)).selectors()


def test_deep_merge_rules() -> None:
    base = {"a": {"b": 1, "c": [1, 2]}, "d": 1, "e": 2}
    merged = deep_merge(base, {"a": {"c": [3]}, "d": None, "f": {"g": 1}})
    assert merged == {"a": {"b": 1, "c": [3]}, "e": 2, "f": {"g": 1}}
    assert base["a"]["c"] == [1, 2]  # the base is not mutated


def test_decode_nodes_zero_inherits_prefill_size(write: WriteFile) -> None:
    text = PLAIN.replace("decode_nodes: 1", "decode_nodes: 0")
    assert load_recipe(write("r.yaml", text)).resources.gpus_per_decode_worker == 4
