"""srtctl plans for the seed's multinode job: the rendered recipe and srtslurm.yaml pass
inferbench's own loaders (srt-slurm schema), the alias resolves on the target cluster, and
the job's lengths and concurrencies reach the benchmark section."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from inferbench.config.project import load_project
from inferbench.config.recipe import load_recipe
from inferbench.config.srtslurm import load_srtslurm
from inferbench.core.errors import ExternalToolError, InputError
from inferbench.launch.deployment import Deployment, group_jobs
from inferbench.launch.plan import Engine
from inferbench.launch.planner import PlanOptions
from inferbench.launch.rundir import JobDir
from inferbench.launch.srtctl import collect_sa_bench, parse_apply_json, require_srtctl
from inferbench.launch.srtplan import srtctl_plan
from inferbench.matrix.expand import expand_project
from inferbench.matrix.filters import SweepFilters
from services import needs_service

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SEED_KEY = "minimaxm3-fp4-b200-dynamo-vllm"


@pytest.fixture(scope="module")
def seed() -> tuple[object, Deployment]:
    project = load_project(EXAMPLES)
    (dep,) = group_jobs(expand_project(project, SweepFilters(config_keys=(SEED_KEY,))))
    return project, dep


def _render(tmp: Path, project: object, dep: Deployment, cluster: str | None) -> JobDir:
    job = JobDir(tmp / "job")
    plan = srtctl_plan(dep, project, cluster, str(job.path))
    job.make()
    for file in plan.files:
        (job.rendered / file.name).write_text(file.content)
    assert plan.submit[:3] == ("srtctl", "apply", "-f")
    assert "--json" in plan.submit
    assert plan.submit_env["SRTSLURM_CONFIG"].endswith("rendered/srtslurm.yaml")
    return job


def test_seed_job_renders_a_valid_recipe_for_its_cluster(tmp_path: Path, seed: tuple) -> None:
    project, dep = seed
    job = _render(tmp_path, project, dep, None)  # b200-dgxc serves b200-multinode
    recipe = load_recipe(job.rendered / "recipe.yaml")
    cluster = load_srtslurm(job.rendered / "srtslurm.yaml")
    assert recipe.model.path in cluster.model_paths  # the alias resolves
    assert recipe.model.path == "minimax-m3-nvfp4"
    assert recipe.benchmark is not None
    assert (recipe.benchmark.isl, recipe.benchmark.osl) == (8192, 1024)
    assert str(recipe.benchmark.concurrencies) in ("2048", "[2048]", "(2048,)")
    assert cluster.gpus_per_node == recipe.resources.gpus_per_node == 8


def test_other_cluster_gets_its_own_alias(tmp_path: Path, seed: tuple) -> None:
    project, dep = seed
    job = _render(tmp_path, project, dep, "b300-nv")
    recipe = load_recipe(job.rendered / "recipe.yaml")
    cluster = load_srtslurm(job.rendered / "srtslurm.yaml")
    assert recipe.model.path == "nvidia/MiniMax-M3-NVFP4"  # b300-nv's alias for the weights
    assert recipe.model.path in cluster.model_paths


def test_the_source_recipe_is_never_edited(tmp_path: Path, seed: tuple) -> None:
    project, dep = seed
    source = EXAMPLES / dep.config_file  # type: ignore[operator]
    before = source.read_bytes()
    _render(tmp_path, project, dep, "b300-nv")
    assert source.read_bytes() == before


def test_single_node_job_is_refused(seed: tuple) -> None:
    project, _ = seed
    deps = group_jobs(expand_project(project, SweepFilters(config_keys=("gptoss*",))))
    with pytest.raises(InputError, match="single-node"):
        srtctl_plan(deps[0], project, None, "/tmp/j")


def test_plan_engine_is_the_recipe_backend(seed: tuple) -> None:
    project, dep = seed
    assert srtctl_plan(dep, project, None, "/tmp/j").engine is Engine("vllm")


def test_apply_json_and_sa_bench_collection(tmp_path: Path) -> None:
    out = "Submitting...\n" + json.dumps(
        {"status": "submitted", "slurm_job_id": "4459", "output_dir": str(tmp_path / "4459")}
    )
    (sub,) = parse_apply_json(out)
    assert sub.job_id == "4459"
    assert parse_apply_json("no json here") == []
    logs = sub.output_dir / "logs" / "sa-bench_isl_8192_osl_1024"
    logs.mkdir(parents=True)
    (logs / "results_concurrency_2048_gpus_12_ctx_4_gen_8.json").write_text('{"completed": 9}')
    (logs / "results_concurrency_64_gpus_8.json").write_text('{"completed": 3}')
    (logs / "unrelated.json").write_text("{}")
    job = JobDir(tmp_path / "job")
    job.make()
    points = collect_sa_bench(sub.output_dir, job)
    assert sorted(p.concurrency for p in points) == [64, 2048]
    assert json.loads(job.result_file(2048).read_text()) == {"completed": 9}
    assert (job.results / "raw" / "results_concurrency_64_gpus_8.json").is_file()


def test_missing_srtctl_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ExternalToolError, match="srtctl") as info:
        require_srtctl()
    assert "NVIDIA/srt-slurm" in info.value.render()


def _real_srtctl() -> str | None:
    """The real srtctl: from .ci/services/30-srtctl.sh (INFERBENCH_SRTCTL), else on PATH."""
    return os.environ.get("INFERBENCH_SRTCTL") or shutil.which("srtctl")


@needs_service(
    _real_srtctl() is None,
    "srtctl is not installed (source .ci/services/30-srtctl.sh to install it)",
)
def test_srtctl_dry_run_accepts_the_rendered_recipe(tmp_path: Path, seed: tuple) -> None:
    project, dep = seed
    job = _render(tmp_path, project, dep, None)
    env = {**os.environ, "SRTSLURM_CONFIG": str(job.rendered / "srtslurm.yaml")}
    proc = subprocess.run(
        [str(_real_srtctl()), "dry-run", "-f", str(job.rendered / "recipe.yaml")],
        cwd=job.rendered,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_rendered_recipe_passes_inferbenchs_own_checks(tmp_path: Path) -> None:
    """The seed PR's bug (model.path written as the hub id, not the cluster's alias) is an
    error finding in the source tree; the rendered recipe, swapped in, has none."""
    from inferbench.checks.engine import check_tree
    from inferbench.checks.finding import Severity

    tree = tmp_path / "tree"
    shutil.copytree(EXAMPLES, tree)
    project = load_project(tree)
    (dep,) = group_jobs(expand_project(project, SweepFilters(config_keys=(SEED_KEY,))))
    source = tree / dep.config_file  # type: ignore[operator]
    source.write_text(
        source.read_text().replace("path: minimax-m3-nvfp4", 'path: "nvidia/MiniMax-M3-NVFP4"')
    )

    def recipe_errors() -> list[str]:
        report = check_tree(tree)
        return [
            f.message
            for f in report.findings
            if f.severity is Severity.ERROR
            and f.location.file is not None
            and Path(f.location.file).resolve() == source.resolve()
        ]

    assert recipe_errors(), "the seed's alias bug should be caught in the source recipe"
    plan = srtctl_plan(dep, load_project(tree), None, str(tmp_path / "job"))
    rendered = next(f.content for f in plan.files if f.name == "recipe.yaml")
    source.write_text(rendered)
    assert recipe_errors() == []


def _seed_tree(tmp_path: Path, extra: str, *, container: str | None = None) -> Path:
    """A copy of examples/ whose seed recipe also writes `extra` (top-level YAML)."""
    tree = tmp_path / "tree"
    shutil.copytree(EXAMPLES, tree)
    recipe = tree / "benchmarks/multi_node/srt-slurm-recipes/vllm/minimax-m3/b200-fp4/8k1k"
    source = recipe / "2p1d-dep2-dep8-8k1k.yaml"
    text = source.read_text()
    if container is not None:
        text = text.replace(
            "container: vllm/vllm-openai:vllm-minimax-m3-perf-x86_64-13.0.1-8b00f41",
            f"container: {container}",
        )
    source.write_text(text + extra)
    return tree


def _rendered(tree: Path, cluster: str | None = None) -> tuple[dict, dict, tuple[str, ...]]:
    import yaml

    project = load_project(tree)
    (dep,) = group_jobs(expand_project(project, SweepFilters(config_keys=(SEED_KEY,))))
    plan = srtctl_plan(dep, project, cluster, "/tmp/job")
    files = {f.name: yaml.safe_load(f.content) for f in plan.files}
    return files["recipe.yaml"], files["srtslurm.yaml"], plan.notes


PASSED_THROUGH = """\
identity:
  model: {repo: nvidia/MiniMax-M3-NVFP4}
  frameworks: {vllm: 0.11.0}
