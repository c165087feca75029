"""The cluster catalog: `clusters/<name>.yaml`, one file per cluster.

It replaces the bash if/elif routing of `runners/launch_<cluster>.sh`: which runner
labels a cluster serves, its GPUs, its scheduler defaults, the srt-slurm version
it runs, where each model's weights are staged and under which `model_paths`
alias, and its container aliases. `Cluster.srtslurm_config()` renders the
srtslurm.yaml that srtctl reads on that cluster.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from inferbench.config.base import FrozenModel, RuleViolation
from inferbench.config.srtslurm import SbatchValue, SrtslurmConfig
from inferbench.config.validate import validate_doc
from inferbench.config.yamlio import KeyPath, PositionedDoc, load_yaml
from inferbench.core.errors import ConfigError, Location


class Scheduler(FrozenModel):
    type: Literal["slurm", "local"]
    account: str | None = None
    partition: str | None = None
    time_limit: str | None = Field(default=None, alias="time-limit")
    network_interface: str | None = Field(default=None, alias="network-interface")
    sbatch_directives: dict[str, SbatchValue] = Field(
        default_factory=dict, alias="sbatch-directives"
    )
    mounts: dict[str, str] = Field(default_factory=dict)
    container_runtime: Literal["pyxis", "enroot", "none"] = Field(
        default="none", alias="container-runtime"
    )
    use_exclusive_sbatch_directive: bool | None = Field(
        default=None, alias="use-exclusive-sbatch-directive"
    )
    # srtctl asks for `--gpus-per-node` and `--segment` unless told not to (a cluster
    # without GPU gres, or one rack, as launch_gb200-nv.sh says for watchtower)
    use_gpus_per_node_directive: bool | None = Field(
        default=None, alias="use-gpus-per-node-directive"
    )
    use_segment_sbatch_directive: bool | None = Field(
        default=None, alias="use-segment-sbatch-directive"
    )

    @model_validator(mode="after")
    def _one_mount_each(self) -> Scheduler:
        # pyxis reads --container-mounts as `src:dst[:flags],...`: a comma in a path starts
        # another mount (`/data,/etc:/host-etc` mounts the host's /etc), a colon in the host
        # path another field; quoting cannot keep either inside one mount
        for host, inside in self.mounts.items():
            if "," in host or "," in inside or ":" in host:
                raise RuleViolation(
                    f"mount {host!r}: {inside!r} has a ',' (or a ':' in the host path), which"
                    " pyxis reads as another mount",
                    at=("mounts", host),
                    hint="rename the folder, or mount a parent folder whose path has neither",
                )
        return self

    @model_validator(mode="after")
    def _slurm_only_fields(self) -> Scheduler:
        if self.type == "local":
            for name in ("account", "partition", "time_limit"):
                if getattr(self, name) is not None:
                    key = name.replace("_", "-")
                    raise RuleViolation(f"{key} is Slurm only", at=(key,))
        return self


class SrtSlurmVersion(FrozenModel):
    ref: str = Field(min_length=1)  # a git ref (tag, branch or commit) of NVIDIA/srt-slurm
    repo: str | None = None


class ModelStoreEntry(FrozenModel):
    """Where one model's weights are staged on the cluster, and their srtslurm alias."""

    model: str = Field(min_length=1)  # Hugging Face id
    model_prefix: str = Field(alias="model-prefix", min_length=1)
    precision: str = Field(min_length=1)
    path: str = Field(min_length=1)
    alias: str | None = Field(default=None, min_length=1)
    # more model_paths keys the launcher's srtslurm.yaml writes for these weights when a job
    # uses them (`"${MODEL_PREFIX}": "${MODEL_PATH}"`, a branch's MODEL_PATHS_EXTRA): per job,
    # so two entries may share one for different weights
    aliases: tuple[str, ...] = ()
    framework: str | None = None  # only when the launcher routed by framework too

    @property
    def all_aliases(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(a for a in (self.alias, *self.aliases) if a is not None))

    def matches(self, model_prefix: str, precision: str, framework: str | None = None) -> bool:
        if (self.model_prefix, self.precision) != (model_prefix, precision):
            return False
        return self.framework is None or framework is None or self.framework == framework


