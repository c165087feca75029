"""Cluster catalog, srtslurm.yaml, runner registry and perf changelog models."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from inferbench.config.changelog import load_changelog, parse_changelog
from inferbench.config.cluster import load_cluster
from inferbench.config.runners import load_runners
from inferbench.config.srtslurm import SrtslurmConfig, load_srtslurm
from inferbench.core.errors import ConfigError

WriteFile = Callable[[str, str], Path]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_cluster_renders_a_valid_srtslurm() -> None:
    cluster = load_cluster(EXAMPLES / "clusters/b200-dgxc.yaml").cluster
    rendered = cluster.srtslurm_config()
    assert rendered["model_paths"]["minimax-m3-nvfp4"] == "/scratch/fsw/models/MiniMax-M3-NVFP4"
    assert rendered["gpus_per_node"] == 8 and rendered["default_partition"] == "batch"
    assert SrtslurmConfig.model_validate(rendered).model_paths == rendered["model_paths"]
    assert cluster.serves("b200-multinode") and cluster.serves("cluster:b200-dgxc")
    # a machine (a --runner-node-filter job's runner) is its launcher's: ${RUNNER_NAME%%_*}
    assert cluster.serves("b200-dgxc_01") and not cluster.serves("b200-dgxc-slurm_01")
    entry = cluster.model_entry("minimaxm3", "fp4", "dynamo-vllm")
    assert entry is not None and entry.alias == "minimax-m3-nvfp4"


def test_same_weights_different_alias_per_cluster() -> None:
    b200 = load_cluster(EXAMPLES / "clusters/b200-dgxc.yaml").cluster
    b300 = load_cluster(EXAMPLES / "clusters/b300-nv.yaml").cluster
    assert b300.has_alias("nvidia/MiniMax-M3-NVFP4") and not b200.has_alias(
        "nvidia/MiniMax-M3-NVFP4"
    )


def test_srtslurm_unknown_key_is_an_error(write: WriteFile) -> None:
    path = write("srtslurm.yaml", "default_account: a\nmodel_path:\n  x: /m\n")
    with pytest.raises(ConfigError) as err:
        load_srtslurm(path)
    assert err.value.location.line == 2 and err.value.hint == "did you mean 'model_paths'?"


CLUSTER = """\
name: c1
runners: [b200]
gpu: b200
gpus-per-node: 8
scheduler: {type: slurm, partition: batch}
models:
  - {model: m/A, model-prefix: a, precision: fp4, path: /m/a, alias: a}
  - {model: m/B, model-prefix: b, precision: fp4, path: /m/b, alias: a}
"""


def test_cluster_alias_to_two_paths(write: WriteFile) -> None:
    with pytest.raises(ConfigError, match="two paths") as err:
        load_cluster(write("clusters/c1.yaml", CLUSTER))
    assert err.value.location.line == 8


def test_a_jobs_model_paths_hold_its_frameworks_alias(write: WriteFile) -> None:
    """An alias routed to other weights for another framework (launch_gb200-nv.sh's
    `dsr1-fp8`): each job's srtslurm.yaml gets the path of its own framework."""
    from inferbench.launch.deployment import deployment_from_dicts
    from inferbench.launch.srtcluster import model_paths

    text = CLUSTER.replace(
        "  - {model: m/A, model-prefix: a, precision: fp4, path: /m/a, alias: a}\n"
        "  - {model: m/B, model-prefix: b, precision: fp4, path: /m/b, alias: a}\n",
        "  - {model: m/A, model-prefix: a, precision: fp4, path: /m/a, alias: a, framework: x}\n"
        "  - {model: m/A, model-prefix: a, precision: fp4, path: /m/b, alias: a, framework: y}\n",
    )
    cluster = load_cluster(write("clusters/c1.yaml", text)).cluster
    job: dict[str, object] = {
        **{"config-key": "a-fp4-b200-y", "image": "img:1", "model": "m/A", "runner": "b200"},
        **{"model-prefix": "a", "precision": "fp4", "framework": "y", "exp-name": "a_1k1k"},
        **{"isl": 1024, "osl": 1024, "max-model-len": 2304, "conc": 4},
        **{"tp": 1, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 1, "dp-attn": False},
    }
    assert model_paths(cluster, deployment_from_dicts([job])) == {"a": "/m/b"}
    job["framework"] = "x"
    assert model_paths(cluster, deployment_from_dicts([job])) == {"a": "/m/a"}


def test_a_model_routed_twice_is_an_error(write: WriteFile) -> None:
    text = CLUSTER.replace("model-prefix: b", "model-prefix: a").replace("m/B", "m/A")
    with pytest.raises(ConfigError, match="already covers a/fp4") as err:
        load_cluster(write("clusters/c1.yaml", text))
    assert err.value.location.line == 8


