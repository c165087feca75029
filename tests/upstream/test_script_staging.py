"""The staging follows InferenceX's scripts: on a copy of the real tree, `plan` of an agentic
vLLM job runs every point's script to its end (exit 0: the workspace that benchmark_lib.sh
defaults INFMAX_CONTAINER_WORKSPACE to exists), and of a job with evals it leaves nothing
outside its folder (no `eval_out-*` in /tmp, an empty TMPDIR)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _plan(tree: Path, tmpdir: Path, key: str) -> list[dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", "plan", key, "--root", str(tree),
         "--format", "json"],
        capture_output=True, text=True, timeout=500, check=False,
        env={**os.environ, "TMPDIR": str(tmpdir)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    plans: list[dict[str, object]] = json.loads(done.stdout)
    return plans


@pytest.mark.parametrize(
    "key", ["minimaxm3-fp8-h100-vllm-agentic-mtp", "dsv4-fp4-b200-vllm-agentic-mtp"]
)
def test_an_agentic_plan_runs_every_script_to_its_end(
    inferencex_tree: Path, tmp_path: Path, key: str
) -> None:
    tree, tmpdir = tmp_path / "tree", tmp_path / "tmpdir"
    shutil.copytree(inferencex_tree, tree, symlinks=True)
    tmpdir.mkdir()
    plans = _plan(tree, tmpdir, key)
    points = [p for plan in plans for p in plan["script"]["points"]]  # type: ignore[index]
    assert points
    assert {(p["concurrency"], p["exit_code"]) for p in points} == {
        (p["concurrency"], 0) for p in points
    }, [p["log_tail"][-600:] for p in points if p["exit_code"] != 0]
    assert all(not plan["warnings"] for plan in plans)
    assert list(tmpdir.iterdir()) == []


def test_a_plan_with_evals_leaves_nothing_outside_its_folder(
    inferencex_tree: Path, tmp_path: Path
) -> None:
    tree, tmpdir = tmp_path / "tree", tmp_path / "tmpdir"
    shutil.copytree(inferencex_tree, tree, symlinks=True)
    tmpdir.mkdir()
    before = set(Path("/tmp").glob("eval_out-*"))
    plans = _plan(tree, tmpdir, "dsv4-fp8-h200-vllm")
    evals = [
        p
        for plan in plans
        for p in plan["script"]["points"]  # type: ignore[index]
        if p["env"]["RUN_EVAL"] == "true"
    ]
    assert evals and all(p["exit_code"] == 0 for p in evals)
    # lm-eval was called (recorded, not run) with its output in the container's /tmp
    calls = [t for p in evals for t in p["tools"] if t[:3] == ["python3", "-m", "lm_eval"]]
    assert len(calls) == len(evals)
    assert all(c[c.index("--output_path") + 1].startswith("/tmp/eval_out-") for c in calls)
    assert list(tmpdir.iterdir()) == []
    assert set(Path("/tmp").glob("eval_out-*")) == before