"""


def test_every_key_of_the_source_recipe_is_kept(tmp_path: Path) -> None:
    """Keys inferbench's own schema may not know reach srtctl unchanged; only the fields
    inferbench owns change."""
    tree = _seed_tree(tmp_path, PASSED_THROUGH)
    source = tree / "benchmarks/multi_node/srt-slurm-recipes/vllm/minimax-m3/b200-fp4/8k1k"
    text = (source / "2p1d-dep2-dep8-8k1k.yaml").read_text()
    text = text.replace(
        "frontend:\n  type: dynamo\n", "frontend:\n  type: dynamo\n  env: {A: '1'}\n"
    )
    text = text.replace("  gpus_per_decode: 8\n", "  gpus_per_decode: 8\n  het_jobs: false\n")
    text = text.replace("  req_rate: inf\n", "  req_rate: inf\n  use_chat_template: false\n")
    (source / "2p1d-dep2-dep8-8k1k.yaml").write_text(text)
    recipe, _, _ = _rendered(tree)
    assert recipe["identity"] == {
        "model": {"repo": "nvidia/MiniMax-M3-NVFP4"},
        "frameworks": {"vllm": "0.11.0"},
    }
    assert recipe["frontend"] == {"type": "dynamo", "env": {"A": "1"}}
    assert recipe["resources"]["het_jobs"] is False
    assert recipe["backend"]["vllm_config"]["decode"]["max-cudagraph-capture-size"] == 4096
    assert recipe["benchmark"] == {
        "type": "sa-bench",
        "isl": 8192,
        "osl": 1024,
        "concurrencies": "2048",
        "req_rate": "inf",
        "use_chat_template": False,
    }


def test_the_recipes_own_concurrencies_run_unless_the_user_picks_others(tmp_path: Path) -> None:
    """InferenceX runs `srtctl apply -f $CONFIG_FILE` unchanged: the recipe's own
    benchmark.concurrencies run, whatever the master entry lists (a note says so); with
    concurrencies the user chose, the job's replace them."""
    import yaml

    tree = _seed_tree(tmp_path, "")
    source = tree / "benchmarks/multi_node/srt-slurm-recipes/vllm/minimax-m3/b200-fp4/8k1k"
    path = source / "2p1d-dep2-dep8-8k1k.yaml"
    path.write_text(path.read_text().replace('concurrencies: "2048"', 'concurrencies: "768"'))
    recipe, _, notes = _rendered(tree)
    assert recipe["benchmark"]["concurrencies"] == "768"
    assert any("benchmark.concurrencies 768 kept" in n and "2048" in n for n in notes)
    project = load_project(tree)
    (dep,) = group_jobs(expand_project(project, SweepFilters(config_keys=(SEED_KEY,))))
    chosen = PlanOptions(recipe_concurrencies=False)
    plan = srtctl_plan(dep, project, None, "/tmp/job", chosen)
    ours = yaml.safe_load(next(f.content for f in plan.files if f.name == "recipe.yaml"))
    assert ours["benchmark"]["concurrencies"] == "2048"
    assert (
        SweepFilters(conc=(4,)).picks_concurrencies and SweepFilters(max_conc=8).picks_concurrencies
    )
    assert not SweepFilters(config_keys=(SEED_KEY,)).picks_concurrencies


