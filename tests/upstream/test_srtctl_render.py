"""The srtctl backend on the real InferenceX tree, judged by the real srtctl.

Every multinode job of the tree is planned for srtctl with the srt-slurm checkout beside it
(for the `recipes/...` references InferenceX overlays onto srt-slurm). A job that cannot be
planned must say why in one of the ways that are facts about the tree: it is not an srtctl
job (no CONFIG_FILE, or one that is not an srt-slurm recipe), or its recipe is in neither
the tree nor the checkout. Every rendered recipe passes the real `srtctl dry-run` with its
rendered srtslurm.yaml, and keeps every key of the recipe srtctl itself resolves from the
source (overrides merged by srtctl's code), apart from the fields inferbench owns.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from inferbench.config.project import load_project
from inferbench.config.srt_job import RunnerLaunchers
from inferbench.config.srt_slurm_refs import SrtSlurmSources
from inferbench.core.errors import InferbenchError
from inferbench.launch.deployment import Deployment, group_jobs
from inferbench.launch.plan import Plan
from inferbench.launch.srtcluster import srtctl_catalog
from inferbench.launch.srtplan import SrtSources, recipe_reference, srtctl_plan
from inferbench.matrix.expand import expand_project
from inferbench.matrix.filters import SweepFilters

DRIVER = Path(__file__).with_name("srtctl_dry_run.py")
MARK = "@@srtctl-dry-run "
# Why a multinode job may have no srtctl plan on the real tree (anything else is a bug).
ACCEPTED = (
    "so the job is not an srtctl job",  # no CONFIG_FILE / not an srt-slurm recipe reference
    "is in neither the tree or",  # the recipe is in no tree we have (another srt-slurm ref)
    "rejects its recipe: ",  # srtctl's schema rejects it (keys of another srt-slurm version)
    # A real defect: a key written twice in one mapping. srtctl's PyYAML keeps the last value
    # without a word; inferbench will not guess which one the author meant.
    ": duplicate key ",
)
# Where inferbench sets a value of its own; everything else must be srtctl's resolution.
OWNED: tuple[tuple[str, ...], ...] = (
    ("model", "path"),
    ("model", "container"),
    ("benchmark", "isl"),
    ("benchmark", "osl"),
    ("benchmark", "concurrencies"),
    ("benchmark", "env", "CONC"),
    ("benchmark", "env", "CONC_LIST"),
    ("frontend", "env", "CONC"),
)
# srtctl would print the HF model check of `identity:` blocks; keep it off the network.
OFFLINE = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}


@dataclass(frozen=True)
class Rendered:
    planned: list[tuple[Deployment, Plan]]
    refused: list[tuple[Deployment, str]]


@pytest.fixture(scope="module")
def rendered(inferencex_tree: Path, srt_slurm_tree: Path) -> Rendered:
    project = load_project(inferencex_tree)
    deps = group_jobs(expand_project(project, SweepFilters(node_type="multi-node")))
    catalog = srtctl_catalog(project)
    srt = SrtSources(SrtSlurmSources([srt_slurm_tree]), RunnerLaunchers(project))
    planned, refused = [], []
    for dep in deps:
        try:
            plan = srtctl_plan(dep, project, None, "/job", catalog=catalog, srt_slurm=srt)
        except InferbenchError as exc:
            refused.append((dep, exc.render()))
        else:
            planned.append((dep, plan))
    return Rendered(planned, refused)


def _driver(python: Path, *args: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [str(python), str(DRIVER), *args],
        capture_output=True,
        text=True,
        timeout=1800,
        env={**os.environ, **OFFLINE},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line[len(MARK) :]) for line in done.stdout.splitlines() if MARK in line]


def test_every_multinode_job_srtctl_could_run_is_planned(rendered: Rendered) -> None:
    unexpected = [f"{d.config_key}: {why}" for d, why in rendered.refused]
    unexpected = [line for line in unexpected if not any(a in line for a in ACCEPTED)]
    assert unexpected == [], "\n".join(unexpected[:20])
    scenarios = {d.scenario for d, _ in rendered.planned}
    assert scenarios == {"fixed-seq-len", "agentic-coding"}
    engines = {str(p.engine) for _, p in rendered.planned}
    assert engines == {"sglang", "vllm", "trtllm"}


# The refused jobs of the real tree by reason (docs/conformance.md lists them).
REFUSED = {"not an srtctl job": 35, "recipe in neither tree": 28, "srtctl rejects it": 18}


def test_every_refused_job_is_one_srtctl_could_not_run(
    rendered: Rendered, srtctl_python: Path, inferencex_tree: Path, srt_slurm_tree: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    """A job is refused only where srtctl itself could not run it from these trees: it has
    no srt-slurm recipe reference (its launcher runs it some other way), the file it names is
    in neither tree (checked on disk, not by inferbench's resolver), or srtctl's own schema
    rejects the recipe, for the key inferbench names."""
    project = load_project(inferencex_tree)
    prefix = project.layout.recipe_prefix
    counts: Counter[str] = Counter()
    rejected: dict[str, str] = {}  # copied source file -> the key inferbench names
    for dep, why in rendered.refused:
        written = dep.settings.get("CONFIG_FILE") or ""
        if "so the job is not an srtctl job" in why:
            assert not written.startswith(prefix), why
            assert not written or not (inferencex_tree / written).is_file(), why  # no repo path
            counts["not an srtctl job"] += 1
        elif "is in neither the tree or" in why:
            rest = written.split(":", 1)[0].removeprefix(prefix)
            assert not (srt_slurm_tree / "recipes" / rest).exists(), why
            assert not (inferencex_tree / project.layout.recipes / rest).exists(), why
            counts["recipe in neither tree"] += 1
        elif "rejects its recipe: " in why:
            resolved = project.resolve_recipe(
                recipe_reference(dep, project), srt_slurm=srt_slurm_tree
            )
            copy_to = tmp_path / "rejected" / f"{len(rejected):03d}.yaml"
            copy_to.parent.mkdir(exist_ok=True)
            copy_to.write_bytes(resolved.path.read_bytes())
            key = why.split("rejects its recipe: ", 1)[1].split(":", 1)[0]
            rejected[copy_to.name] = key.rsplit(".", 1)[-1]
            counts["srtctl rejects it"] += 1
        else:
            pytest.fail(f"{dep.config_key}: refused for a reason srtctl was not asked about: {why}")
    done = subprocess.run(
        [str(srtctl_python), str(Path(__file__).with_name("srtctl_verdicts.py")),
         str(tmp_path / "rejected")],
        capture_output=True, text=True, timeout=600, check=True,
    )  # fmt: skip
    verdicts = json.loads(done.stdout)
    for name, key in rejected.items():
        errors = [e for e in verdicts[name].values() if e is not None]
        assert errors and all(f"'{key}': ['Unknown field.']" in e for e in errors), (name, errors)
    assert dict(counts) == REFUSED


@pytest.mark.slow
def test_every_rendered_recipe_passes_srtctl_dry_run(
    rendered: Rendered, srtctl_python: Path, inferencex_tree: Path, srt_slurm_tree: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    """Every rendering passes, except where srtctl rejects the source recipe itself (written
    for another srt-slurm version, e.g. keys this srtctl does not know): there srtctl must
    reject the source, dry-run as it is with the same srtslurm.yaml, for the same reason."""
    project = load_project(inferencex_tree)
    jobs: dict[tuple[str, ...], tuple[Deployment, Path]] = {}  # identical renderings: once
    for dep, plan in rendered.planned:
        key = tuple(f.content for f in plan.files)
        if key in jobs:
            continue
        job = tmp_path / f"{len(jobs):04d}-{dep.fingerprint[:12]}"
        job.mkdir()
        for file in plan.files:
            (job / file.name).write_text(file.content)
        jobs[key] = (dep, job)
    results = _driver(srtctl_python, *(str(job) for _, job in jobs.values()))
    assert len(results) == len(jobs)
    by_dir = {job.name: dep for dep, job in jobs.values()}
    failed = {Path(r["job"]).name: r["tail"] for r in results if r["rc"] != 0}
    sources = {}
    for name in failed:
        dep = by_dir[name]
        resolved = project.resolve_recipe(recipe_reference(dep, project), srt_slurm=srt_slurm_tree)
        source = tmp_path / "sources" / name
        source.mkdir(parents=True)
        (source / "recipe.yaml").write_bytes(resolved.path.read_bytes())
        (source / "srtslurm.yaml").write_bytes((tmp_path / name / "srtslurm.yaml").read_bytes())
        sources[name] = source
    source_results = {
        Path(r["job"]).name: r for r in _driver(srtctl_python, *map(str, sources.values()))
    }
    ours = []
    for name, tail in failed.items():
        reason = _flat(tail).rpartition("recipe.yaml:")[2].strip()
        source = source_results[name]
        if source["rc"] == 0 or not reason or reason not in _flat(source["tail"]):
            ours.append(f"{name}: {tail[-600:]}")
    assert ours == [], "\n".join(ours[:10])
    assert len(failed) < len(jobs) // 4  # most of the tree is valid for this srtctl


def _flat(text: str) -> str:
    return " ".join(text.split())


def _without_owned(data: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(data)
    for path in OWNED:
        node: Any = data
        for part in path[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(path[-1], None)
    bench = data.get("benchmark")
    if isinstance(bench, dict) and bench.get("env") == {}:
        bench.pop("env")  # an agentic recipe that had no environment gets CONC only
    if data.get("benchmark") in ({}, {"type": "sa-bench"}):
        data.pop("benchmark")  # a recipe without a benchmark gets inferbench's sa-bench
    return data


@dataclass(frozen=True)
class Resolved:
    """What srtctl's own loader resolves each rendered recipe and its source to."""

    pairs: dict[str, str]  # rendered file -> source reference
    recipes: dict[str, list[dict[str, Any]]]  # reference -> its resolved variants


@pytest.fixture(scope="module")
def resolved(
    rendered: Rendered, srtctl_python: Path, inferencex_tree: Path, srt_slurm_tree: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Resolved:  # fmt: skip
    project = load_project(inferencex_tree)
    folder = tmp_path_factory.mktemp("rendered")
    pairs: dict[str, str] = {}
    for i, (dep, plan) in enumerate(rendered.planned):
        source = project.resolve_recipe(recipe_reference(dep, project), srt_slurm=srt_slurm_tree)
        ours = folder / f"{i:04d}.yaml"
        ours.write_text(next(f.content for f in plan.files if f.name == "recipe.yaml"))
        pairs[str(ours)] = str(source.path) + (f":{source.selector}" if source.selector else "")
    references = [*pairs, *dict.fromkeys(pairs.values())]
    by_reference = {
        r["reference"]: r["recipes"] for r in _driver(srtctl_python, "resolve", *references)
    }
    return Resolved(pairs, by_reference)


def test_rendered_recipes_keep_what_srtctl_resolves(resolved: Resolved) -> None:
    """srtctl resolves the rendered recipe to what it resolves the source to (every
    variant of an override file), apart from the fields inferbench owns."""
    mismatched = []
    for ours, source in resolved.pairs.items():
        mine = [_without_owned(r) for r in resolved.recipes[ours]]
        theirs = [_without_owned(r) for r in resolved.recipes[source]]
        if mine != theirs:
            mismatched.append(f"{source}: {len(mine)} vs {len(theirs)} variants")
    assert mismatched == [], "\n".join(mismatched[:10])


def _concurrencies(recipe: dict[str, Any]) -> tuple[int, ...] | None:
    """benchmark.concurrencies as numbers: srtctl reads `[8]`, `8` and `"4x8"` alike."""
    bench = recipe.get("benchmark")
    value = bench.get("concurrencies") if isinstance(bench, dict) else None
    if value is None:
        return None
    items = value if isinstance(value, list) else str(value).split("x")
    return tuple(int(item) for item in items)


def test_rendered_recipes_run_their_own_concurrencies(resolved: Resolved) -> None:
    """InferenceX's launchers run `srtctl apply -f "$CONFIG_FILE"` unchanged: every recipe
    (every variant) that sets benchmark.concurrencies runs exactly those, whatever the master
    entry lists."""
    compared, rewritten = 0, []
    for ours, source in resolved.pairs.items():
        for mine, theirs in zip(resolved.recipes[ours], resolved.recipes[source], strict=True):
            if _concurrencies(theirs) is None:
                continue
            compared += 1
            if _concurrencies(mine) != _concurrencies(theirs):
                rewritten.append(f"{source}: {_concurrencies(theirs)} -> {_concurrencies(mine)}")
    assert rewritten == [], f"{len(rewritten)} of {compared}:\n" + "\n".join(rewritten[:10])
    assert compared >= 200  # the real tree: 297 renderings, nearly all with their own


def test_the_plan_cli_on_the_real_tree_is_pure_json(
    inferencex_tree: Path, srt_slurm_tree: Path, tmp_path: Path
) -> None:
    """`plan --json` of the whole multinode sweep: one JSON document on stdout, the jobs
    that cannot be planned on stderr, exit 1 (they exist: jobs of other launchers)."""
    done = subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", "plan", "*", "--multi-node"]
        + ["--root", str(inferencex_tree), "--backend", "srtctl", "--format", "json"]
        + ["--srt-slurm", str(srt_slurm_tree)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 1, done.stderr[-2000:]
    plans = json.loads(done.stdout)
    assert plans and all(p["backend"] == "srtctl" for p in plans)
    assert "Traceback" not in done.stderr and "jobs cannot be planned" in done.stderr
