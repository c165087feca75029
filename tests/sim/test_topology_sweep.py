"""`sim estimate --sweep-topologies`: no base topology needed, --concurrency honoured, the
throughput columns of plain `estimate`, and the Pareto frontier of the layouts it tried."""

from __future__ import annotations

import re

import pytest

from inferbench.core.errors import InputError
from inferbench.sim.estimate import estimate
from inferbench.sim.request import DeploymentRequest, build_deployment
from inferbench.sim.summary import point
from inferbench.sim.topologies import pareto, sweep_topologies

from .clirun_sim import run_sim

# Llama-3.1-70B in bf16 holds 141 GB of weights: no H100 serves it alone (TP1 is refused)
BIG = ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "h100"]
LENGTHS = ["--isl", "1024", "--osl", "256"]


def test_no_base_topology_is_needed_and_concurrency_is_honoured(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = run_sim(
        capsys, "estimate", *BIG, *LENGTHS, "--sweep-topologies", "--concurrency", "16"
    )
    assert code == 0, out
    assert "on 8x h100" in out  # the budget: one node, without --tp or --gpu-budget
    frontier = re.search(r"Pareto frontier: (\d+) of (\d+) points, (\d+) layouts tried", out)
    assert frontier is not None, out
    front, points, layouts = map(int, frontier.groups())
    assert points == layouts > 1  # one point per layout: only concurrency 16 ran
    assert 1 <= front <= points


def test_the_sweep_reports_throughput_as_plain_estimate_does() -> None:
    opts = DeploymentRequest(
        model="meta-llama/Llama-3.1-70B-Instruct", gpu="h100", isl=1024, osl=256
    )
    base = build_deployment(opts, sweeping=True)
    points = sweep_topologies(base, 4, (16,))
    (tp4,) = [p for p in points if p.topology == "TP4"]
    same = build_deployment(DeploymentRequest(**{**opts.__dict__, "tp": 4}))
    want = point(estimate(same, 16, num_prompts=32))  # the sweep's 2 x concurrency requests
    assert tp4.total_tok_s_gpu == pytest.approx(want.total_tok_s_per_gpu)
    assert tp4.output_tok_s_gpu == pytest.approx(want.output_tok_s_per_gpu)
    assert tp4.total_tok_s_gpu > 4 * tp4.output_tok_s_gpu  # isl 1024, osl 256: about 5x
    front = pareto(points)
    assert front and all(p in points for p in front)


def test_the_table_names_total_and_output_throughput(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_sim(
        capsys, "estimate", *BIG, *LENGTHS, "--sweep-topologies", "--concurrency", "8",
        "--gpu-budget", "4",
    )  # fmt: skip
    assert code == 0, out
    header = next(line for line in out.splitlines() if "topology" in line)
    assert re.search(r"tok/s/GPU .*out tok/s/GPU .*tok/s/user", header), header


def test_no_layout_that_fits_is_a_clear_error() -> None:
    opts = DeploymentRequest(model="deepseek-ai/DeepSeek-R1-0528", gpu="h100", isl=1024, osl=256)
    base = build_deployment(opts, sweeping=True)
    with pytest.raises(InputError, match=r"no layout of DeepSeek-R1 on 2x h100") as err:
        sweep_topologies(base, 2, (8,))
    assert "--gpu-budget" in (err.value.hint or "")
