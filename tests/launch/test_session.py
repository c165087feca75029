"""Plans built from the example tree and its cluster catalog, as `inferbench run` builds them."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferbench.config.project import load_project
from inferbench.core.errors import InputError
from inferbench.launch.deployment import group_jobs
from inferbench.launch.plan import Backend
from inferbench.launch.rundir import JobDir
from inferbench.launch.session import RunOptions, build_request
from inferbench.matrix.expand import expand_project
from inferbench.matrix.filters import SweepFilters

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _plans(key: str, **options: object) -> list[object]:
    project = load_project(EXAMPLES)
    deps = group_jobs(expand_project(project, SweepFilters(config_keys=(key,))))
    request = build_request(RunOptions(root=EXAMPLES, **options), project, deps, preview=True)  # type: ignore[arg-type]
    return [request.planner(d, JobDir(Path("/runs/r") / d.fingerprint[:12])) for d in deps]


def test_local_plan_uses_the_clusters_staged_weights() -> None:
    plan = _plans("llama3.1-8b-bf16-h200-vllm", cluster="h200-nv")[0]
    argv = plan.processes[0].argv  # type: ignore[attr-defined]
    assert argv[2] == "/data/models/Llama-3.1-8B-Instruct"
    assert argv[argv.index("--served-model-name") + 1] == "meta-llama/Llama-3.1-8B-Instruct"
    assert plan.bench.model == "meta-llama/Llama-3.1-8B-Instruct"  # type: ignore[attr-defined]


def test_slurm_plan_from_a_pyxis_cluster() -> None:
    plan = _plans("gptoss-fp4-b200-trt", backend=Backend.SLURM, cluster="b200-dgxc")[1]
    script = next(f.content for f in plan.files if f.name == "sbatch.sh")  # type: ignore[attr-defined]
    assert "#SBATCH --partition=batch" in script and "#SBATCH --account=benchmark" in script
    assert "#SBATCH --time=04:00:00" in script and "#SBATCH --gres=gpu:2" in script
    argv = plan.processes[0].argv  # type: ignore[attr-defined]
    assert argv[0] == "srun" and any(a.startswith("--container-image=") for a in argv)
    assert any("/scratch/fsw/models:/models" in a for a in argv)
    assert "/scratch/fsw/models/gpt-oss-120b" in argv  # staged weights, not the hub id


def test_trtllm_is_asked_for_its_staged_weights_by_path() -> None:
    """trtllm-serve gets no --served_model_name (not provably in the tree's TRT-LLM releases):
    the bench and the eval ask for the path the server was given, as InferenceX does."""
    for plan in _plans("gptoss-fp4-b200-trt", backend=Backend.SLURM, cluster="b200-dgxc"):
        argv = plan.processes[0].argv  # type: ignore[attr-defined]
        assert not any("served" in a for a in argv)
        assert argv[argv.index("trtllm-serve") + 1] == "/scratch/fsw/models/gpt-oss-120b"
        assert plan.bench.model == "/scratch/fsw/models/gpt-oss-120b"  # type: ignore[attr-defined]


def test_slurm_backend_refuses_a_cluster_without_slurm() -> None:
    with pytest.raises(InputError, match="no Slurm scheduler"):
        _plans("llama3.1-8b-bf16-h200-vllm", backend=Backend.SLURM, cluster="h200-nv")


def test_unknown_cluster_is_named() -> None:
    with pytest.raises(InputError, match="unknown cluster 'nope'"):
        _plans("llama3.1-8b-bf16-h200-vllm", cluster="nope")


def _tree_with_rules(tmp_path: Path, toml: str) -> Path:
    import shutil

    tree = tmp_path / "tree"
    shutil.copytree(EXAMPLES, tree)
    (tree / "inferbench.toml").write_text(toml)
    return tree


def test_engine_args_rules_of_the_tree_then_the_command_line(tmp_path: Path) -> None:
    from inferbench.launch.planner import PlanOptions

    tree = _tree_with_rules(
        tmp_path,
        '[[engine-args]]\nconfig-keys = ["llama3.1-*"]\nargs = ["--enforce-eager", "--seed", "1"]\n'
        'env = { VLLM_CPU_KVCACHE_SPACE = "4" }\n'
        '[[engine-args]]\nconfig-keys = ["gptoss*"]\nargs = ["--never"]\n',
    )
    project = load_project(tree)
    deps = group_jobs(
        expand_project(project, SweepFilters(config_keys=("llama3.1-8b-bf16-h200-vllm",)))
    )
    plan_opts = PlanOptions(engine_args=("--seed", "2"), engine_env={"VLLM_X": "y"})
    options = RunOptions(root=tree, plan=plan_opts)
    request = build_request(options, project, deps, preview=True)
    proc = request.planner(deps[0], JobDir(tmp_path / "r" / "j")).processes[0]
    # appended after the derived flags, the tree's rule first: the command line's --seed wins
    assert proc.argv[-5:] == ("--enforce-eager", "--seed", "1", "--seed", "2")
    assert "--never" not in proc.argv
    assert proc.env == {"VLLM_CPU_KVCACHE_SPACE": "4", "VLLM_X": "y"}


def test_engine_args_rule_with_an_unknown_key_is_named(tmp_path: Path) -> None:
    from inferbench.core.errors import ConfigError

    tree = _tree_with_rules(tmp_path, '[[engine-args]]\nconfig-keys = ["x"]\nargz = ["a"]\n')
    with pytest.raises(ConfigError, match="unknown key 'engine-args.0.argz'") as err:
        load_project(tree)
    assert "args" in (err.value.hint or "")


def test_the_simulator_warns_that_it_ignores_engine_args() -> None:
    from inferbench.launch.plan import Engine
    from inferbench.launch.planner import PlanOptions

    plan = _plans(
        "llama3.1-8b-bf16-h200-vllm", engine=Engine.SIM, plan=PlanOptions(engine_args=("-x",))
    )[0]
    assert "-x" not in plan.processes[0].argv  # type: ignore[attr-defined]
    assert any("ignores them" in w for w in plan.warnings)  # type: ignore[attr-defined]
