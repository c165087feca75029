"""Accelerator detection: stand-in GPU tools on a PATH of their own (tmp dir), as the real
ones answer; a tool that fails passes to the next; no GPU -> the CPU of /proc/cpuinfo. And
the runner records what it finds in each job's env.json."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from inferbench.core.rundir import write_record
from inferbench.launch.accelerator import cpu_accelerator, detect_accelerator, gpu_hardware
from inferbench.launch.rundir import JobDir, environment_record, record_accelerator
from inferbench.launch.runner import RunRequest, execute_run

from .conftest import http_point, job_dict, server_plan

# what `amd-smi static --asic --json` (ROCm 6.2+) prints, trimmed to the fields read
AMD_SMI = [
    {"gpu": g, "asic": {"market_name": "AMD Instinct MI300X", "vendor_id": "0x1002"}}
    for g in range(8)
]
# `rocm-smi --showproductname --json`: the keys' case varies across releases
ROCM_SMI = {
    "card0": {"Card Series": "AMD Instinct MI355X", "Card Vendor": "Advanced Micro Devices"},
    "card1": {"Card series": "AMD Instinct MI355X", "Card Vendor": "Advanced Micro Devices"},
    "system": {"Driver version": "6.10.5"},
}
CPUINFO = """\
processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 7B13
processor\t: 1
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 7B13
"""


def tool(folder: Path, name: str, stdout: str = "", code: int = 0) -> Path:
    """A stand-in `name` on `folder` printing `stdout` and exiting `code`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.out").write_text(stdout)
    script = folder / name
    script.write_text(f"#!/bin/sh\ncat '{folder / f'{name}.out'}'\nexit {code}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return folder


def nvidia_smi(folder: Path, *names: str) -> Path:
    return tool(folder, "nvidia-smi", "".join(f"{n}\n" for n in names))


def test_nvidia_gpus_are_counted_and_named_by_the_catalog_key(tmp_path: Path) -> None:
    path = nvidia_smi(tmp_path / "bin", *["NVIDIA H200"] * 8)
    acc = detect_accelerator(str(path))
    assert (acc.kind, acc.vendor, acc.model, acc.count) == ("gpu", "nvidia", "NVIDIA H200", 8)
    assert (acc.hardware, acc.source) == ("h200", "nvidia-smi")
    assert acc.describe() == "8x NVIDIA H200"


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("NVIDIA H100 80GB HBM3", "h100"),
        ("NVIDIA GB200", "gb200"),  # not b200: the longest key that is a word of the name
        ("NVIDIA B200", "b200"),
        ("AMD Instinct MI300X OAM", "mi300x"),
        ("NVIDIA A10G", "nvidia-a10g"),  # not in the catalog: the model's slug
    ],
)
def test_gpu_models_map_to_catalog_keys(model: str, key: str) -> None:
    assert gpu_hardware(model) == key


def test_amd_smi_then_rocm_smi(tmp_path: Path) -> None:
    amd = tool(tmp_path / "amd", "amd-smi", json.dumps(AMD_SMI))
    acc = detect_accelerator(str(amd))
    assert (acc.vendor, acc.count, acc.hardware, acc.source) == ("amd", 8, "mi300x", "amd-smi")
    # amd-smi failing (an old ROCm without `static --asic`): rocm-smi answers
    both = tool(tmp_path / "both", "amd-smi", "unknown command", code=2)
    tool(both, "rocm-smi", json.dumps(ROCM_SMI))
    acc = detect_accelerator(str(both))
    assert (acc.model, acc.count, acc.hardware, acc.source) == (
        "AMD Instinct MI355X",
        2,
        "mi355x",
        "rocm-smi",
    )


def test_a_failing_gpu_tool_falls_back_to_the_cpu(tmp_path: Path) -> None:
    # nvidia-smi without a driver: "NVIDIA-SMI has failed ...", exit 9
    path = tool(tmp_path / "bin", "nvidia-smi", "NVIDIA-SMI has failed", code=9)
    tool(path, "rocm-smi", "not json")
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(CPUINFO)
    acc = detect_accelerator(str(path), cpuinfo=cpuinfo)
    assert (acc.kind, acc.vendor, acc.model, acc.hardware) == ("cpu", "amd", "AMD EPYC 7B13", "cpu")
    assert acc.source == str(cpuinfo) and acc.count >= 1


def test_without_cpuinfo_the_platform_names_the_cpu(tmp_path: Path) -> None:
    acc = cpu_accelerator(tmp_path / "missing")
    assert acc.kind == "cpu" and acc.source == "platform" and acc.model


def test_a_local_run_records_the_accelerator_in_env_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inferbench.launch.deployment import deployment_from_dicts
    from inferbench.launch.local import LocalExecutor, LocalOptions
    from inferbench.launch.plan import Backend

    stand_in = nvidia_smi(tmp_path / "gpu-bin", "NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3")
    monkeypatch.setenv("PATH", f"{stand_in}{os.pathsep}{os.environ.get('PATH', '')}")
    dep = deployment_from_dicts([job_dict(conc=1)])
    request = RunRequest(
        deployments=[dep],
        backend=Backend.LOCAL,
        engine=None,
        runs_dir=tmp_path / "runs",
        root=tmp_path,
        planner=lambda d, _: server_plan(concs=d.concurrencies, fp=d.fingerprint),
        executor=LocalExecutor(http_point, LocalOptions(health_timeout_s=10, stop_grace_s=2)),
    )
    summary = execute_run(request)
    assert summary.ok
    env = json.loads(summary.run.job(dep.fingerprint).env_json.read_text())
    assert env["accelerator"]["hardware"] == "h100" and env["accelerator"]["count"] == 2


def test_the_allocation_records_its_node_over_the_login_node(tmp_path: Path) -> None:
    job = JobDir(tmp_path / "job")
    job.path.mkdir()
    write_record(job.env_json, environment_record({"backend": "slurm"}))  # as the login node
    assert json.loads(job.env_json.read_text())["accelerator"] is None
    node = detect_accelerator(str(nvidia_smi(tmp_path / "bin", "NVIDIA B200")))
    record_accelerator(job, node)
    env = json.loads(job.env_json.read_text())
    assert env["accelerator"]["hardware"] == "b200" and env["backend"] == "slurm"
    assert "environment" in env