def _routed_by_model(a: ModelStoreEntry, b: ModelStoreEntry) -> bool:
    """Two models of one model-prefix/precision route (a launcher branching on $MODEL)."""
    return (a.model_prefix, a.precision) == (b.model_prefix, b.precision) and a.model != b.model


class Cluster(FrozenModel):
    name: str = Field(min_length=1)
    runners: tuple[str, ...] = Field(min_length=1)
    gpu: str = Field(min_length=1)
    gpus_per_node: int = Field(alias="gpus-per-node", ge=1)
    scheduler: Scheduler
    srt_slurm: SrtSlurmVersion | None = Field(default=None, alias="srt-slurm")
    models: tuple[ModelStoreEntry, ...] = ()
    containers: dict[str, str] = Field(default_factory=dict)
    # container names srtslurm.yaml maps to the job's own image (the launchers'
    # `dynamo-sglang: "${SQUASH_FILE}"`, the squash file made from $IMAGE)
    image_aliases: tuple[str, ...] = Field(default=(), alias="image-aliases")

    @model_validator(mode="after")
    def _unique_entries(self) -> Cluster:
        # a launcher may route one model-prefix/precision by the job's model too
        # (launch_b200-dgxc.sh stages Qwen3.5 NVFP4 and NVFP4-V2): one entry per model
        seen: dict[tuple[str, str, str | None, str], int] = {}
        aliases: dict[str, list[int]] = {}
        for i, entry in enumerate(self.models):
            key = (entry.model_prefix, entry.precision, entry.framework, entry.model)
            if key in seen:
                raise RuleViolation(
                    f"models[{seen[key]}] already covers {entry.model_prefix}/{entry.precision}",
                    at=("models", i),
                )
            seen[key] = i
            if entry.alias is None:
                continue
            # launchers write srtslurm.yaml per job: one alias may name other weights for
            # another framework, or for another model of one route; never else
            same = aliases.setdefault(f"{entry.alias}\0{entry.framework}", [])
            for first in (self.models[other] for other in same):
                if first.path != entry.path and not _routed_by_model(first, entry):
                    raise RuleViolation(
                        f"alias {entry.alias!r} points at two paths ({first.path}, {entry.path})",
                        at=("models", i, "alias"),
                    )
            same.append(i)
        return self

    def serves(self, runner_label: str) -> bool:
        """A label it lists, `cluster:<name>`, or its name: the workflows pick the launcher
        `launch_<name>.sh` from the runner machine's name (`gb300-nv_0`), so a label that
        is the cluster's name (InferenceX's `runner: gb300-nv`) names its machines, and a
        machine name (`gb300-nv_0`, a `--runner-node-filter` job's runner) its launcher's."""
        if runner_label in self.runners or runner_label in (self.name, f"cluster:{self.name}"):
            return True
        machine, sep, _ = runner_label.partition("_")  # the workflow's ${RUNNER_NAME%%_*}
        return bool(sep) and machine == self.name

    def model_entry(
        self,
        model_prefix: str,
        precision: str,
        framework: str | None = None,
        model: str | None = None,
    ) -> ModelStoreEntry | None:
        """The staged weights for a (model-prefix, precision[, framework]); framework-specific
        entries win over generic ones, and with `model` (the job's), an entry of that model
        over one of another."""
        hits = [e for e in self.models if e.matches(model_prefix, precision, framework)]
        hits.sort(key=lambda e: (e.framework is None, model is not None and e.model != model))
        return hits[0] if hits else None

    def model_aliases(self, framework: str | None = None) -> dict[str, str]:
        """srtslurm `model_paths`: alias -> staged path (for `framework`: its own entries
        win over generic ones; None: every entry, the first of each alias)."""
        out: dict[str, str] = {}
        for e in sorted(self.models, key=lambda e: e.framework is None):
            if framework is not None and e.framework not in (None, framework):
                continue
            for alias in e.all_aliases:
                out.setdefault(alias, e.path)
        return out

    def has_alias(self, alias: str, framework: str | None = None) -> bool:
        return alias in self.model_aliases(framework)

    def srtslurm(self) -> SrtslurmConfig:
        """The srtslurm.yaml this cluster's srtctl should read, as a validated model."""
        sched = self.scheduler
        return SrtslurmConfig(
            default_account=sched.account,
            default_partition=sched.partition,
            default_time_limit=sched.time_limit,
            gpus_per_node=self.gpus_per_node,
            network_interface=sched.network_interface,
            use_exclusive_sbatch_directive=sched.use_exclusive_sbatch_directive,
            use_gpus_per_node_directive=sched.use_gpus_per_node_directive,
            use_segment_sbatch_directive=sched.use_segment_sbatch_directive,
            default_sbatch_directives=dict(sched.sbatch_directives) or None,
            default_mounts=dict(sched.mounts) or None,
            model_paths=self.model_aliases(),
            containers=dict(self.containers),
        )

    def srtslurm_config(self) -> dict[str, Any]:
        """The srtslurm.yaml mapping (model_paths, containers, defaults) to write."""
        return self.srtslurm().as_yaml_dict()