def test_srtslurm_yaml_defines_the_alias_and_the_container(tmp_path: Path) -> None:
    tree = _seed_tree(tmp_path, "", container="vllm-minimax-m3")
    recipe, srtslurm, _ = _rendered(tree)
    assert recipe["model"]["path"] == "minimax-m3-nvfp4"
    assert srtslurm["model_paths"]["minimax-m3-nvfp4"] == "/scratch/fsw/models/MiniMax-M3-NVFP4"
    # the cluster keeps no file of the job's image, so the recipe's alias becomes the image
    # itself (srtctl's preflight takes an alias only for a file); the catalog's aliases stay
    image = "vllm/vllm-openai:vllm-minimax-m3-perf-x86_64-13.0.1-8b00f41"
    assert recipe["model"]["container"] == image
    assert srtslurm["containers"]["vllm-minimax-m3"] == image


def test_an_alias_for_a_file_of_the_jobs_image_is_kept(tmp_path: Path) -> None:
    tree = _seed_tree(tmp_path, "", container="dynamo-vllm")
    image = "vllm/vllm-openai:vllm-minimax-m3-perf-x86_64-13.0.1-8b00f41"
    catalog = tree / "clusters/b200-dgxc.yaml"
    catalog.write_text(catalog.read_text() + f"  {image}: /sqsh/minimax.sqsh\n")
    recipe, srtslurm, _ = _rendered(tree)
    assert recipe["model"]["container"] == "dynamo-vllm"
    assert srtslurm["containers"]["dynamo-vllm"] == "/sqsh/minimax.sqsh"
    assert srtslurm["containers"][image] == "/sqsh/minimax.sqsh"


