"""The srt-slurm tree a multinode job runs: the ref its launcher clones, from the sources
`--srt-slurm` gives. One reader for `check`, `plan` and `run`.

The launchers serving the job's runner say which repository and ref the job clones
(`launcher_srt_ref`, evaluated on the job's variables); a cluster catalog without such a
launcher pins one (`srt-slurm: {ref, repo}`). The sources (`srt_slurm_refs`) may hold that
ref: its tree judges the recipe (its own srtctl schema) and gives a recipe missing from the
benchmark tree. When no source holds it, a copy of unknown ref given alone stands in (as a
single checkout always did); otherwise no tree does, and `SrtChoice.instead` says so. With no
source at all, the schema bundled with inferbench judges.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from inferbench.config.cluster_import import import_cluster
from inferbench.config.launcher import LauncherTable
from inferbench.config.launcher_srt_ref import CloneUnknown, SrtClone
from inferbench.config.srt_slurm_refs import (
    UPSTREAM_REPOSITORY,
    SrtSlurmSources,
    SrtTree,
    repository_name,
)
from inferbench.config.srtctl_schema import SrtctlSchema, srtctl_schema
from inferbench.core.errors import InferbenchError

if TYPE_CHECKING:
    from inferbench.config.cluster import Cluster, ClusterFile
    from inferbench.config.project import Project


@dataclass(frozen=True)
class SrtChoice:
    """The srt-slurm tree a job's recipe is read and judged with, and how that relates to
    the ref the job clones."""

    clone: SrtClone | CloneUnknown | None  # None: no launcher of the runner clones srt-slurm
    tree: SrtTree | None  # the tree upstream recipes are read from (None: none)
    schema: SrtctlSchema | None  # what judges the recipe (None: not judged by a schema)
    at_ref: bool  # the tree is the ref the job clones
    unnamed: tuple[str, ...] = field(default=(), compare=False)  # copies of unknown ref unused

    @property
    def instead(self) -> str:
        """How a job not at its ref was judged (IB002, a plan's warning)."""
        if self.tree is not None and self.tree.ref is None:
            return f"judged with the checkout {self.tree.label} given, whose ref is unknown"
        if self.schema is None:
            unused = ""
            if self.unnamed:
                shown = ", ".join(self.unnamed)
                unused = (
                    f" (the copy {shown}, whose ref is unknown, stands in for no ref beside "
                    f"other sources: give it as {self.unnamed[0]}@REF)"
                )
            return f"not given{unused}; its recipe was not checked against a schema"
        return f"judged with the srtctl {self.schema.version} schema bundled with inferbench"

    @property
    def wanted(self) -> str:
        if isinstance(self.clone, SrtClone):
            return self.clone.label
        if isinstance(self.clone, CloneUnknown):
            return f"unknown: {self.clone.reason}"
        return "unknown: no launcher of the runner clones srt-slurm"


def choose(sources: SrtSlurmSources | None, clone: SrtClone | CloneUnknown | None) -> SrtChoice:
    """The tree of the ref the job clones, if a source holds it; else `fallback`."""
    if sources is not None and isinstance(clone, SrtClone):
        tree = sources.at(clone.repository, clone.ref)
        if tree is not None:
            return SrtChoice(clone, tree, tree.schema, True)
    return fallback(sources, clone)


def fallback(
    sources: SrtSlurmSources | None, clone: SrtClone | CloneUnknown | None = None
) -> SrtChoice:
    """The tree for a recipe whose ref is not at hand (or that no job deploys)."""
    if sources is None:
        return SrtChoice(clone, None, srtctl_schema(), False)
    checkout = sources.checkout
    if checkout is not None:
        return SrtChoice(clone, checkout, checkout.schema, False)
    unnamed = tuple(t.root.name for t in sources.unnamed)
    return SrtChoice(clone, None, None, False, unnamed)


def job_clone(
    launchers: Sequence[LauncherTable],
    clusters: Sequence[ClusterFile],
    variables: Mapping[str, str],
) -> SrtClone | CloneUnknown | None:
    """The srt-slurm one job clones (`variables`: `launcher_srt_ref.job_variables`): what the
    launchers serving its runner clone for it, else what its catalog clusters pin."""
    found = {
        table.cluster: table.srt_clones.resolve(variables)
        for table in launchers
        if table.srt_clones is not None
    }
    if not found:
        return _catalog_clone(clusters)
    clones = {c.label: c for c in found.values() if isinstance(c, SrtClone)}
    if len(clones) == len(found) and len(clones) == 1:
        return next(iter(clones.values()))
    if len(found) == 1:
        return next(iter(found.values()))
    return CloneUnknown(
        "the runner is served by launchers that clone different refs: "
        + ", ".join(
            f"{name}: {getattr(c, 'label', 'unknown')}" for name, c in sorted(found.items())
        )
    )


def _catalog_clone(clusters: Sequence[ClusterFile]) -> SrtClone | CloneUnknown | None:
    """A cluster catalog's `srt-slurm: {ref, repo}` (one per cluster file)."""
    labels = {}
    for cluster in clusters:
        pinned = cluster.cluster.srt_slurm
        if pinned is not None:
            repository = UPSTREAM_REPOSITORY
            if pinned.repo:  # a URL or owner/name
                repository = repository_name(pinned.repo) or pinned.repo
            clone = SrtClone(repository, pinned.ref, 0)
            labels[clone.label] = clone
    if not labels:
        return None
    if len(labels) == 1:
        return next(iter(labels.values()))
    return CloneUnknown("the runner's clusters pin different refs: " + ", ".join(sorted(labels)))


class RunnerLaunchers:
    """Which launchers of a tree serve each runner label: the labels `clusters import` reads
    for each launcher (from runners.yaml), else the launcher's own cluster name; read once."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self._labels: dict[str, tuple[str, ...]] | None = None
        self._imported: dict[str, Cluster] = {}

    def serving(self, runner: str) -> tuple[LauncherTable, ...]:
        """The launchers that run jobs of `runner`."""
        labels = self._read_labels()
        tables = tuple(
            t for name, t in self.project.launchers.items() if runner in labels.get(name, ())
        )
        if not tables:
            # the workflow runs runners/launch_<machine name before '_'>.sh: a label that
            # is a launcher's own cluster name is served by that launcher
            tables = tuple(t for t in self.project.launchers.values() if t.cluster == runner)
        return tables

    def imported(self, tables: Sequence[LauncherTable]) -> tuple[Cluster, ...]:
        """The cluster files `clusters import` writes for these launchers (those it can)."""
        self._read_labels()
        return tuple(
            self._imported[name]
            for name, t in self.project.launchers.items()
            if t in tables and name in self._imported
        )

    def clone_of(self, runner: str, variables: Mapping[str, str]) -> SrtClone | CloneUnknown | None:
        """The srt-slurm a job of `runner` with these variables clones: the launchers
        serving it decide, even beside a catalog (a cluster file pins one ref; a launcher
        picks one per job); a catalog's pin where no launcher serves the runner."""
        clusters = self.project.clusters_for_runner(runner)
        launchers = self.serving(runner) if self.project.launchers else ()
        return job_clone(launchers, clusters, variables)

    def _read_labels(self) -> dict[str, tuple[str, ...]]:
        if self._labels is None:
            labels: dict[str, tuple[str, ...]] = {}
            project = self.project
            for name, table in project.launchers.items():
                try:
                    cluster = import_cluster(
                        table, runners=project.runners, masters=project.masters, render=False
                    ).cluster
                except (InferbenchError, ValueError):  # an odd launcher serves only its own
                    labels[name] = (f"cluster:{table.cluster}",)
                    continue
                self._imported[name] = cluster
                labels[name] = (*cluster.runners, f"cluster:{table.cluster}")
            self._labels = labels
        return self._labels
