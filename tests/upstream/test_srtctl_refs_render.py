"""The srtctl backend at the srt-slurm ref each job's launcher clones, on the real trees.

Every multinode job of the real InferenceX tree is planned for srtctl with the srt-slurm refs
bundle (`--srt-slurm ../shared/upstream/srt-slurm-refs.bundle`): each recipe is read from,
and judged by the schema of, the ref its launcher clones, as `check` chooses it. It plans at
least as many jobs as the one checkout beside the tree (main) does, renders the recipes of
each ref (not main's), and every rendering at a ref passes `srtctl dry-run` run with that
ref's own srtctl (its `src/` first on PYTHONPATH in the srtctl venv).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from inferbench.config.project import Project, load_project
from inferbench.config.srt_job import RunnerLaunchers, SrtChoice
from inferbench.config.srt_slurm_refs import SrtSlurmSources
from inferbench.core.errors import InferbenchError
from inferbench.launch.deployment import Deployment, group_jobs
from inferbench.launch.plan import Plan
from inferbench.launch.srtcluster import srtctl_catalog
from inferbench.launch.srtplan import SrtSources, job_srt, srtctl_plan
from inferbench.matrix.expand import expand_project
from inferbench.matrix.filters import SweepFilters

DRIVER = Path(__file__).with_name("srtctl_dry_run.py")
MARK = "@@srtctl-dry-run "
OFFLINE = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
# Why a multinode job may have no plan at its ref (anything else is a bug):
ACCEPTED = (
    "so the job is not an srtctl job",  # no CONFIG_FILE / not an srt-slurm recipe reference
    "is in neither the tree or",  # the recipe is in no tree at hand (see the next test)
    "rejects its recipe: ",  # the srtctl of the job's ref rejects it (keys of another ref)
)
EXAMPLE = "recipes/trtllm/gb300-fp8/8k1k/mtp/ctx1_gen4_tep8_batch1_eplb0_mtp3_8.yaml"


@dataclass(frozen=True)
class Planned:
    planned: list[tuple[Deployment, Plan, SrtChoice]]
    refused: list[tuple[Deployment, str]]


def _plan_all(project: Project, given: list[Path]) -> Planned:
    deps = group_jobs(expand_project(project, SweepFilters(node_type="multi-node")))
    catalog = srtctl_catalog(project)
    srt = SrtSources(SrtSlurmSources(given), RunnerLaunchers(project))
    planned, refused = [], []
    for dep in deps:
        try:
            plan = srtctl_plan(dep, project, None, "/job", catalog=catalog, srt_slurm=srt)
        except InferbenchError as exc:
            refused.append((dep, exc.render()))
        else:
            planned.append((dep, plan, job_srt(dep, project, srt)))
    return Planned(planned, refused)


@pytest.fixture(scope="module")
def project(inferencex_tree: Path) -> Project:
    return load_project(inferencex_tree)


@pytest.fixture(scope="module")
def at_refs(project: Project, srt_slurm_refs_bundle: Path) -> Planned:
    return _plan_all(project, [srt_slurm_refs_bundle])


@pytest.fixture(scope="module")
def with_checkout(project: Project, srt_slurm_tree: Path) -> Planned:
    return _plan_all(project, [srt_slurm_tree])


def test_the_bundle_plans_at_least_what_the_checkout_plans(
    at_refs: Planned, with_checkout: Planned
) -> None:
    assert len(at_refs.planned) >= len(with_checkout.planned)
    unexpected = [f"{d.config_key}: {why}" for d, why in at_refs.refused]
    assert [u for u in unexpected if not any(a in u for a in ACCEPTED)] == []
    # every job the checkout plans and the bundle does not is one whose launcher clones a
    # ref the bundle does not hold (a fork): main's file is not the one that job runs
    ours = {d.fingerprint for d, _, _ in at_refs.planned}
    lost = [(d, why) for d, why in at_refs.refused if d.fingerprint not in ours]
    checkout_planned = {d.fingerprint for d, _, _ in with_checkout.planned}
    for dep, why in lost:
        if dep.fingerprint in checkout_planned:
            assert "the srt-slurm the launcher clones" in why and "not given" in why, why


def test_upstream_recipes_are_read_at_the_ref_the_launcher_clones(at_refs: Planned) -> None:
    """dsr1-fp8-gb300-dynamo-trt's recipes come from the ref launch_gb300-nv.sh clones,
    sa-submission-q2-2026 (main's file has 16384 and two more environment variables)."""
    found = []
    for dep, plan, choice in at_refs.planned:
        if dep.config_key != "dsr1-fp8-gb300-dynamo-trt" or EXAMPLE not in plan.notes[0]:
            continue
        assert choice.at_ref and choice.wanted == "NVIDIA/srt-slurm@sa-submission-q2-2026"
        assert "of NVIDIA/srt-slurm@sa-submission-q2-2026 for cluster gb300-nv" in plan.notes[0]
        text = plan.files[0].content
        recipe = yaml.safe_load(text)
        found.append(recipe["backend"]["trtllm_config"]["prefill"]["max_num_tokens"])
        assert "ENABLE_CONFIGURABLE_MOE" not in text and "TRTLLM_FORCE_COMM_METHOD" not in text
    assert found and set(found) == {8232}


def test_the_refs_each_job_runs(at_refs: Planned) -> None:
    """Nearly every rendering is at its ref; the others name the ref they would need."""
    refs = Counter(c.wanted for _, _, c in at_refs.planned if c.at_ref)
    assert len(refs) >= 10  # the launchers clone many refs, not one
    away = [p for _, p, c in at_refs.planned if not c.at_ref]
    assert len(away) < len(at_refs.planned) // 10
    for plan in away:
        assert any("the job's launcher clones srt-slurm" in w for w in plan.warnings)


def _driver(python: Path, jobs: list[Path], src: Path) -> list[dict[str, Any]]:
    env = {**os.environ, **OFFLINE, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [str(python), str(DRIVER), *map(str, jobs)],
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line[len(MARK) :]) for line in done.stdout.splitlines() if MARK in line]


@pytest.mark.slow
@pytest.mark.timeout(1800)  # about 400 dry-runs, one srtctl import per ref
def test_every_rendering_passes_dry_run_with_its_refs_srtctl(
    at_refs: Planned, srtctl_python: Path, tmp_path: Path
) -> None:
    by_ref: dict[Path, list[Path]] = defaultdict(list)
    seen: set[tuple[str, ...]] = set()
    for dep, plan, choice in at_refs.planned:
        if not choice.at_ref or choice.tree is None:
            continue  # a ref the bundle does not hold: no srtctl of it to ask
        key = (str(choice.tree.root), *(f.content for f in plan.files))
        if key in seen:
            continue
        seen.add(key)
        job = tmp_path / f"{len(seen):04d}-{dep.fingerprint[:12]}"
        job.mkdir()
        for file in plan.files:
            (job / file.name).write_text(file.content)
        by_ref[choice.tree.root].append(job)
    assert len(by_ref) >= 10
    failed = []
    for root, jobs in by_ref.items():
        results = _driver(srtctl_python, jobs, root / "src")
        assert len(results) == len(jobs)
        for result in results:
            assert Path(result["srtctl"]).is_relative_to(root / "src"), result["srtctl"]
            if result["rc"] != 0:
                name = Path(result["job"]).name
                failed.append(f"{root.name[:12]} {name}: {result['tail'][-600:]}")
    assert failed == [], "\n".join(failed[:10])
