"""`plan` predicts exactly what InferenceX's own single-node benchmark scripts start.

For every script the active single-node entries of the real tree resolve to (both scenarios,
through the launchers of each entry's runner), the engine argv that `plan` captured for the
first deployment using it, at its lowest concurrency, equals what an independent recorder
(script_recorder.py: its own copy of the tree, its own stand-ins) sees the same script start
with the same environment. One job per script keeps the test near two minutes on two cores.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from pathlib import Path

import pytest

from inferbench.launch.planner import PlanOptions
from inferbench.launch.sweep import load_deployments
from inferbench.launch.treescript.planning import choose_script, point_env, script_plan
from inferbench.matrix.filters import SweepFilters

from .script_recorder import Recorder

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
# bash's words for a container path that does not exist here (`cd: /workspace: No such ...`)
_UNMAPPED = re.compile(r"(?:/workspace|/mnt/hf_hub_cache)\S*: No such file or directory")


def test_plan_argv_equals_what_each_script_starts(inferencex_tree: Path, tmp_path: Path) -> None:
    project, deployments = load_deployments(inferencex_tree, SweepFilters())
    assert project.runners is not None
    labels = project.runners.registry.labels
    recorder = Recorder(inferencex_tree, tmp_path)
    options = PlanOptions(evals=False)
    scripts: Counter[str] = Counter()
    started: set[str] = set()
    no_script: list[str] = []
    mismatches: list[str] = []
    unmapped: list[str] = []
    deployments_seen = 0
    for dep in deployments:
        if dep.multinode:
            continue
        choice = choose_script(dep, inferencex_tree, labels)
        if choice is None:
            no_script.append(dep.config_key or dep.fingerprint)
            continue
        deployments_seen += 1
        if choice.script in scripts:
            continue
        one = dataclasses.replace(dep, concurrencies=dep.concurrencies[:1])
        plan = script_plan(one, inferencex_tree, labels, options)
        assert plan is not None and plan.script is not None
        assert plan.script.script == choice.script
        (point,) = plan.script.points
        predicted = [list(e.argv) for e in point.engines]
        env = point_env(one, choice, one.concurrencies[0], options)
        calls = recorder.record(choice.script, env)
        recorded = [c["argv"] for c in calls if c["kind"] == "engine"]
        # a container path the staging missed fails where the script first uses it
        for who, log in (("plan", point.log_tail), ("recorder", recorder.log)):
            if _UNMAPPED.search(log):
                unmapped.append(f"{who}: {choice.script}: {_UNMAPPED.search(log)}")
        scripts[choice.script] += 1
        if recorded:
            started.add(choice.script)
        if predicted != recorded:
            mismatches.append(f"{dep.config_key} {choice.script}:\n  {predicted}\n  {recorded}")
    assert not mismatches, "\n".join(mismatches)
    assert not unmapped, "\n".join(unmapped)
    fixed = {s for s in scripts if "/fixed_seq_len/" in s}
    agentic = {s for s in scripts if "/agentic/" in s}
    print(
        f"\n{deployments_seen} deployments with a script, {len(scripts)} scripts "
        f"({len(fixed)} fixed-seq-len, {len(agentic)} agentic); an engine started by "
        f"{len(started & fixed)} fixed-seq-len and {len(started & agentic)} agentic scripts; "
        f"no script: {sorted(set(no_script))}"
    )
    # every fixed-seq-len script reaches its engine under the stand-ins; agentic scripts that
    # patch files of their container (/sgl-workspace, installed packages) stop before theirs
    assert fixed <= started
    assert len(fixed) >= 70 and len(agentic) >= 30
    assert len(started & agentic) >= 25


def test_the_issue_example_is_planned_as_the_tree_runs_it(inferencex_tree: Path) -> None:
    filters = SweepFilters(config_keys=("dsr1-fp8-h200-sglang",), seq_lens=((8192, 1024),))
    project, deployments = load_deployments(inferencex_tree, filters)
    assert project.runners is not None
    (dep,) = deployments
    dep = dataclasses.replace(dep, concurrencies=(64,))
    plan = script_plan(dep, inferencex_tree, project.runners.registry.labels, PlanOptions())
    assert plan is not None and plan.script is not None
    assert plan.script.script == "benchmarks/single_node/fixed_seq_len/dsr1_fp8_h200.sh"
    (engine,) = plan.script.points[0].engines
    argv = " ".join(engine.argv)
    assert argv.startswith("python3 -m sglang.launch_server --model-path deepseek-ai/")
    for flag in (
        "--disable-radix-cache --max-running-requests 256 --cuda-graph-max-bs 256",
        "--chunked-prefill-size 32768",
        "--mem-fraction-static 0.82 --attention-backend flashinfer --stream-interval 10",
    ):
        assert flag in argv
    assert engine.env["TORCH_CUDA_ARCH_LIST"] == "9.0"
