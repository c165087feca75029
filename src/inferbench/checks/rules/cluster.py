"""Clusters: the recipe's model alias, GPUs and GPU type on the cluster that runs it, and the
cluster files against the runner registry."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from inferbench.checks.finding import Severity
from inferbench.checks.registry import Problem, rule
from inferbench.checks.subjects import ClusterSubject, DeploymentSubject
from inferbench.config.recipe import locate
from inferbench.core.errors import Location


def _not_an_alias(path: str) -> bool:
    """`hf:<id>` and absolute directories are used as they are, not looked up."""
    return path.startswith("hf:") or path.startswith("/")


@rule(
    "IB401",
    "model-alias-missing",
    Severity.ERROR,
    DeploymentSubject,
    "recipe model.path is a model_paths alias on every cluster that runs it",
    hint="name a model_paths alias the cluster (its srtslurm.yaml) defines, or add the alias there",
)
def model_alias_missing(d: DeploymentSubject) -> Iterator[Problem]:
    path = d.recipe.model.path
    if _not_an_alias(path):
        return
    entry = d.config.entry
    where = locate(d.recipe, ("model", "path"))
    for cf in d.target.clusters:
        if cf.cluster.has_alias(path, entry.framework):
            continue
        store = cf.cluster.model_entry(
            entry.model_prefix, entry.precision, entry.framework, entry.model
        )
        hint = (
            f"use model.path {store.alias!r} (the alias {cf.cluster.name} registers for "
            f"{entry.model_prefix} {entry.precision}, {cf.file.name}), or add the alias there"
            if store is not None and store.alias
            else f"add a models entry with alias {path!r} to {cf.file.name}"
        )
        yield Problem(
            f"model.path {path!r} is not a model_paths alias on cluster {cf.cluster.name} "
            f"(runner {entry.runner}); srtctl would stop in preflight",
            where,
            hint=hint,
        )
    for table in d.target.launchers:
        row = table.lookup(entry.model_prefix, entry.precision, entry.framework, entry.model)
        written = table.aliases(row, entry.model_prefix)
        if path in written:
            continue
        if path in table.assigned_aliases and table.alias_keys:
            continue  # set by a branch the routing table does not follow; cannot tell
        if row is None and table.unreadable:
            continue  # the route may be in a branch the reader could not follow
        alias = row.alias if row is not None else None
        line = row.alias_line or row.line if row is not None else None
        names = ", ".join(sorted(repr(a) for a in written if a)) or "none"
        yield Problem(
            f"model.path {path!r} is not an alias {table.path.name} writes for "
            f"{entry.model_prefix} {entry.precision} ({names})",
            where,
            hint=f"set model.path to {alias!r} or SRT_SLURM_MODEL_PREFIX at "
            f"{Location(Path(table.path.name), line)} to {path!r}"
            if alias
            else f"route {entry.model_prefix}/{entry.precision} in {table.path.name}",
        )


@rule(
    "IB402",
    "runner-without-cluster",
    Severity.WARNING,
    DeploymentSubject,
    "a cluster file (or launcher) serves the runner label, so alias and GPUs can be checked",
    hint="add the label to a clusters/<name>.yaml `runners:` list",
)
def runner_without_cluster(d: DeploymentSubject) -> Iterator[Problem]:
    if not d.target.known:
        yield Problem(
            f"no cluster serves runner {d.config.entry.runner!r}; model alias and GPUs per node "
            "of this recipe were not checked",
            d.config.locate(("runner",)),
        )


@rule(
    "IB403",
    "gpus-per-node-mismatch",
    Severity.ERROR,
    DeploymentSubject,
    "recipe gpus_per_node is at most the cluster's GPUs per node",
    hint="lower gpus_per_node to the cluster's GPUs per node",
)
def gpus_per_node_mismatch(d: DeploymentSubject) -> Iterator[Problem]:
    res = d.recipe.resources
    if "gpus_per_node" not in res.model_fields_set:
        return
    for cf in d.target.clusters:
        # fewer is a choice (a TP2 recipe using 2 of a node's 4 GPUs); more cannot run
        if res.gpus_per_node > cf.cluster.gpus_per_node:
            yield Problem(
                f"recipe gpus_per_node {res.gpus_per_node} differs from cluster "
                f"{cf.cluster.name} ({cf.cluster.gpus_per_node} per node)",
                locate(d.recipe, ("resources", "gpus_per_node")),
            )


@rule(
    "IB404",
    "gpu-type-mismatch",
    Severity.ERROR,
    DeploymentSubject,
    "recipe gpu_type is the GPU of the cluster that runs it",
    hint="set gpu_type to the GPU of the cluster that runs the recipe",
)
def gpu_type_mismatch(d: DeploymentSubject) -> Iterator[Problem]:
    gpu = d.recipe.resources.gpu_type
    for cf in d.target.clusters:
        if gpu.lower() != cf.cluster.gpu.lower():
            yield Problem(
                f"recipe gpu_type {gpu!r} but cluster {cf.cluster.name} has {cf.cluster.gpu!r}",
                locate(d.recipe, ("resources", "gpu_type")),
            )


@rule(
    "IB405",
    "model-alias-wrong-weights",
    Severity.ERROR,
    DeploymentSubject,
    "the cluster alias the recipe names holds the master entry's model",
    hint="point the alias at the master entry's weights, or use the alias that holds them",
)
def model_alias_wrong_weights(d: DeploymentSubject) -> Iterator[Problem]:
    path, model = d.recipe.model.path, d.config.entry.model
    for cluster in (*(cf.cluster for cf in d.target.clusters), *d.target.imported):
        stores = [s for s in cluster.models if s.alias == path]
        if any(s.model == model for s in stores):
            continue  # a route by model: this job's own
        for store in stores:
            yield Problem(
                f"alias {path!r} on cluster {cluster.name} holds {store.model!r}, but "
                f"{d.config.key} benchmarks {model!r}",
                locate(d.recipe, ("model", "path")),
            )


@rule(
    "IB411",
    "cluster-runner-label-unknown",
    Severity.ERROR,
    ClusterSubject,
    "every runner label a cluster serves exists in runners.yaml",
    hint="add the label to runners.yaml, or drop it from the cluster's runners",
)
def cluster_runner_label_unknown(subject: ClusterSubject) -> Iterator[Problem]:
    runners = subject.project.runners
    if runners is None:
        return
    for i, label in enumerate(subject.cluster.cluster.runners):
        if not label.startswith("cluster:") and not runners.registry.has_label(label):
            yield Problem(
                f"cluster {subject.cluster.cluster.name} serves {label!r}, which "
                f"{runners.file.name} does not define",
                subject.cluster.locate(("runners", i)),
                hint="add the label to runners.yaml or drop it here",
            )


@rule(
    "IB412",
    "cluster-hardware-mismatch",
    Severity.ERROR,
    ClusterSubject,
    "cluster gpus-per-node agrees with runners.yaml hardware for the labels it serves",
    hint="make the cluster's gpus-per-node match the runners.yaml hardware of its labels",
)
def cluster_hardware_mismatch(subject: ClusterSubject) -> Iterator[Problem]:
    runners, cluster = subject.project.runners, subject.cluster.cluster
    if runners is None:
        return
    for label in cluster.runners:
        spec = runners.registry.hardware_for(label)
        if spec is not None and spec.gpus_per_node != cluster.gpus_per_node:
            yield Problem(
                f"cluster {cluster.name} has {cluster.gpus_per_node} GPUs per node but "
                f"{runners.file.name} says {spec.gpus_per_node} for {label!r}",
                subject.cluster.locate(("gpus-per-node",)),
            )
            return
