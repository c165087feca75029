"""docs/running.md, "Run a real engine on this machine": its worked example, run as written
(vLLM's CPU build from .ci/services/40-vllm.sh, the tiny model built by tools/tiny_model.py
into a folder the master entry names by path, one point measured and stored), in a sandbox
holding a copy of examples/ and the repository's .ci and tools folders. The doc-test runner
skips that block, pointing here."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from inferbench.results.store import open_store

from .vllm_cpu import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "tests" / "docs"))

from blocks import Block, read_blocks

pytestmark = [pytest.mark.integration, pytest.mark.slow]
DOC = Path("docs/running.md")
SECTION = "## Run a real engine on this machine"


def worked_example() -> Block:
    """The one shell block of the section."""
    lines = (REPO_ROOT / DOC).read_text(encoding="utf-8").splitlines()
    start = lines.index(SECTION) + 1  # 1-based line of the heading
    end = next(n for n in range(start + 1, len(lines) + 1) if lines[n - 1].startswith("## "))
    (block,) = [b for b in read_blocks(DOC, REPO_ROOT) if start < b.line < end]
    assert block.skip is not None and Path(__file__).name in block.skip
    return block


def _sandbox(tmp: Path) -> Path:
    work = tmp / "work"
    work.mkdir()
    subprocess.run(["cp", "-r", str(REPO_ROOT / "examples"), str(work)], check=True)
    for name in (".ci", "tools"):  # read only: the service script and the model builder
        (work / name).symlink_to(REPO_ROOT / name)
    return work


@pytest.mark.timeout(1500)
def test_the_worked_example_runs_as_written(tmp_path: Path, vllm_bin_dir: Path) -> None:
    block = worked_example()
    work = _sandbox(tmp_path)
    logs = tmp_path / "logs"
    logs.mkdir()
    script = "".join(
        f'{{ {command}\n}} > {logs}/{i}.out 2>&1 < /dev/null\necho "$?" >> {logs}/codes\n'
        for i, command in enumerate(block.commands)
    )
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "COLUMNS": "120",
    }
    proc = subprocess.Popen(["bash", "-c", script], cwd=work, env=env, start_new_session=True)
    try:
        proc.wait(timeout=1400)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    codes_file = logs / "codes"
    codes = [int(c) for c in codes_file.read_text().split()] if codes_file.is_file() else []
    outs = [(logs / f"{i}.out").read_text(errors="replace") for i in range(len(codes))]
    for command, code, out in zip(block.commands, codes, outs, strict=True):
        assert code == 0, f"`{command}` exited {code}:\n{out[-3000:]}"
    assert len(codes) == len(block.commands), f"still running: {block.commands[len(codes)]}"
    model = work / "tiny-llama"
    plan = next(out for command, out in zip(block.commands, outs, strict=True)
                if command.startswith("inferbench plan"))  # fmt: skip
    assert f"vllm serve {model} --host 127.0.0.1" in plan and "--enforce-eager" in plan
    with open_store(f"sqlite:///{work / 'results.sqlite'}", create=False) as store:
        (record,) = [s.record for s in store.query()]
    assert record.identity.model == str(model) and record.identity.concurrency == 4
    assert record.identity.hardware() == "cpu" and record.provenance.planned_hardware == "h200"
    acc = record.provenance.accelerator
    assert acc is not None and acc.kind == "cpu"
    assert record.metrics.completed == 4 and record.metrics.failed == 0
    assert " cpu " in outs[-1] and " h200 " in outs[-1]  # `results list`: hw, planned
