"""Master entries: schema, cross-field rules, error locations, cross-file uniqueness."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from inferbench.config.master import (
    AgenticSingleNodeSearchSpace,
    MultiNodeSearchSpace,
    SingleNodeSearchSpace,
    load_master_file,
    load_masters,
)
from inferbench.core.errors import ConfigError
from inferbench.engines.layout import Spelling

WriteFile = Callable[[str, str], Path]

SINGLE: dict[str, Any] = {
    "image": "vllm/vllm-openai:v0.10.2",
    "model": "meta-llama/Llama-3.1-8B-Instruct",
    "model-prefix": "llama3.1-8b",
    "runner": "h200",
    "precision": "bf16",
    "framework": "vllm",
    "multinode": False,
    "scenarios": {
        "fixed-seq-len": [
            {"isl": 1024, "osl": 1024, "search-space": [{"tp": 1, "conc-start": 4, "conc-end": 64}]}
        ]
    },
}

MULTI: dict[str, Any] = {
    "image": "vllm/vllm-openai:v0.10.2",
    "model": "nvidia/MiniMax-M3-NVFP4",
    "model-prefix": "minimaxm3",
    "runner": "b200-multinode",
    "precision": "fp4",
    "framework": "dynamo-vllm",
    "multinode": True,
    "disagg": True,
    "kv-p2p-transfer": "nixl",
    "scenarios": {
        "fixed-seq-len": [
            {
                "isl": 8192,
                "osl": 1024,
                "search-space": [
                    {
                        "conc-list": [2048],
                        "prefill": {
                            "num-worker": 2,
                            "tp": 2,
                            "ep": 2,
                            "dp-attn": True,
                            "additional-settings": [
                                "CONFIG_FILE=recipes/vllm/x/2p1d.yaml:override_a",
                                "PREFILL_NODES=1",
                                "MY_FLAG=yes",
                            ],
                        },
                        "decode": {"num-worker": 1, "tp": 8, "ep": 8, "dp-attn": True},
                    }
                ],
            }
        ]
    },
}


def load(tmp_path: Path, entry: dict[str, Any], key: str = "k") -> Any:
    path = tmp_path / "configs" / "x-master.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({key: entry}, indent=2), encoding="utf-8")
    (config,) = load_master_file(path)
    return config


def space_of(entry: dict[str, Any]) -> dict[str, Any]:
    space: dict[str, Any] = entry["scenarios"]["fixed-seq-len"][0]["search-space"][0]
    return space


def broken(base: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    entry = copy.deepcopy(base)
    change(entry)
    return entry


def test_single_node_entry_loads(tmp_path: Path) -> None:
    config = load(tmp_path, SINGLE)
    (point,) = list(config.entry.search_spaces())
    assert isinstance(point.space, SingleNodeSearchSpace)
    assert (point.isl, point.osl, point.space.conc_start, point.space.conc_end) == (
        1024,
        1024,
        4,
        64,
    )
    assert point.space.spec_decoding == "none" and point.space.pp == 1


def test_multinode_entry_and_additional_settings(tmp_path: Path) -> None:
    config = load(tmp_path, MULTI)
    (point,) = list(config.entry.search_spaces())
    space = point.space
    assert isinstance(space, MultiNodeSearchSpace)
    settings = space.prefill.additional_settings
    assert settings.config_file is not None
    assert settings.config_file.path == "recipes/vllm/x/2p1d.yaml"
    assert settings.config_file.selector == "override_a"
    assert settings.prefill_nodes == 1
    assert settings.passthrough == (("MY_FLAG", "yes"),)
    assert settings.get("MY_FLAG") == "yes"
    assert space.config_file == settings.config_file
    assert space.prefill.gpus == 4 and space.decode.gpus == 8
    assert space.prefill.layout.spelling is Spelling.DEP_TP_IS_GPUS
    assert not space.aggregated
    assert config.entry.kv_p2p_for(space) == "nixl"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda e: space_of(e).update({"conc-list": [4]}), "not both"),
        (lambda e: space_of(e).pop("conc-end"), "missing conc-end"),
        (lambda e: space_of(e).update({"conc-start": 128}), "above conc-end"),
        (lambda e: space_of(e).update({"conc-start": 0}), "greater than or equal to 1"),
        (lambda e: [space_of(e).pop(k) for k in ("conc-start", "conc-end")], "no concurrency"),
        (lambda e: space_of(e).update({"tp": 4, "dcp-size": 3}), "multiple of dcp-size"),
        (lambda e: space_of(e).update({"spec-decoding": "eagle"}), "'mtp'"),
        (lambda e: e.update({"disagg": True}), "needs multinode"),
        (lambda e: e.update({"kv-p2p-transfer": "nixl"}), "multinode only"),
        (lambda e: e.update({"router": {"name": "r", "version": "image:repo/img:1"}}), "image"),
        (lambda e: e.update({"router": {"name": "", "version": "1"}}), "at least 1"),
        (lambda e: e.update({"scenarios": {}}), "no scenario"),
        (
            lambda e: (
                [space_of(e).pop(k) for k in ("tp",)]
                and space_of(e).update(
                    {k: v for k, v in space_of(MULTI).items() if k != "conc-list"}
                )
            ),
            "multinode search-space entry",
        ),
        (lambda e: e.pop("image"), "missing required key 'image'"),
        (lambda e: e.update({"multinode": "maybe"}), "boolean"),
    ],
)
def test_single_node_rules(tmp_path: Path, change: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load(tmp_path, broken(SINGLE, change))


def _router_both(e: dict[str, Any]) -> None:
    e["router"] = {"name": "dynamo", "version": "0.5.0"}
    space_of(e)["router"] = {"name": "dynamo", "version": "0.5.0"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda e: space_of(e).update({"kv-p2p-transfer": "nixl"}), "both at the top"),
        (_router_both, "router is set both"),
        (lambda e: space_of(e)["prefill"].update({"hardware": "b200"}), "both prefill and decode"),
        (lambda e: space_of(e)["decode"].pop("dp-attn"), "missing required key 'dp-attn'"),
        (lambda e: space_of(e)["decode"].update({"num-worker": -1}), "greater than or equal"),
        (
            lambda e: e.update({"multinode": True, "scenarios": SINGLE["scenarios"]}),
            "single-node search-space entry",
        ),
        (lambda e: e.update({"kv-p2p-transfer": ""}), "at least 1 character"),
        (
            lambda e: space_of(e)["prefill"].update({"additional-settings": ["A=1", "A=2"]}),
            "set twice",
        ),
        (lambda e: space_of(e)["prefill"].update({"additional-settings": [3]}), "string"),
        (
            lambda e: space_of(e)["prefill"].update({"additional-settings": ["PREFILL_NODES=x"]}),
            "whole number",
        ),
    ],
)
def test_multinode_rules(tmp_path: Path, change: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load(tmp_path, broken(MULTI, change))


def test_values_inferencex_accepts(tmp_path: Path) -> None:
    """As liberal as InferenceX's validator: any transfer name, a version with ':' or '@',
    `key: null` for a default (its generator reads null as absent), an empty search space."""
    entry = broken(MULTI, lambda e: e.update({"kv-p2p-transfer": "moriio"}))
    entry["router"] = {"name": "dynamo", "version": "sha256:0a1b@main"}
    space_of(entry)["spec-decoding"] = None
    space_of(entry)["prefill"]["pp"] = None
    config = load(tmp_path, entry)
    (point,) = list(config.entry.search_spaces())
    assert isinstance(point.space, MultiNodeSearchSpace)
    assert config.entry.kv_p2p_for(point.space) == "moriio"
    assert point.space.spec_decoding == "none" and point.space.prefill.pp == 1
    single = broken(SINGLE, lambda e: space_of(e).update({"ep": None, "dp-attn": None}))
    (point,) = list(load(tmp_path, single).entry.search_spaces())
    assert isinstance(point.space, SingleNodeSearchSpace)
    assert (point.space.ep, point.space.dp_attn) == (1, False)
    empty = copy.deepcopy(SINGLE)
    empty["scenarios"]["fixed-seq-len"][0]["search-space"] = []
    assert list(load(tmp_path, empty).entry.search_spaces()) == []


def test_aggregated_multinode_is_decode_zero(tmp_path: Path) -> None:
    entry = broken(MULTI, lambda e: space_of(e)["decode"].update({"num-worker": 0}))
    entry["disagg"] = False
    (point,) = list(load(tmp_path, entry).entry.search_spaces())
    assert isinstance(point.space, MultiNodeSearchSpace) and point.space.aggregated


def _agentic(extra: dict[str, Any], scenario: dict[str, Any] | None = None) -> dict[str, Any]:
    entry = copy.deepcopy(SINGLE)
    entry["runner"] = "cluster:gb300-nv"
    space = {"tp": 8, "conc-list": [8], **extra}
    entry["scenarios"] = {"agentic-coding": [{"search-space": [space], **(scenario or {})}]}
    return entry


def test_a_bare_offload_backend_name_is_its_name(tmp_path: Path) -> None:
    """`kv-offload-backend: lmcache`: InferenceX's spelling before upstream #2096."""
    bare = _agentic({"kv-offloading": "dram", "kv-offload-backend": "lmcache"})
    full = _agentic({"kv-offloading": "dram", "kv-offload-backend": {"name": "lmcache"}})
    bare["scenarios"]["agentic-coding"][0]["dram-utilization"] = 0.5
    full["scenarios"]["agentic-coding"][0]["dram-utilization"] = 0.5
    assert load(tmp_path / "a", bare).entry == load(tmp_path / "b", full).entry