def test_a_container_other_than_the_jobs_image_is_replaced(tmp_path: Path) -> None:
    tree = _seed_tree(tmp_path, "", container="nvcr.io/nvidia/other:1.0")
    recipe, srtslurm, notes = _rendered(tree)
    image = "vllm/vllm-openai:vllm-minimax-m3-perf-x86_64-13.0.1-8b00f41"
    assert recipe["model"]["container"] == image
    assert any("model.container" in n and "the job's image" in n for n in notes)


def test_a_registry_image_is_written_in_enroot_notation(tmp_path: Path) -> None:
    from inferbench.config.images import enroot_image

    assert enroot_image("nvcr.io/nvidia/ai-dynamo/x:0.8.1") == "nvcr.io#nvidia/ai-dynamo/x:0.8.1"
    assert enroot_image("nvcr.io#nvidia/x:1") == "nvcr.io#nvidia/x:1"
    assert enroot_image("lmsysorg/sglang:v0.5.8") == "lmsysorg/sglang:v0.5.8"
    assert enroot_image("docker.io/library/ubuntu:24.04") == "ubuntu:24.04"


def test_a_recipe_missing_from_the_tree_is_found_in_an_srt_slurm_checkout(tmp_path: Path) -> None:
    tree = _seed_tree(tmp_path, "")
    recipes = tree / "benchmarks/multi_node/srt-slurm-recipes"
    checkout = tmp_path / "srt-slurm"
    (checkout / "recipes").mkdir(parents=True)
    shutil.move(str(recipes / "vllm"), str(checkout / "recipes" / "vllm"))
    project = load_project(tree)
    (dep,) = group_jobs(expand_project(project, SweepFilters(config_keys=(SEED_KEY,))))
    with pytest.raises(InputError, match="in neither the tree") as info:
        srtctl_plan(dep, project, None, "/tmp/job")
    assert "--srt-slurm" in info.value.render()
    plan = srtctl_plan(dep, project, None, "/tmp/job", srt_slurm=checkout)
    assert any(n.startswith("recipe upstream recipes/vllm/minimax-m3") for n in plan.notes)


def test_a_multinode_job_without_config_file_is_not_an_srtctl_job(seed: tuple) -> None:
    from dataclasses import replace

    project, dep = seed
    bare = replace(dep, config_file=None, config_selector=None, settings={})
    with pytest.raises(InputError, match="no CONFIG_FILE, so the job is not an srtctl job"):
        srtctl_plan(bare, project, None, "/tmp/j")


