"""The cluster an srtctl job runs on, and the srtslurm.yaml written for that one job.

Clusters come from the tree's catalog (`clusters/<name>.yaml`). A tree without one for the
job's runner (an InferenceX checkout as it is) gets the cluster its launcher describes,
read the way `inferbench clusters import` reads it, so a plan never needs a hand-written
catalog to start from; the plan's notes say where the cluster came from.

The srtslurm.yaml is the one the launchers write per job: the cluster's defaults, the
`model_paths` aliases that apply to the job's framework (a launcher may give one alias
different paths per framework), and a `containers` entry that resolves the recipe's
container name to the image the job runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inferbench.config.cluster import Cluster, ClusterFile
from inferbench.config.images import ImageRefError, enroot_image, same_image
from inferbench.core.errors import InferbenchError, InputError, Location
from inferbench.launch.deployment import Deployment
from inferbench.launch.shellsafe import check_cluster

if TYPE_CHECKING:
    from inferbench.config.project import Project


@dataclass(frozen=True)
class ClusterSource:
    """A cluster and where it was read from (for the plan's notes)."""

    cluster: Cluster
    origin: str
    file: ClusterFile | None = None  # a catalog file (not a launcher read as one)

    def checked(self) -> ClusterSource:
        """Itself, once its catalog values are known safe to reach srtctl's sbatch script."""
        if self.file is not None:
            check_cluster(self.file)
        return self


@dataclass(frozen=True)
class SrtctlCatalog:
    """The clusters srtctl jobs may target: the tree's catalog, then its launchers."""

    catalog: Mapping[str, ClusterSource]
    imported: Mapping[str, ClusterSource] = field(default_factory=dict)
    unreadable: Mapping[str, str] = field(default_factory=dict)  # launcher -> why not

    def named(self, name: str) -> ClusterSource:
        found = self.catalog.get(name) or self.imported.get(name)
        if found is None:
            known = sorted({*self.catalog, *self.imported})
            raise InputError(
                f"unknown cluster {name!r}",
                location=Location(key="--cluster"),
                hint=f"the cluster catalog defines: {', '.join(known) or 'none'}",
            )
        return found.checked()

    def serving(self, runner: str) -> ClusterSource:
        for pool in (self.catalog, self.imported):
            hits = [c for c in pool.values() if c.cluster.serves(runner)]
            if hits:
                return hits[0].checked()
        why = "; ".join(f"{name}: {reason}" for name, reason in sorted(self.unreadable.items()))
        raise InputError(
            f"no cluster serves runner {runner!r}",
            location=Location(key="runner"),
            hint="add a clusters/<name>.yaml listing it under runners, or pass --cluster"
            + (f" (launchers not read: {why})" if why else ""),
        )


def srtctl_catalog(project: Project) -> SrtctlCatalog:
    """The catalog of `project`, completed with the clusters its launchers describe."""
    from inferbench.config.cluster_import import import_cluster

    catalog = {
        name: ClusterSource(entry.cluster, _shown(project, entry.file), file=entry)
        for name, entry in project.clusters.items()
    }
    imported: dict[str, ClusterSource] = {}
    unreadable: dict[str, str] = {}
    for table in project.launchers.values():
        if table.cluster in catalog:
            continue
        try:
            result = import_cluster(table, runners=project.runners, masters=project.masters)
        except (InferbenchError, ValueError) as exc:  # pydantic's ValidationError included
            unreadable[table.path.name] = " ".join(str(exc).split())[:300]
            continue
        origin = f"{_shown(project, table.path)} (no clusters/{table.cluster}.yaml)"
        imported[table.cluster] = ClusterSource(result.cluster, origin)
    return SrtctlCatalog(catalog, imported, unreadable)


def _shown(project: Project, path: Path) -> str:
    try:
        return str(path.resolve().relative_to(project.root.resolve()))
    except (ValueError, AttributeError):
        return str(path)


def model_paths(cluster: Cluster, dep: Deployment) -> dict[str, str]:
    """srtslurm `model_paths` for the job: every alias that applies to its framework, the
    job's own model entry last so that its path wins where an alias is routed twice."""
    paths: dict[str, str] = {}
    for entry in cluster.models:
        if entry.framework in (None, dep.framework):
            for alias in entry.all_aliases:
                paths.setdefault(alias, entry.path)
    own = cluster.model_entry(dep.model_prefix, dep.precision, dep.framework, dep.model)
    if own is not None:
        paths.update(dict.fromkeys(own.all_aliases, own.path))
    return paths


def image_location(cluster: Cluster, image: str) -> str:
    """Where the cluster keeps `image`: its catalog entry for it, else the image itself in
    enroot's notation (`nvcr.io#nvidia/x:tag`), which pyxis pulls on first use."""
    for name, location in cluster.containers.items():
        if same_image(name, image):
            return location
    try:
        return enroot_image(image)
    except ImageRefError:
        return image


def is_container_alias(value: str) -> bool:
    """A name srtctl looks up in `containers:` rather than an image or a file: srtctl takes
    anything with a `:` that is not a path as an image reference."""
    return not value.startswith(("/", "./")) and ":" not in value


def srtslurm_for(
    source: ClusterSource,
    dep: Deployment,
    container: str,
    *,
    srtctl_root: str | None = None,
) -> dict[str, Any]:
    """The srtslurm.yaml mapping for one job whose recipe names `container`: the
    cluster's containers, and every name that stands for the job's image (the recipe's,
    the cluster's image aliases, the image itself) resolved to where the cluster has it."""
    cluster = source.cluster
    config = cluster.srtslurm()
    containers = dict(config.containers)
    location = image_location(cluster, dep.image)
    for name in sorted({container, *cluster.image_aliases, dep.image} - {"", location}):
        containers[name] = location
    update: dict[str, Any] = {"model_paths": model_paths(cluster, dep), "containers": containers}
    if srtctl_root is not None:
        update["srtctl_root"] = srtctl_root
    return config.model_copy(update=update).as_yaml_dict()
