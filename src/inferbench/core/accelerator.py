"""The accelerator a run's engine ran on, as `env.json` records it and a stored point keeps.

Detected where the engine runs (`inferbench.launch.accelerator`): NVIDIA or AMD GPUs through
their tools, else the CPU. `hardware` is the name a point measured on it is stored under
(a hardware catalog key such as `h200` or `mi300x`, `cpu` for a CPU), so a point measured on
other hardware than its entry names never joins that entry's hardware series.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from inferbench.core.model import FrozenModel

CPU_HARDWARE = "cpu"


class Accelerator(FrozenModel):
    """What the engine ran on: `count` GPUs of `model`, or a CPU of `model` (`count` cores)."""

    kind: Literal["gpu", "cpu"]
    vendor: str  # nvidia, amd, or the CPU's vendor (intel, amd, arm, ...; unknown if unsaid)
    model: str  # as the tool names it: "NVIDIA H200", "AMD Instinct MI300X", a CPU model
    count: int = Field(ge=1)
    hardware: str = Field(min_length=1)  # the stored hardware name (catalog key, or `cpu`)
    source: str  # what said so: nvidia-smi, amd-smi, rocm-smi, /proc/cpuinfo, platform

    def describe(self) -> str:
        """`8x NVIDIA H200`, or `CPU AMD EPYC 7B13 (2 cores)`."""
        if self.kind == "gpu":
            return f"{self.count}x {self.model}"
        return f"CPU {self.model} ({self.count} core{'s' if self.count > 1 else ''})"
