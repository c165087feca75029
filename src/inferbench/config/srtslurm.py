"""`srtslurm.yaml`, the cluster file srtctl reads.

Its keys are exact: srtctl ignores the whole file (aliases and defaults) when it
meets an unknown key, so an unknown key here is an error, never a warning.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from inferbench.config.base import FrozenModel
from inferbench.config.validate import validate_doc
from inferbench.config.yamlio import load_yaml

SbatchValue = str | int | float | bool | None


class SrtslurmConfig(FrozenModel):
    default_account: str | None = None
    default_partition: str | None = None
    default_time_limit: str | None = None
    gpus_per_node: int | None = Field(default=None, ge=1)
    network_interface: str | None = None
    use_gpus_per_node_directive: bool | None = None
    use_exclusive_sbatch_directive: bool | None = None
    use_segment_sbatch_directive: bool | None = None
    default_sbatch_directives: dict[str, SbatchValue] | None = None
    default_mounts: dict[str, str] | None = None
    srtctl_root: str | None = None
    output_dir: str | None = None
    model_paths: dict[str, str] = Field(default_factory=dict)
    containers: dict[str, str] = Field(default_factory=dict)

    def as_yaml_dict(self) -> dict[str, Any]:
        """The mapping to write as srtslurm.yaml (unset keys left out)."""
        data = self.model_dump(exclude_none=True)
        return {k: v for k, v in data.items() if v not in ({}, None)}


def load_srtslurm(path: Path) -> SrtslurmConfig:
    return validate_doc(load_yaml(path), SrtslurmConfig)