def test_a_recipe_srtctls_schema_rejects_is_refused_at_plan_time(tmp_path: Path) -> None:
    tree = _seed_tree(tmp_path, "telemetry_typo: {enabled: true}\n")
    with pytest.raises(InputError, match="rejects its recipe: telemetry_typo: Unknown field"):
        _rendered(tree)


def test_a_repo_path_config_file_names_the_trees_own_recipe(seed: tuple) -> None:
    """`CONFIG_FILE=benchmarks/multi_node/srt-slurm-recipes/...`: InferenceX's launchers copy
    that folder into the srt-slurm clone at the same path and srtctl applies it there, so it
    is rendered like `recipes/...`; a path that is no file of the tree is not an srtctl job."""
    from dataclasses import replace

    project, dep = seed
    written = dep.settings["CONFIG_FILE"].replace("recipes/", project.layout.recipes + "/", 1)
    repo_path = replace(dep, settings={**dep.settings, "CONFIG_FILE": written})
    plan = srtctl_plan(repo_path, project, None, "/tmp/j")
    assert any(n.startswith(f"recipe tree {written} ") for n in plan.notes), plan.notes
    assert plan.files[0].content == srtctl_plan(dep, project, None, "/tmp/j").files[0].content
    llmd = replace(dep, settings={**dep.settings, "CONFIG_FILE": "dsv4-gb200-low-latency.yaml"})
    with pytest.raises(InputError, match="is not an srt-slurm recipe"):
        srtctl_plan(llmd, project, None, "/tmp/j")


def test_a_run_eval_job_is_planned_with_a_loud_warning(seed: tuple) -> None:
    """A tree that is no InferenceX workspace (no benchmarks/benchmark_lib.sh for srt-slurm's
    lm-eval to run): a job marked run-eval runs its benchmark and its plan says the eval will
    not run; an eval-only job is not planned."""
    from dataclasses import replace

    from inferbench.launch.planner import PlanOptions
    from inferbench.launch.srtplan import eval_gap

    project, dep = seed
    dep = replace(dep, eval_concurrencies=(), eval_only=False)
    marked = replace(dep, eval_concurrencies=(dep.concurrencies[0],))
    plan = srtctl_plan(marked, project, None, "/tmp/j")
    (warning,) = plan.warnings
    assert "has no benchmarks/benchmark_lib.sh" in warning and plan.bench.eval is None
    assert f"# WARNING: {warning}" in plan.render_text()
    assert plan.bench.points  # the benchmark still runs
    with pytest.raises(InputError, match="eval-only job runs no benchmark"):
        srtctl_plan(replace(marked, eval_only=True), project, None, "/tmp/j")
    gap = eval_gap([dep, marked], PlanOptions(), project.root)
    assert gap is not None and gap.startswith("1 of 2 jobs are marked run-eval")
    assert eval_gap([marked], PlanOptions(evals=False), project.root) is None
    assert srtctl_plan(dep, project, None, "/tmp/j").warnings == ()


def test_a_run_eval_job_asks_srt_slurm_for_its_eval(tmp_path: Path, seed: tuple) -> None:
    """In an InferenceX workspace (benchmarks/benchmark_lib.sh), srtctl apply gets what
    InferenceX's launchers export for srt-slurm's post-benchmark lm-eval."""
    from dataclasses import replace

    project, dep = seed
    tree = tmp_path / "tree"
    shutil.copytree(EXAMPLES, tree)
    (tree / "benchmarks" / "benchmark_lib.sh").write_text("# InferenceX's harness\n")
    project = load_project(tree)
    marked = replace(dep, eval_concurrencies=(dep.concurrencies[-1],), eval_only=False)
    plan = srtctl_plan(marked, project, None, "/tmp/j")
    env = plan.submit_env
    assert env["RUN_EVAL"] == "true" and env["EVAL_ONLY"] == "false"
    assert env["EVAL_CONC"] == str(dep.concurrencies[-1])
    assert env["INFMAX_WORKSPACE"] == str(tree.resolve()) and env["IS_MULTINODE"] == "true"
    job = dep.job
    assert (env["FRAMEWORK"], env["PRECISION"], env["MODEL"]) == (
        job.framework, job.precision, job.model,
    )  # fmt: skip
    assert job.prefill is not None and env["PREFILL_TP"] == str(job.prefill.tp)
    assert plan.bench.eval is not None and plan.warnings == ()
    only = srtctl_plan(replace(marked, eval_only=True), project, None, "/tmp/j")
    assert only.submit_env["EVAL_ONLY"] == "true" and not only.bench.points


