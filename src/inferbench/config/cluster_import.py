"""Turn a launcher's routing table into a cluster catalog file (`inferbench clusters import`)."""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from inferbench.config.cluster import Cluster
from inferbench.config.launcher import LauncherRow, LauncherTable, UnreadableBranch, cluster_name
from inferbench.config.master import MasterConfig
from inferbench.config.runners import Runners
from inferbench.config.srt_slurm_refs import UPSTREAM_REPOSITORY
from inferbench.core.errors import ConfigError, InputError, Location
from inferbench.core.fsio import atomic_write_text

DEFAULT_GPUS_PER_NODE = 8


@dataclass(frozen=True)
class ImportResult:
    cluster: Cluster
    text: str  # the YAML to write
    unreadable: tuple[UnreadableBranch, ...]
    notes: tuple[str, ...]  # what was guessed or skipped


class WriteStatus(StrEnum):
    WRITTEN = "written"
    UNCHANGED = "unchanged"
    REFUSED = "refused"  # a different file exists and --force was not given


def _runner_labels(table: LauncherTable, runners: Runners | None) -> list[str]:
    """Labels whose runner machines use this launcher (`b200-dgxc_0` -> launch_b200-dgxc.sh)."""
    names = {cluster_name(Path(n)) for n in table.names} | {table.cluster}
    if runners is None:
        return []
    return [
        label
        for label, machines in runners.registry.labels.items()
        if any(m.rsplit("_", 1)[0] in names or m in names for m in machines)
    ]


def _model_id(
    row: LauncherRow,
    path: str,
    labels: list[str],
    masters: Mapping[str, MasterConfig],
) -> str | None:
    candidates = [
        m.entry
        for m in masters.values()
        if (m.entry.model_prefix, m.entry.precision) == (row.model_prefix, row.precision)
        and row.serves_model(m.entry.model)  # a branch on $MODEL: the models it takes
    ]
    # the cluster's own entries first; among them, the model whose repository name is the
    # folder the weights are staged in
    folder = PurePosixPath(path).name.lower()
    candidates.sort(
        key=lambda e: (e.runner not in labels, e.model.rsplit("/", 1)[-1].lower() != folder)
    )
    return candidates[0].model if candidates else None


def _models(
    table: LauncherTable, labels: list[str], masters: Mapping[str, MasterConfig], notes: list[str]
) -> list[dict[str, Any]]:
    models: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str | None, str | None, tuple[str, ...]]] = set()
    alias_paths: dict[tuple[str, str | None, str | None, tuple[str, ...]], tuple[str, int]] = {}
    for row in table.rows:
        where = f"{table.path.name}:{row.line}"
        # branches on the job's $MODEL are routes of their own (each job writes its own
        # srtslurm.yaml, so one alias may name other weights for another model)
        by_model = (row.model_match, row.model_excludes)
        key = (row.model_prefix, row.precision, row.framework, *by_model)
        if row.alias is not None and row.model_path is not None:
            first = alias_paths.setdefault(
                (row.alias, row.framework, *by_model), (row.model_path, row.line)
            )
            if first[0] != row.model_path:
                notes.append(
                    f"{where}: alias {row.alias!r} already names {first[0]} (line {first[1]}); "
                    f"this route to {row.model_path} is never the one srtctl reads; skipped"
                )
                continue
        if row.model_path is None:
            notes.append(f"{where}: sets no MODEL_PATH; skipped")
            continue
        if key in seen:
            notes.append(
                f"{where}: {row.model_prefix}/{row.precision} routed twice; kept the first"
            )
            continue
        seen.add(key)
        if row.model_path_default is not None:
            notes.append(
                f"{where}: MODEL_PATH is {row.model_path_default}; wrote its default "
                f"{row.model_path} (check the path staged on the cluster)"
            )
        model = _model_id(row, row.model_path, labels, masters)
        if model is None:
            model = row.alias or row.model_prefix
            if row.model_match is not None or row.model_excludes:  # a route of its own
                model = PurePosixPath(row.model_path).name
            notes.append(
                f"{where}: no master entry names {row.model_prefix}/{row.precision};"
                f" model set to {model!r}, check it"
            )
        entry: dict[str, Any] = {
            "model": model,
            "model-prefix": row.model_prefix,
            "precision": row.precision,
            "path": row.model_path,
        }
        if row.alias is not None:
            entry["alias"] = row.alias
        more = [a for a in table.aliases(row, row.model_prefix) if a and a != row.alias]
        if more:
            entry["aliases"] = sorted(more)
        if row.framework is not None:
            entry["framework"] = row.framework
        models.append(entry)
    return models


