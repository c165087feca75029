"""`inferbench run --engine vllm` on the local backend against the real vLLM (CPU build):
the server started and waited for, points measured, ingested, the server stopped with
nothing left behind; and Ctrl-C then `--resume` with neither a point lost nor one measured
twice. Each test starts its own servers (that is what it tests)."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

import pytest
from runcli import finish, measured, mid_point, start, state, the_run, wait_for

from .conftest import ENGINE, ingest, nothing_left, server_logs
from .vllm_cpu import KV_CACHE_GIB, TinyModel, logged_pids, vllm_tree

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.mark.timeout(420)
def test_run_measures_ingests_and_stops_the_server(
    tmp_path: Path, tiny_llama: TinyModel, vllm_environ: None
) -> None:
    tree = vllm_tree(tmp_path / "tree", tiny_llama.model_id, concs=(1, 2))
    runs = tmp_path / "runs"
    args = ("--root", str(tree), *ENGINE, "--max-prompts", "4", "--runs-dir", str(runs))
    code, out = finish(start(tmp_path, *args), timeout=400)
    assert code == 0, out
    run = the_run(runs)
    (job,) = state(run).jobs.values()
    assert job.status == "completed" and sorted(job.finished) == [1, 2], out
    for conc in (1, 2):
        (result,) = run.glob(f"*/results/conc{conc}.json")
        data = json.loads(result.read_text())
        assert data["completed"] == 4 and data["failed"] == 0 and data["max_concurrency"] == conc
        assert data["model_id"] == tiny_llama.model_id
    (log,) = server_logs(run)
    text = log.read_text()
    # the server got the flags appended and the VLLM_ variable of the run's environment
    assert "enforce_eager=True" in text
    assert re.search(rf"Explicitly set \({float(KV_CACHE_GIB)}/[\d.]+\) GiB for KV cache", text)
    env = json.loads(next(run.glob("*/env.json")).read_text())["environment"]
    assert env["VLLM_CPU_KVCACHE_SPACE"] == KV_CACHE_GIB
    assert ingest(run, tmp_path / "results.sqlite") == [1, 2]
    nothing_left(run)


@pytest.mark.timeout(600)
def test_ctrl_c_then_resume_loses_and_repeats_no_point(
    tmp_path: Path, tiny_llama: TinyModel, vllm_environ: None
) -> None:
    # osl 256, 12 prompts a point: a point lasts seconds, so the signal lands inside one
    tree = vllm_tree(tmp_path / "tree", tiny_llama.model_id, concs=(1, 2, 4), osl=256)
    runs = tmp_path / "runs"
    base = (*ENGINE, "--max-prompts", "12", "--runs-dir", str(runs))
    proc = start(tmp_path, "--root", str(tree), *base)
    wait_for(lambda: mid_point(runs, 1), timeout=300, what="the second point")
    proc.send_signal(signal.SIGINT)  # once: the running point finishes, nothing new starts
    code, out = finish(proc, timeout=240)
    run = the_run(runs)
    assert code == 130, out
    assert f"inferbench run --resume {run.name}" in out
    first = measured(run)
    assert sum(first.values()) == 2 and set(first.values()) == {1}, first
    nothing_left(run)

    code, out = finish(start(tmp_path, "--resume", run.name, "--runs-dir", str(runs)), 400)
    assert code == 0, out
    counts = measured(run)
    assert sorted(conc for _, conc in counts) == [1, 2, 4]
    assert set(counts.values()) == {1}, f"a point measured twice: {counts}"
    (job,) = state(run).jobs.values()
    assert job.status == "completed" and sorted(job.finished) == [1, 2, 4]
    assert len(list(run.glob("*/results/conc*.json"))) == 3
    assert len(logged_pids(server_logs(run)[0])) >= 4  # two servers' processes, one log
    nothing_left(run)
