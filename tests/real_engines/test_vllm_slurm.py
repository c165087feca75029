"""`inferbench run --backend slurm --engine vllm` on the one-node Slurm of CI
(`.ci/services/20-slurm.sh`): the real vLLM starts inside the allocation, the points are
measured there, and when the job ends nothing is left running or queued.

Skipped with a reason where `sinfo` does not answer; under CI=true, which installs Slurm,
it runs and fails instead (`services.needs_service`, as the other slurm tests)."""

from __future__ import annotations

import contextlib
import json
import re
import socket
from pathlib import Path

import pytest
from runcli import finish, queue_drained, slurm_answers, start, state, the_run

from services import needs_service

from .conftest import ENGINE, ingest, nothing_left, server_logs
from .vllm_cpu import KV_CACHE_GIB, TinyModel, listening, vllm_tree

pytestmark = [
    pytest.mark.slurm,
    pytest.mark.integration,
    pytest.mark.slow,
    needs_service(not slurm_answers(), "no Slurm: sinfo does not answer"),
]
SLURM_PORT = 8000  # the port the plan names; the allocation moves to a free one


@pytest.mark.timeout(600)
def test_slurm_run_serves_measures_and_leaves_nothing(
    tmp_path: Path, tiny_llama: TinyModel, vllm_environ: None
) -> None:
    tree = vllm_tree(tmp_path / "tree", tiny_llama.model_id, concs=(1, 2))
    runs = tmp_path / "runs"
    args = ("--root", str(tree), "--backend", "slurm", *ENGINE, "--max-prompts", "4")
    with contextlib.ExitStack() as stack:  # the planned port taken, as by a job beside it
        if not listening(SLURM_PORT):
            taken = stack.enter_context(socket.socket())
            taken.bind(("127.0.0.1", SLURM_PORT))
            taken.listen()
        code, out = finish(start(tmp_path, *args, "--runs-dir", str(runs)), timeout=560)
    run = the_run(runs)
    assert code == 0, out + "".join(p.read_text() for p in run.glob("*/logs/slurm-*.out"))
    (job,) = state(run).jobs.values()
    assert job.status == "completed" and sorted(job.finished) == [1, 2], out
    assert (next(run.glob("*/slurm-job-id")).read_text().strip()).isdigit()
    served = json.loads(next(run.glob("*/inalloc-result.json")).read_text())["base_url"]
    assert served.startswith("http://127.0.0.1:") and not served.endswith(f":{SLURM_PORT}")
    for conc in (1, 2):
        data = json.loads(next(run.glob(f"*/results/conc{conc}.json")).read_text())
        assert data["completed"] == 4 and data["failed"] == 0 and data["max_concurrency"] == conc
    (log,) = server_logs(run)
    text = log.read_text()
    assert "enforce_eager=True" in text  # the flags and the environment reached the job
    assert re.search(rf"Explicitly set \({float(KV_CACHE_GIB)}/[\d.]+\) GiB for KV cache", text)
    assert ingest(run, tmp_path / "results.sqlite") == [1, 2]
    assert queue_drained(run)
    nothing_left(run)
