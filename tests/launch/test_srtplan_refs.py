"""srtctl plans read each recipe at the srt-slurm ref the job clones: the seed's cluster pins
`v0.4.2` (examples/clusters/b200-dgxc.yaml), its recipe is moved out of the tree into an
srt-slurm repository whose `v0.4.2` and `main` differ, and `--srt-slurm` gives that
repository as a bundle, a clone or a copy."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from inferbench.config.project import load_project
from inferbench.config.srt_slurm_refs import SrtSlurmSources
from inferbench.core.errors import ConfigError
from inferbench.launch.deployment import group_jobs
from inferbench.launch.plan import Plan
from inferbench.launch.srtplan import SrtSources, srtctl_plan
from inferbench.matrix.expand import expand_project
from inferbench.matrix.filters import SweepFilters

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SEED_KEY = "minimaxm3-fp4-b200-dynamo-vllm"
RECIPE = "vllm/minimax-m3/b200-fp4/8k1k/2p1d-dep2-dep8-8k1k.yaml"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=True)


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the tree without the seed's recipe, an srt-slurm repository holding it: tag v0.4.2
    names it `at-v0.4.2`, main `at-main`)."""
    tmp = tmp_path_factory.mktemp("refs")
    tree = tmp / "tree"
    shutil.copytree(EXAMPLES, tree)
    own = tree / "benchmarks/multi_node/srt-slurm-recipes" / RECIPE
    text = own.read_text()
    own.unlink()
    repo = tmp / "srt-slurm"
    (repo / "recipes" / RECIPE).parent.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    for ref in ("v0.4.2", "main"):
        (repo / "recipes" / RECIPE).write_text(text.replace("\nname: ", f"\nname: at-{ref} # "))
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", ref)
        if ref != "main":
            git(repo, "tag", ref)
    return tree, repo


def _plan(tree: Path, *given: Path | str) -> Plan:
    project = load_project(tree)
    (dep,) = group_jobs(expand_project(project, SweepFilters(config_keys=(SEED_KEY,))))
    sources = SrtSources(SrtSlurmSources(list(given))) if given else None
    return srtctl_plan(dep, project, None, "/tmp/job", srt_slurm=sources)


def _srt_warnings(plan: Plan) -> list[str]:
    return [w for w in plan.warnings if "srt-slurm" in w and "clones" in w]


def _name(plan: Plan) -> str:
    return str(yaml.safe_load(plan.files[0].content)["name"])


def test_a_bundle_gives_the_recipe_of_the_ref_the_job_clones(
    trees: tuple[Path, Path], tmp_path: Path
) -> None:
    tree, repo = trees
    bundle = tmp_path / "refs.bundle"
    git(repo, "bundle", "create", str(bundle), "--all")
    plan = _plan(tree, bundle)
    assert _name(plan) == "at-v0.4.2"
    assert "srt-slurm NVIDIA/srt-slurm@v0.4.2: the ref the job's launcher clones" in plan.notes
    assert _srt_warnings(plan) == []


def test_a_clone_at_another_ref_still_gives_the_jobs_ref(trees: tuple[Path, Path]) -> None:
    tree, repo = trees  # the clone's working tree is main; v0.4.2 comes from its history
    assert _name(_plan(tree, repo)) == "at-v0.4.2"


def test_a_copy_of_unknown_ref_stands_in_alone_and_says_so(
    trees: tuple[Path, Path], tmp_path: Path
) -> None:
    tree, repo = trees
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".git"))
    plan = _plan(tree, copy)
    assert _name(plan) == "at-main"
    (warning,) = _srt_warnings(plan)
    assert "clones srt-slurm NVIDIA/srt-slurm@v0.4.2" in warning and "ref is unknown" in warning
    named = _plan(tree, f"{copy}@v0.4.2")  # the user says which ref it is: no warning
    assert _name(named) == "at-main" and _srt_warnings(named) == []


def test_a_ref_no_source_holds_is_refused_with_the_ref_named(
    trees: tuple[Path, Path], tmp_path: Path
) -> None:
    tree, repo = trees
    bundle = tmp_path / "main.bundle"
    git(repo, "bundle", "create", str(bundle), "main")
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".git"))
    with pytest.raises(ConfigError) as info:
        _plan(tree, bundle, copy)  # the copy of unknown ref stands in for no ref beside it
    shown = info.value.render()
    assert "the srt-slurm the launcher clones, NVIDIA/srt-slurm@v0.4.2" in shown
    assert "PATH@REF" in shown
    with pytest.raises(ConfigError, match="in neither the tree or an srt-slurm source"):
        _plan(tree)


def test_the_plan_cli_reads_the_sources_once_and_refuses_a_bad_one_once(
    trees: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`plan --backend srtctl --srt-slurm ...` (repeatable): the job at its ref; a source
    that cannot be read is one error, exit 2, before any job is planned."""
    from inferbench.cli.main import main

    tree, repo = trees
    bundle = tmp_path / "refs.bundle"
    git(repo, "bundle", "create", str(bundle), "--all")
    args = ["plan", SEED_KEY, "--root", str(tree), "--backend", "srtctl", "--format", "json"]
    with pytest.raises(SystemExit) as exited:
        main([*args, "--srt-slurm", str(bundle), "--srt-slurm", str(repo)])
    assert exited.value.code in (0, None)
    (plan,) = json.loads(capsys.readouterr().out)
    assert "name: at-v0.4.2" in plan["files"][0]["content"]
    with pytest.raises(SystemExit) as exited:
        main([*args, "--srt-slurm", f"{bundle}@v0.4.2"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("whose refs are known by name") == 1 and "cannot plan" not in err
