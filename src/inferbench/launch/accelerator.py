"""Detect the accelerator of this machine, where a run's engine runs (`env.json` keeps it).

NVIDIA GPUs through `nvidia-smi`, AMD GPUs through `amd-smi` (ROCm 6+) or `rocm-smi`, found on
PATH; a tool that is missing, fails or lists no GPU passes to the next. Without a GPU the
accelerator is the CPU, named by /proc/cpuinfo. A GPU's stored hardware name is the hardware
catalog key its model names (`NVIDIA H200` -> h200), else a slug of the model.
"""

from __future__ import annotations

import json
import platform
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inferbench.catalog.load import load_catalog
from inferbench.core.accelerator import CPU_HARDWARE, Accelerator
from inferbench.core.cpus import usable_cores
from inferbench.core.errors import InferbenchError

_TOOL_TIMEOUT_S = 20.0  # nvidia-smi may take seconds while the driver wakes the GPUs
CPUINFO = Path("/proc/cpuinfo")
_CPU_VENDORS = {"genuineintel": "intel", "authenticamd": "amd", "hygongenuine": "hygon"}


def _run(argv: list[str], path: str | None) -> str | None:
    """The tool's stdout when it is on PATH and exits 0, else None."""
    tool = shutil.which(argv[0], path=path)
    if tool is None:
        return None
    try:
        done = subprocess.run(
            [tool, *argv[1:]],
            capture_output=True,
            text=True,
            timeout=_TOOL_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _nvidia(path: str | None) -> list[str]:
    out = _run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], path)
    return [line.strip() for line in (out or "").splitlines() if line.strip()]


def _json(text: str | None) -> Any:
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def _amd_smi(path: str | None) -> list[str]:
    """`amd-smi static --asic --json`: a list (or, in early releases, a map) of GPUs, each
    with `asic.market_name`."""
    data = _json(_run(["amd-smi", "static", "--asic", "--json"], path))
    gpus = data.values() if isinstance(data, dict) else data if isinstance(data, list) else []
    names = []
    for gpu in gpus:
        asic = gpu.get("asic") if isinstance(gpu, dict) else None
        if isinstance(asic, dict) and str(asic.get("market_name") or "").strip():
            names.append(str(asic["market_name"]).strip())
    return names


def _rocm_smi(path: str | None) -> list[str]:
    """`rocm-smi --showproductname --json`: `{"card0": {"Card Series": ...}, ...}` (the key's
    case varies across releases)."""
    data = _json(_run(["rocm-smi", "--showproductname", "--json"], path))
    names = []
    for card, fields in (data or {}).items() if isinstance(data, dict) else ():
        if not str(card).lower().startswith("card") or not isinstance(fields, dict):
            continue
        by_key = {str(k).lower(): str(v).strip() for k, v in fields.items()}
        name = by_key.get("card series") or by_key.get("card model")
        if name:
            names.append(name)
    return names


_GPU_TOOLS: tuple[tuple[str, str, Callable[[str | None], list[str]]], ...] = (
    ("nvidia", "nvidia-smi", _nvidia),
    ("amd", "amd-smi", _amd_smi),
    ("amd", "rocm-smi", _rocm_smi),
)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "gpu"


def gpu_hardware(model: str) -> str:
    """The hardware catalog key a GPU model names (`NVIDIA H100 80GB HBM3` -> h100), longest
    key first (`NVIDIA GB200` is gb200, not b200); a GPU the catalog lacks: its slug."""
    try:
        keys = [k for k in load_catalog().gpus if k != CPU_HARDWARE]
    except InferbenchError:  # a broken user catalog file costs the key, not the run
        keys = []
    text = model.lower()
    for key in sorted(keys, key=len, reverse=True):
        if re.search(rf"(?<![a-z0-9]){re.escape(key.lower())}(?![a-z0-9])", text):
            return key
    return _slug(model)


def _cpuinfo(path: Path) -> dict[str, str]:
    """The first processor's fields of /proc/cpuinfo (lower-case names); {} when unreadable."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return {}
    fields: dict[str, str] = {}
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip().lower() not in fields:
            fields[name.strip().lower()] = value.strip()
    return fields


def cpu_accelerator(cpuinfo: Path = CPUINFO) -> Accelerator:
    """This machine's CPU: its model from /proc/cpuinfo (`model name` on x86, `Model` or
    `Hardware` on Arm), else what the platform says."""
    fields = _cpuinfo(cpuinfo)
    model = fields.get("model name") or fields.get("model") or fields.get("hardware")
    vendor = _CPU_VENDORS.get(fields.get("vendor_id", "").lower(), "")
    if not vendor:
        vendor = "arm" if fields.get("cpu implementer") else "unknown"
    source = str(cpuinfo)
    if not model:
        model, source = platform.processor() or platform.machine() or "unknown", "platform"
    return Accelerator(
        kind="cpu",
        vendor=vendor,
        model=model,
        count=usable_cores(),
        hardware=CPU_HARDWARE,
        source=source,
    )


def detect_accelerator(path: str | None = None, cpuinfo: Path = CPUINFO) -> Accelerator:
    """The GPUs the first answering tool lists (`path`: the PATH to look on, this process's
    by default), else the CPU. Several GPU models on one machine: the first one's name, the
    count of all."""
    for vendor, tool, names_of in _GPU_TOOLS:
        names = names_of(path)
        if names:
            return Accelerator(
                kind="gpu",
                vendor=vendor,
                model=names[0],
                count=len(names),
                hardware=gpu_hardware(names[0]),
                source=tool,
            )
    return cpu_accelerator(cpuinfo)