def test_a_route_by_model_keeps_each_models_weights(write: WriteFile) -> None:
    """Two models of one model-prefix/precision, one alias (launch_b200-dgxc.sh's qwen3.5
    fp4, NVFP4 and NVFP4-V2): each job gets its own model's weights."""
    from inferbench.launch.deployment import deployment_from_dicts
    from inferbench.launch.srtcluster import model_paths

    text = CLUSTER.replace("model-prefix: b", "model-prefix: a")
    cluster = load_cluster(write("clusters/c1.yaml", text)).cluster
    for model, path in (("m/A", "/m/a"), ("m/B", "/m/b")):
        entry = cluster.model_entry("a", "fp4", model=model)
        assert entry is not None and entry.path == path
        job: dict[str, object] = {
            **{"config-key": "a-fp4-b200-y", "image": "img:1", "model": model, "runner": "b200"},
            **{"model-prefix": "a", "precision": "fp4", "framework": "y", "exp-name": "a_1k1k"},
            **{"isl": 1024, "osl": 1024, "max-model-len": 2304, "conc": 4},
            **{"tp": 1, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 1, "dp-attn": False},
        }
        assert model_paths(cluster, deployment_from_dicts([job])) == {"a": path}


def test_local_scheduler_rejects_slurm_fields(write: WriteFile) -> None:
    text = CLUSTER.replace("type: slurm", "type: local").replace(
        ", alias: a}\n  - {model: m/B", "}\n  - {model: m/B"
    )
    with pytest.raises(ConfigError, match="Slurm only"):
        load_cluster(write("clusters/c1.yaml", text))


def test_runners_registry(write: WriteFile) -> None:
    runners = load_runners(EXAMPLES / "configs/runners.yaml")
    assert runners.registry.has_label("b200-multinode")
    spec = runners.registry.hardware_for("b200-multinode")
    assert spec is not None and spec.gpus_per_node == 8
    assert runners.locate_label("b200").line == 4
    with pytest.raises(ConfigError, match="lists no runner"):
        load_runners(write("runners.yaml", "labels:\n  b200: []\n"))


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("labels:\n  b200: [b200-nb_0]\n  '[/][bold]x[/]': [a_0]\n", 3, "label '[/][bold]x[/]'"),
        ("labels:\n  b200: [b200-nb_0, 'b$(id)_1']\n", 2, "runner 'b$(id)_1' of label 'b200'"),
    ],
)
def test_runner_labels_and_machines_are_plain_names(
    write: WriteFile, text: str, line: int, words: str
) -> None:
    """A label is a `runs-on` label and a machine becomes RUNNER_NAME, which the workflow
    puts into a script name: markup, spaces or shell syntax there are refused where written."""
    with pytest.raises(ConfigError, match="is not a plain name") as caught:
        load_runners(write("runners.yaml", text))
    assert words in caught.value.message and caught.value.location.line == line
    assert caught.value.hint is not None and "letters, digits" in caught.value.hint


RUNNERS_BY_LABEL = """\
labels:
  cluster:mi355x-amds: [mi355x-amds_00]
  b200-nscale: [b200-nscale_0]
  b200: [b200-nb_0]
hardware:
  cluster:mi355x-amds: {available-cpu-dram-mib: 3_095_781, gpus-per-node: 8}
  b200-nscale: {available-cpu-dram-mib: 2_063_920, gpus-per-node: 8}
  b200: {available-cpu-dram-mib: 1_000, gpus-per-node: 4}
"""


def test_hardware_is_keyed_by_the_exact_runner_label(write: WriteFile) -> None:
    """As InferenceX's generator reads it: `cluster:` kept, no GPU-name guess first."""
    registry = load_runners(write("runners.yaml", RUNNERS_BY_LABEL)).registry
    mi355x = registry.hardware_for("cluster:mi355x-amds")
    assert mi355x is not None and mi355x.available_cpu_dram_mib == 3_095_781
    nscale = registry.hardware_for("b200-nscale")
    assert nscale is not None and nscale.available_cpu_dram_mib == 2_063_920
    # Without an exact key, a GPU-name key still serves the label.
    fallback = registry.hardware_for("b200-multinode")
    assert fallback is not None and fallback.gpus_per_node == 4
    assert registry.hardware_for("mi300x") is None


def test_changelog_entries_and_lines() -> None:
    changelog = load_changelog(EXAMPLES / "perf-changelog.yaml")
    lines = [item.line for item in changelog.items]
    assert lines == sorted(lines) and lines[0] == 2
    glob = changelog.items[2]
    assert glob.entry.matches("dsr1-fp8-h200-sglang") and not glob.entry.matches("dsr1-fp4-b200")
    assert changelog.resolve(glob, ["dsr1-fp8-h200-sglang", "x"]) == ["dsr1-fp8-h200-sglang"]


def test_changelog_forms_and_errors(tmp_path: Path) -> None:
    text = (
        "- config-keys: a\n  description: one line\n  evals-only: true\n"
        "  scenario-type: agentic-coding\n"
    )
    (item,) = parse_changelog(text, tmp_path / "c.yaml").items
    assert item.entry.config_keys == ("a",) and item.entry.description == ("one line",)
    assert item.entry.evals_only and item.entry.scenario_type == ("agentic-coding",)
    with pytest.raises(ConfigError, match="did you mean 'pr-link'"):
        parse_changelog("- config-keys: [a]\n  description: x\n  pr_link: u\n", tmp_path / "c.yaml")
    with pytest.raises(ConfigError, match="list of entries"):
        parse_changelog("a: 1\n", tmp_path / "c.yaml")
    with pytest.raises(ConfigError, match="config-keys"):
        parse_changelog("- description: x\n", tmp_path / "c.yaml")
    with pytest.raises(ConfigError, match="changelog is empty"):  # as InferenceX's validator
        parse_changelog("# entries go here\n", tmp_path / "c.yaml")