def test_agentic_scenario(tmp_path: Path) -> None:
    backend = {"kv-offloading": "dram", "kv-offload-backend": {"name": "lmcache"}}
    entry = _agentic(backend, {"dram-utilization": 0.5})
    (point,) = list(load(tmp_path, entry).entry.search_spaces())
    assert point.scenario == "agentic-coding" and point.dram_utilization == 0.5


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            _agentic({"kv-offloading": "dram"}, {"dram-utilization": 0.5}),
            "needs kv-offload-backend",
        ),
        (
            _agentic({"kv-offloading": "none", "kv-offload-backend": {"name": "x"}}),
            "only allowed with kv-offloading: dram",
        ),
        (
            _agentic({"kv-offloading": "dram", "kv-offload-backend": {"name": "x"}}),
            "dram-utilization",
        ),
        (_agentic({}, {"dram-utilization": 1.5}), "less than or equal to 1"),
        (_agentic({}, {"dram-utilization": 0}), "greater than 0"),
    ],
)
def test_agentic_rules(tmp_path: Path, entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load(tmp_path, entry)


def test_an_agentic_entry_on_a_plain_runner_is_read(tmp_path: Path) -> None:
    """InferenceX's validator asks for a cluster: runner only since AgentX v1.0 (#1970,
    2026-07-02): before, agentic entries ran on b200, mi355x, ...; `check` says IB155."""
    entry = _agentic({})
    entry["runner"] = "b200"
    assert load(tmp_path, entry).entry.runner == "b200"


def test_kv_offloading_rejected_in_fixed_seq_len(tmp_path: Path) -> None:
    entry = broken(SINGLE, lambda e: space_of(e).update({"kv-offloading": "none"}))
    with pytest.raises(ConfigError, match="unknown key 'kv-offloading'"):
        load(tmp_path, entry)


ENTRY_YAML = """\
llama:
  image: vllm/vllm-openai:v0.10.2
  model: meta-llama/Llama-3.1-8B-Instruct
  model-prefix: llama3.1-8b
  runner: h200
  precision: bf16
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
      - isl: 1024
        osl: 1024
        search-space:
          - {tp: 1, conc-start: 4, conc-end: 64}
          - tp: 2
            conc-strat: 4
            conc-end: 64
"""


def test_unknown_key_error_has_position_path_and_hint(write: WriteFile) -> None:
    path = write("configs/a-master.yaml", ENTRY_YAML)
    with pytest.raises(ConfigError) as err:
        load_master_file(path)
    loc = err.value.location
    assert (loc.file, loc.line, loc.column) == (path, 16, 13)
    assert loc.key == "llama.scenarios.fixed-seq-len[0].search-space[1].conc-strat"
    assert err.value.hint == "did you mean 'conc-start'?"


def test_unknown_key_without_close_match_lists_allowed(write: WriteFile) -> None:
    path = write("configs/a-master.yaml", ENTRY_YAML.replace("conc-strat", "zzz"))
    with pytest.raises(ConfigError) as err:
        load_master_file(path)
    assert err.value.hint is not None and "allowed keys:" in err.value.hint
    assert "conc-list" in err.value.hint and "dp-attn" in err.value.hint


def test_rule_violation_points_at_the_key(write: WriteFile) -> None:
    text = ENTRY_YAML.replace("conc-strat: 4", "conc-start: 128")
    with pytest.raises(ConfigError) as err:
        load_master_file(write("configs/a-master.yaml", text))
    assert err.value.location.line == 16
    assert err.value.location.key is not None
    assert err.value.location.key.endswith("search-space[1].conc-start")
    assert err.value.hint == "swap them"


def test_missing_key_points_at_parent(write: WriteFile) -> None:
    text = ENTRY_YAML.replace("  image: vllm/vllm-openai:v0.10.2\n", "").replace(
        "conc-strat", "conc-start"
    )
    with pytest.raises(ConfigError) as err:
        load_master_file(write("configs/a-master.yaml", text))
    assert err.value.location.line == 1 and err.value.location.key == "llama.image"


def test_duplicate_key_across_files_names_both(write: WriteFile) -> None:
    a = write("configs/a-master.yaml", ENTRY_YAML.replace("conc-strat", "conc-start"))
    b = write("configs/b-master.yaml", ENTRY_YAML.replace("conc-strat", "conc-start"))
    with pytest.raises(ConfigError) as err:
        load_masters([a, b])
    assert err.value.location.file == b
    assert str(a) in err.value.message


def test_glob_characters_rejected_in_keys(write: WriteFile) -> None:
    text = ENTRY_YAML.replace("llama:", "llama-*:").replace("conc-strat", "conc-start")
    with pytest.raises(ConfigError, match="glob"):
        load_master_file(write("configs/a-master.yaml", text))


def test_master_file_must_be_a_map(write: WriteFile) -> None:
    with pytest.raises(ConfigError, match="map of config-key"):
        load_master_file(write("configs/a-master.yaml", "- a\n- b\n"))


def test_an_empty_master_file_is_refused(write: WriteFile) -> None:
    with pytest.raises(ConfigError, match="master file is empty") as err:
        load_master_file(write("configs/a-master.yaml", "# nothing yet\n"))
    assert err.value.hint is not None


@pytest.mark.parametrize("model", ["", "  ", "org/\x07bell", "x" * 4097])
def test_model_must_name_something(write: WriteFile, model: str) -> None:
    text = ENTRY_YAML.replace("conc-strat", "conc-start")
    text = text.replace("model: meta-llama/Llama-3.1-8B-Instruct", f"model: {json.dumps(model)}")
    with pytest.raises(ConfigError) as err:
        load_master_file(write("configs/a-master.yaml", text))
    assert err.value.location.key == "llama.model"


@pytest.mark.parametrize(
    "model", ["/models/llama", "./weights/llama", "hf:meta-llama/Llama-3.1-8B", "a b/c"]
)
def test_model_takes_what_inferencex_takes(write: WriteFile, model: str) -> None:
    """A local path, `hf:org/name`, any text: InferenceX's generator passes the string on
    (`check` reports a form that is none of id, hf:id, path: IB153)."""
    text = ENTRY_YAML.replace("conc-strat", "conc-start")
    text = text.replace("model: meta-llama/Llama-3.1-8B-Instruct", f"model: {model!r}")
    (config,) = load_master_file(write("configs/a-master.yaml", text))
    assert config.entry.model == model


def test_master_config_locates_inside_entry(write: WriteFile) -> None:
    path = write("configs/a-master.yaml", ENTRY_YAML.replace("conc-strat", "conc-start"))
    (config,) = load_master_file(path)
    assert config.line == 1 and config.file == path
    assert config.locate(("scenarios", "fixed-seq-len", 0, "search-space", 1)).line == 15
    assert config.locate("scenarios.fixed-seq-len[0].isl").line == 11


def test_unknown_key_hint_uses_the_right_union_member(tmp_path: Path) -> None:
    entry = broken(MULTI, lambda e: space_of(e).update({"tp": 8}))
    with pytest.raises(ConfigError) as err:
        load(tmp_path, entry)
    assert err.value.message.startswith("unknown key 'tp'")
    assert err.value.hint is not None and "prefill" in err.value.hint
    assert "dcp-size" not in err.value.hint


def test_the_older_seq_len_configs_format_is_read_as_scenarios(tmp_path: Path) -> None:
    """`seq-len-configs` (InferenceX before 2026-05-01, upstream #1201) is what
    `scenarios: {fixed-seq-len: ...}` became: read item for item, located where written."""
    old = copy.deepcopy(SINGLE)
    old["seq-len-configs"] = old.pop("scenarios")["fixed-seq-len"]
    assert load(tmp_path / "old", old).entry == load(tmp_path / "new", SINGLE).entry
    config = load(tmp_path / "old", old)
    at = config.locate(("scenarios", "fixed-seq-len", 0, "isl"))
    lines = config.file.read_text().splitlines()
    assert at.line is not None and lines[at.line - 1].strip().startswith('"isl"')


def test_an_older_format_error_is_located_in_the_file(tmp_path: Path) -> None:
    old = copy.deepcopy(SINGLE)
    old["seq-len-configs"] = old.pop("scenarios")["fixed-seq-len"]
    old["seq-len-configs"][0]["search-space"][0]["tpp"] = 4
    with pytest.raises(ConfigError, match="unknown key 'tpp'") as err:
        load(tmp_path, old)
    line = err.value.location.line
    lines = (tmp_path / "configs" / "x-master.yaml").read_text().splitlines()
    assert line is not None and '"tpp"' in lines[line - 1]


def test_the_older_agentic_format_is_read(tmp_path: Path) -> None:
    """`offloading:` on a search-space entry and the scenario's `duration:` (InferenceX
    2026-05-01 .. 07-02, before AgentX v1.0): read as that generator read them."""
    old = _agentic({"offloading": "cpu"}, {"duration": 300})
    old["runner"] = "b200"
    (point,) = load(tmp_path, old).entry.search_spaces()
    assert isinstance(point.space, AgenticSingleNodeSearchSpace)
    assert point.space.offloading == "cpu" and point.space.kv_offloading is None
    assert point.duration == 300


def test_both_offload_spellings_on_one_entry_are_refused(tmp_path: Path) -> None:
    both = _agentic({"offloading": "cpu", "kv-offloading": "none"})
    with pytest.raises(ConfigError, match="offloading .* and kv-offloading are both set"):
        load(tmp_path, both)
