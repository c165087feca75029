"""Every `vllm serve` flag inferbench writes is accepted by the installed vLLM's own parser.

The command lines are what `inferbench plan --json --engine vllm` prints for the vLLM
single-node jobs of a tree (agentic ones included); vLLM's `serve` parser, its checks of
parsed serve arguments and its engine-argument constructor judge them in the vLLM venv.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from upstream.oracles import upstream_tree

from .vllm_cpu import REPO_ROOT

PARSER = Path(__file__).with_name("vllm_flag_parser.py")
pytestmark = [pytest.mark.integration]


def _plans(root: Path) -> list[dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", "plan", "*", "--root", str(root),
         "--engine", "vllm", "--framework", "vllm", "--single-node", "--format", "json"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    plans: list[dict[str, object]] = json.loads(done.stdout)
    return plans


def _verdicts(vllm_bin_dir: Path, argvs: list[list[str]]) -> list[dict[str, object]]:
    done = subprocess.run(
        [str(vllm_bin_dir / "python"), str(PARSER)],
        input=json.dumps(argvs),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    verdicts: list[dict[str, object]] = json.loads(done.stdout)
    return verdicts


def _check_tree(vllm_bin_dir: Path, root: Path) -> list[dict[str, object]]:
    plans = _plans(root)
    argvs = [list(proc["argv"]) for plan in plans for proc in plan["processes"]]  # type: ignore[attr-defined]
    assert argvs and all(argv[:2] == ["vllm", "serve"] for argv in argvs)
    rejected = [v for v in _verdicts(vllm_bin_dir, argvs) if v["error"] is not None]
    assert not rejected, "\n".join(f"{v['error']}\n  in: {' '.join(v['argv'])}" for v in rejected)  # type: ignore[arg-type]
    return plans


@pytest.mark.slow
def test_examples_vllm_jobs_parse(vllm_bin_dir: Path) -> None:
    plans = _check_tree(vllm_bin_dir, REPO_ROOT / "examples")
    assert any(plan["bench"]["agentic"] for plan in plans)  # type: ignore[index]


@pytest.mark.slow
@pytest.mark.upstream
def test_inferencex_vllm_jobs_parse(vllm_bin_dir: Path) -> None:
    plans = _check_tree(vllm_bin_dir, upstream_tree("inferencex"))
    assert len(plans) >= 10 and any(plan["bench"]["agentic"] for plan in plans)  # type: ignore[index]


def test_the_parser_rejects_what_vllm_rejects(vllm_bin_dir: Path) -> None:
    """The check can fail: an unknown flag and a bad value are reported, a good line is not."""
    good = ["vllm", "serve", "m", "--max-num-seqs", "4", *("--enforce-eager",)]
    verdicts = _verdicts(
        vllm_bin_dir,
        [good, ["vllm", "serve", "m", "--no-such-flag"], ["vllm", "serve", "m", "-tp", "x"]],
    )
    assert verdicts[0]["error"] is None
    assert "unrecognized arguments: --no-such-flag" in str(verdicts[1]["error"])
    assert "invalid int value: 'x'" in str(verdicts[2]["error"])
