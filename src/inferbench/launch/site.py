"""What the Slurm backends need to know about a cluster, derived from the cluster catalog.

`SlurmSite` is the launch stage's view of `inferbench.config.cluster.Cluster`: sbatch
directives, whether nodes have GPUs to request, and whether engines run in containers
(enroot/pyxis `srun --container-image`) or as bare processes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from inferbench.config.cluster import Cluster


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


def site_from_cluster(cluster: Cluster) -> SlurmSite:
    """The Slurm view of a catalog cluster."""
    sched = cluster.scheduler
    directives = tuple(
        f"--{k}" if v is None or v is True else f"--{k}={v}"
        for k, v in sched.sbatch_directives.items()
        if v is not False
    )
    if sched.use_exclusive_sbatch_directive:
        directives += ("--exclusive",)
    return SlurmSite(
        name=cluster.name,
        partition=sched.partition,
        account=sched.account,
        time_limit=sched.time_limit,
        gpus_per_node=cluster.gpus_per_node,
        container_runtime=None if sched.container_runtime == "none" else sched.container_runtime,
        container_mounts=tuple(f"{k}:{v}" for k, v in sched.mounts.items()),
        sbatch_directives=directives,
    )