@dataclass(frozen=True)
class ClusterFile:
    """A cluster with where it was read from."""

    cluster: Cluster
    doc: PositionedDoc

    @property
    def file(self) -> Path:
        return self.doc.file

    def locate(self, path: KeyPath = ()) -> Location:
        return self.doc.locate(path)


def load_cluster(path: Path) -> ClusterFile:
    doc = load_yaml(path)
    if not isinstance(doc.data, dict):
        raise ConfigError(
            "a cluster file must be a mapping",
            location=doc.locate(),
            hint="start with `name:`, `runners:`, `gpu:` and `scheduler:` keys",
        )
    cluster = validate_doc(doc, Cluster)
    if cluster.name != path.stem:
        raise ConfigError(
            f"cluster name {cluster.name!r} differs from its file name {path.name!r}",
            location=doc.locate(("name",)),
            hint=f"rename the file to {cluster.name}.yaml or set name: {path.stem}",
        )
    entry = ClusterFile(cluster=cluster, doc=doc)
    refuse_control(entry)
    return entry


# C0 and C1 controls and the Unicode line/paragraph separators: YAML reads NEL (U+0085),
# U+2028 and U+2029 as line breaks too, so srtctl would get another value than written.
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
ONE_LINE_HINT = "write the value on one line, without control characters"
# The parts of a cluster file that reach sbatch scripts (ours and srtctl's) and srtslurm.yaml.
_RENDERED = ("scheduler", "models", "containers")


def _strings(data: Any, path: KeyPath = ()) -> Iterator[tuple[KeyPath, str]]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield (*path, key), str(key)
            yield from _strings(value, (*path, key))
    elif isinstance(data, list | tuple):
        for i, value in enumerate(data):
            yield from _strings(value, (*path, i))
    elif isinstance(data, str):
        yield path, data


def refuse_control(entry: ClusterFile) -> None:
    """Refuse a cluster whose rendered values (scheduler, models, containers) carry a control
    character: ConfigError at the file, line and key. Checked where the file is loaded, so
    that `check` and `sweep` refuse what `plan` and `run` would (a `#SBATCH` line ends at a
    line break: the rest would run as a command of the script)."""
    data = entry.cluster.model_dump(mode="json", by_alias=True, include=set(_RENDERED))
    for path, text in _strings(data):
        if CONTROL.search(text):
            raise ConfigError(
                f"cluster {entry.cluster.name}: {text!r} contains a line break or control "
                "character (it would reach an sbatch script as a line of its own)",
                location=entry.doc.locate_value(path),
                hint=ONE_LINE_HINT,
            )