def test_srt_slurms_eval_results_are_collected(tmp_path: Path) -> None:
    """logs/eval_results/ as srt-slurm's lm-eval runner leaves it (InferenceX's meta file and
    lm-eval's results file): results/eval_gsm8k_conc<C>.json and the job's artifact."""
    import json

    from inferbench.evals.result import EvalStatus, read_eval_result
    from inferbench.launch.plan import EvalPlan
    from inferbench.launch.srtevals import collect_evals

    out = tmp_path / "outputs" / "123"
    folder = out / "logs" / "eval_results"
    folder.mkdir(parents=True)
    (folder / "meta_env.json").write_text(json.dumps({"is_multinode": True, "conc": 64}))
    (folder / "results_2026-12-05T07-00-00.json").write_text(
        json.dumps(
            {
                "lm_eval_version": "0.4.9.2",
                "results": {"gsm8k": {"exact_match,strict-match": 0.9,
                                      "exact_match_stderr,strict-match": 0.01,
                                      "exact_match,flexible-extract": 0.91}},
                "n-samples": {"gsm8k": {"original": 1319, "effective": 1319}},
            }
        )
    )  # fmt: skip
    job_dir = JobDir(tmp_path / "run" / "abc")
    job_dir.results.mkdir(parents=True)
    plan = EvalPlan(concurrencies=(64,), context_length=9472)
    target = collect_evals([tmp_path / "other", out], job_dir, plan, "m", "123")
    assert target == job_dir.results / "eval_gsm8k_conc64.json"
    result = read_eval_result(target)
    assert result.status is EvalStatus.OK and result.harness_version == "0.4.9.2"
    assert result.primary is not None and result.primary.value == 0.9
    assert result.primary.samples == 1319
    artifact = tmp_path / "run" / "eval_results" / "abc"
    assert (artifact / "meta_env.json").is_file()
    assert (artifact / "results_2026-12-05T07-00-00.json").is_file()
    missing = read_eval_result(collect_evals([tmp_path / "none"], job_dir, plan, "m", "1"))
    assert missing.status is EvalStatus.FAILED and "never ran its eval" in str(missing.reason)


@needs_service(
    _real_srtctl() is None,
    "srtctl is not installed (source .ci/services/30-srtctl.sh to install it)",
)
def test_srtctl_dry_run_accepts_a_run_eval_job_with_its_eval_settings(
    tmp_path: Path, seed: tuple
) -> None:
    """The eval settings go in srtctl apply's environment; srtctl's dry run takes the job
    with them (and sees the InferenceX workspace it would mount)."""
    from dataclasses import replace

    _, dep = seed
    tree = tmp_path / "tree"
    shutil.copytree(EXAMPLES, tree)
    (tree / "benchmarks" / "benchmark_lib.sh").write_text("# InferenceX's harness\n")
    project = load_project(tree)
    marked = replace(dep, eval_concurrencies=(dep.concurrencies[-1],))
    job = JobDir(tmp_path / "job")
    plan = srtctl_plan(marked, project, None, str(job.path))
    job.rendered.mkdir(parents=True)
    for file in plan.files:
        (job.rendered / file.name).write_text(file.content)
    proc = subprocess.run(
        [str(_real_srtctl()), "dry-run", "-f", str(job.rendered / "recipe.yaml")],
        cwd=job.rendered,
        env={**os.environ, **plan.submit_env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert plan.submit_env["RUN_EVAL"] == "true"
