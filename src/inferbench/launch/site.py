"""What the Slurm backends need to know about a cluster, derived from the cluster catalog.

`SlurmSite` is the launch stage's view of `inferbench.config.cluster.Cluster`: sbatch
directives, whether nodes have GPUs to request, and whether engines run in containers
(enroot/pyxis `srun --container-image`) or as bare processes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SlurmSite:
    name: str = "local"
    partition: str | None = None
    account: str | None = None
    time_limit: str | None = None  # sbatch --time, e.g. "01:00:00"
    gpus_per_node: int = 0  # 0: request no GPUs (a CPU-only test cluster)
    container_runtime: str | None = None  # "pyxis" runs engines in containers
    container_mounts: tuple[str, ...] = ()  # "host:container" pairs for pyxis
    sbatch_directives: tuple[str, ...] = ()  # extra "--key=value" lines, as the catalog says
    python: str | None = None  # inferbench's interpreter on the compute nodes
    extra: dict[str, str] = field(default_factory=dict)


def _get(obj: Any, *names: str) -> Any:
    for name in names:
        value = getattr(obj, name, None)
        if value is not None:
            return value
    return None


def site_from_cluster(cluster: Any) -> SlurmSite:
    """Read the fields the launch stage uses from a catalog `Cluster` (duck-typed)."""
    mounts = _get(cluster, "default_mounts", "container_mounts") or {}
    if isinstance(mounts, dict):
        mounts = tuple(f"{k}:{v}" for k, v in mounts.items())
    directives = _get(cluster, "sbatch_directives", "default_sbatch_directives") or ()
    if isinstance(directives, dict):
        directives = tuple(
            f"--{k}={v}" if v not in (None, "") else f"--{k}" for k, v in directives.items()
        )
    runtime = _get(cluster, "container_runtime")
    if runtime is None and _get(cluster, "containers"):
        runtime = "pyxis"
    return SlurmSite(
        name=str(_get(cluster, "name") or "cluster"),
        partition=_get(cluster, "partition", "default_partition"),
        account=_get(cluster, "account", "default_account"),
        time_limit=_get(cluster, "time_limit", "default_time_limit"),
        gpus_per_node=int(_get(cluster, "gpus_per_node") or 0),
        container_runtime=str(runtime) if runtime else None,
        container_mounts=tuple(mounts),
        sbatch_directives=tuple(directives),
        python=_get(cluster, "python"),
    )
