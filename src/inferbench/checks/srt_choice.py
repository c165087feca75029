"""Which srt-slurm tree judges a master entry's recipe: the one its launcher clones.

The launcher serving the entry's runner says which repository and ref the job clones
(`launcher_srt_ref`); `--srt-slurm` sources (`srt_slurm_refs`) may hold that ref. A recipe
is judged by that tree's schema, and a recipe missing from the InferenceX tree is read
from that tree's `recipes/`. When the ref is not at hand, a plain checkout given stands in
(as a single checkout always did); with git sources only, the recipe is not judged by a
schema at all; with no source, by the schema bundled with inferbench. Every pair judged
other than at its ref is counted in IB002 with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from inferbench.checks.subjects import Target
from inferbench.config.launcher_srt_ref import CloneUnknown, SrtClone, job_variables
from inferbench.config.master import MasterConfig, MultiNodeSearchSpace, SearchSpacePoint
from inferbench.config.srt_slurm_refs import (
    UPSTREAM_REPOSITORY,
    SrtSlurmSources,
    SrtTree,
    repository_name,
)
from inferbench.config.srtctl_schema import SrtctlSchema, srtctl_schema


@dataclass(frozen=True)
class SrtChoice:
    """The srt-slurm tree a reference is judged with, and how that relates to its job."""

    clone: SrtClone | CloneUnknown | None  # None: no launcher of the runner clones srt-slurm
    tree: SrtTree | None  # the tree upstream recipes are read from (None: none)
    schema: SrtctlSchema | None  # what judges the recipe (None: not judged by a schema)
    at_ref: bool  # judged at the ref the job clones

    @property
    def instead(self) -> str:
        """How a pair not judged at its ref was judged (IB002)."""
        if self.tree is not None and self.tree.ref is None:
            return f"judged with the checkout {self.tree.label} given, whose ref is unknown"
        if self.schema is None:
            return "not given; its recipe was not checked against a schema"
        return f"judged with the srtctl {self.schema.version} schema bundled with inferbench"

    @property
    def wanted(self) -> str:
        if isinstance(self.clone, SrtClone):
            return self.clone.label
        if isinstance(self.clone, CloneUnknown):
            return f"unknown: {self.clone.reason}"
        return "unknown: no launcher of the runner clones srt-slurm"


def choose(
    sources: SrtSlurmSources | None,
    target: Target,
    config: MasterConfig,
    point: SearchSpacePoint,
    space: MultiNodeSearchSpace,
    recipe_text: str | None,
) -> SrtChoice:
    """The tree for one CONFIG_FILE reference of `config` (`recipe_text`: the recipe file in
    the tree, which may switch the launcher's power lane)."""
    clone = _clone(target, config, point, space, recipe_text)
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
    return SrtChoice(clone, None, None, False)


def _clone(
    target: Target,
    config: MasterConfig,
    point: SearchSpacePoint,
    space: MultiNodeSearchSpace,
    recipe_text: str | None,
) -> SrtClone | CloneUnknown | None:
    entry = config.entry
    variables = job_variables(
        framework=entry.framework,
        model_prefix=entry.model_prefix,
        precision=entry.precision,
        model=entry.model,
        scenario=point.scenario,
        spec_decoding=space.spec_decoding,
        config_file=str(space.config_file),
        recipe_text=recipe_text,
    )
    found = {
        table.cluster: table.srt_clones.resolve(variables)
        for table in target.launchers
        if table.srt_clones is not None
    }
    if not found:
        return _catalog_clone(target)
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


def _catalog_clone(target: Target) -> SrtClone | CloneUnknown | None:
    """A cluster catalog's `srt-slurm: {ref, repo}` (one per cluster file)."""
    labels = {}
    for cluster in target.clusters:
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