def import_cluster(
    table: LauncherTable,
    *,
    runners: Runners | None = None,
    masters: Mapping[str, MasterConfig] | None = None,
    render: bool = True,
) -> ImportResult:
    """The cluster file equivalent to `table` (what could be read of it); with `render`
    False its YAML `text` is left empty (`check` needs only the cluster)."""
    notes: list[str] = []
    labels = _runner_labels(table, runners)
    if not labels:
        labels = [f"cluster:{table.cluster}"]
        notes.append(f"no runners.yaml label uses {table.cluster}; serving cluster:{table.cluster}")
    gpu = table.cluster.split("-")[0]
    # runners.yaml keys hardware by runner label: this cluster's own label first.
    keys = [f"cluster:{table.cluster}", *labels, gpu]
    specs = [runners.registry.hardware_for(k) for k in keys] if runners is not None else []
    spec = next((s for s in specs if s is not None), None)
    if spec is None:
        notes.append(f"gpus-per-node of {gpu!r} unknown; assumed {DEFAULT_GPUS_PER_NODE}")
    scheduler: dict[str, Any] = {"type": "slurm" if table.uses_slurm else "local"}
    scheduler["container-runtime"] = "pyxis" if table.uses_pyxis else "none"
    data: dict[str, Any] = {
        "name": table.cluster,
        "runners": labels,
        "gpu": gpu,
        "gpus-per-node": spec.gpus_per_node if spec else DEFAULT_GPUS_PER_NODE,
        "scheduler": scheduler,
    }
    pinned = table.srt_slurm_ref  # only where every job clones the same one
    if pinned is not None:
        data["srt-slurm"] = {"ref": pinned.ref}
        if pinned.repository.lower() != UPSTREAM_REPOSITORY.lower():
            data["srt-slurm"]["repo"] = pinned.repository
    data["models"] = _models(table, labels, masters or {}, notes)
    data["containers"] = {}
    image_aliases = sorted(
        a for a in table.container_aliases if table.container_source(a) == "image"
    )
    if image_aliases:
        data["image-aliases"] = image_aliases
    try:
        cluster = Cluster.model_validate(data)
    except ValidationError as exc:  # a launcher shape this importer did not foresee
        error = exc.errors(include_url=False)[0]
        raise ConfigError(
            f"cannot build a cluster file from this launcher: {error['msg']}",
            location=Location(table.path),
            hint="write clusters/<name>.yaml by hand for this cluster",
        ) from None
    text = render_cluster_yaml(data, table) if render else ""
    return ImportResult(cluster, text, table.unreadable, tuple(notes))


def render_cluster_yaml(data: Mapping[str, Any], table: LauncherTable) -> str:
    from ruamel.yaml import YAML  # only `clusters import` writes YAML; `check` needs none

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    buffer = io.StringIO()
    yaml.dump(dict(data), buffer)
    header = (
        f"# Imported from {' / '.join(table.names)} by `inferbench clusters import`.\n"
        "# Review scheduler defaults (account, partition, time limit) before use.\n"
    )
    return header + buffer.getvalue()


def write_cluster_file(path: Path, text: str, *, force: bool = False) -> WriteStatus:
    """Write atomically; an identical file is left alone, a different one needs `force`."""
    if path.exists():
        current = path.read_text(encoding="utf-8")
        if current == text:
            return WriteStatus.UNCHANGED
        if not force:
            return WriteStatus.REFUSED
    atomic_write_text(path, text)
    return WriteStatus.WRITTEN


def select_tables(tables: Mapping[str, LauncherTable], names: Iterable[str]) -> list[LauncherTable]:
    """The tables for `names` (cluster names or launcher file names); all when empty. A name
    no launcher answers to is an InputError (naming the clusters there are)."""
    wanted = list(names)
    if not wanted:
        return list(tables.values())
    out = []
    found: set[str] = set()
    for table in tables.values():
        aliases = {table.cluster, *table.names, *(cluster_name(Path(n)) for n in table.names)}
        if aliases & set(wanted):
            out.append(table)
            found |= aliases
    unknown = [name for name in wanted if name not in found]
    if unknown:
        known = sorted({t.cluster for t in tables.values()})
        raise InputError(
            f"--cluster {unknown[0]!r}: no launcher for this cluster",
            hint="use one of: " + ", ".join(known),
        )
    return out
